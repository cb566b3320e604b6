/**
 * `idempotent-event-flow`: the AWS CDK constructs of the flow (outbox table, relay, topic, subscribers, producers and
 * their alarms). Re-exports only.
 *
 * @module idempotent-event-flow
 */
export * from './idempotent-event-flow';
export { EventFlowAttributes } from './imported-event-flow';
export * from './functions/function-options';
export * from './outbox';
export * from './topic';
export * from './consumer';
export * from './monitoring';
export * from './functions/bundled-function-base';
export * from './functions/bundled-function-props';
export * from './ordered';
