export * from './outbox-table';
export * from './outbox-relay';
