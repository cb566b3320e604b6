/**
 * The example app's outbox, inbox index and relay as the simulator models them, written out once: fixtures of the
 * tests that run them against DynamoDB Local, and what the test reading the example's assembly expects to find.
 */
import type { ModelledResource, RelayModel, TableModel } from '../../../simulator/model/flow-model';

/** The settings of an outbox table (`OutboxTable`) as a table model, without its identity: pk/sk keys, no index, NEW_IMAGE stream, TTL on `expiresAt`. */
export const OUTBOX_TABLE_SETTINGS = {
  keySchema: [
    { AttributeName: 'pk', KeyType: 'HASH' },
    { AttributeName: 'sk', KeyType: 'RANGE' },
  ],
  attributeDefinitions: [
    { AttributeName: 'pk', AttributeType: 'S' },
    { AttributeName: 'sk', AttributeType: 'S' },
  ],
  globalSecondaryIndexes: [],
  localSecondaryIndexes: [],
  streamViewType: 'NEW_IMAGE',
  timeToLiveAttribute: 'expiresAt',
} as const satisfies Omit<TableModel, keyof ModelledResource>;

/** The `BlockedMessages` index of an inbox table (`InboxTable`), as its template declares it. */
export const BLOCKED_MESSAGES_INDEX = {
  IndexName: 'BlockedMessages',
  KeySchema: [
    { AttributeName: 'blockedSubscriber', KeyType: 'HASH' },
    { AttributeName: 'blockedAt', KeyType: 'RANGE' },
  ],
  Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['status', 'mode', 'activeStep', 'version', 'blockedReason', 'subscriber', 'eventId', 'eventType'] },
} as const;

/** The settings of the example's relay (`OrdersRelay`) as a relay model, without its identity, source, target and dead-letter queue. */
export const OUTBOX_RELAY_SETTINGS = {
  batchSize: 10,
  startingPosition: 'TRIM_HORIZON',
  maximumRetryAttempts: 10,
  maximumRecordAgeSeconds: 3600,
  bisectOnFailure: true,
  filterPatterns: ['{"eventName":["INSERT"],"dynamodb":{"NewImage":{"iefRecordType":{"S":["OutboxEvent.v1"]}}}}'],
  inputTemplate: '<$.dynamodb.NewImage.iefEnvelope.S>',
} as const satisfies Omit<RelayModel, keyof ModelledResource | 'sourceTable' | 'targetTopic' | 'deadLetterQueue'>;

/** The example app's outbox table (IdempotentEventFlowExample/OrdersOutboxTable), as its template defines it. */
export const EXAMPLE_OUTBOX_TABLE: TableModel = { key: 'Example/OrdersOutboxTable', stackName: 'Example', logicalId: 'OrdersOutboxTable', ...OUTBOX_TABLE_SETTINGS };

/** The example app's pipe (IdempotentEventFlowExample/OrdersRelay), as its template defines it. */
export const EXAMPLE_RELAY: RelayModel = {
  key: 'Example/OrdersRelay',
  stackName: 'Example',
  logicalId: 'OrdersRelay',
  sourceTable: EXAMPLE_OUTBOX_TABLE.key,
  targetTopic: 'Example/OrdersEventTopic',
  deadLetterQueue: 'Example/OrdersRelayDeadLetterQueue',
  ...OUTBOX_RELAY_SETTINGS,
};
