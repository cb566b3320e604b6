export * from './idempotent-event-flow';
export * from './functions/function-options';
export * from './outbox';
export * from './topic';
export * from './consumer';
export * from './monitoring';
export * from './functions/bundled-function-base';
