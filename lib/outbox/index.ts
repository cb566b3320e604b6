export * from './outbox-table';
export * from './outbox-relay';
export * from './producer-function';
