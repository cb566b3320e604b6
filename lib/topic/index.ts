export * from './event-topic';
