export * from './processing-mode';
export * from './consumer-queue';
export * from './inbox-table';
export * from './consumer-function';
export * from './subscriber';
export * from './subscriber-options';
