/**
 * Review r12 (session 12) of `verify`: each test names a way verify said OK, or deleted what it must keep, while
 * something was wrong (findings in /work/runs/s12/r12.md). Against real parts: DynamoDB Local and the simulator's SQS
 * endpoint (the real SDK clients).
 */
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { ORDERED_OUTBOX_ITEM } from '../../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import type { DeployedFlow, DeployedSubscriber } from '../../../simulator/verify/deployed-flow';
import { readRunEvents, takenEvents } from '../../../simulator/verify/observe';
import { producerOutboxesUnchecked } from '../../../simulator/verify/producer-outboxes';
import { newRunId } from '../../../simulator/verify/run-ids';
import { createTable, uniqueTableName } from '../../support/dynamodb-client';
import { VerifyTestbed } from './verify-test-kit';

const bed = VerifyTestbed.start();
const { dynamoDb, documents } = bed;

/** OrderTracking, an ordered subscriber whose Operator output names the ordered relay's own outbox. */
function orderTracking(outboxTable: string): DeployedSubscriber {
  return {
    name: 'OrderTracking',
    stackName: 'App',
    environment: {},
    deployment: { format: 1, subscriberName: 'OrderTracking', processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 86400, inboxTable: 'TrackingInbox', outboxTable, queueUrl: 'unused', deadLetterQueueUrl: 'unused' },
  };
}

describe('R12-5: an OrderedRelay over its own OutboxTable', () => {
  test("its events are read from the outbox the ordered subscriber's Operator output names, and taken by that subscriber", async () => {
    const runId = newRunId(1_700_000_000_000, () => Buffer.from([5, 5, 5, 5]));
    const flowOutbox = uniqueTableName('r12-flow-outbox');
    const orderedOutbox = uniqueTableName('r12-ordered-outbox');
    for (const table of [flowOutbox, orderedOutbox]) await createTable(dynamoDb, table, { partitionKey: TABLE_SCHEMA.PARTITION_KEY, sortKey: TABLE_SCHEMA.SORT_KEY });
    // GIVEN the fulfilment producer committed an ordered event of the run to the ordered relay's own outbox
    const aggregate = `${runId}-order-00001`;
    const event = { specversion: '1.0', id: `order-packed-${aggregate}`, type: 'com.example.OrderPacked', source: 'test', partitionkey: aggregate, sequence: '00000000000000001', data: { orderId: aggregate } };
    await documents.send(
      new PutCommand({
        TableName: orderedOutbox,
        Item: { pk: `${OUTBOX_ITEM.KEY_PREFIX}${event.id}`, sk: `${OUTBOX_ITEM.KEY_PREFIX}${event.id}`, [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE, [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: JSON.stringify(event) },
      }),
    );
    const subscriber = orderTracking(orderedOutbox);
    const flow: DeployedFlow = { stackNames: ['App'], flows: [{ outboxTable: flowOutbox, topicArn: 'arn:aws:sns:us-east-1:111111111111:Events' }], resources: [], subscribers: [subscriber] };
    // WHEN verify reads the run's events
    const events = await readRunEvents(bed.clients(), flow, runId);
    // THEN the ordered event is one (before the fix only the flow's outbox was read: OrderTracking took 0, verdict OK)
    expect([...events.keys()]).toEqual([event.id]);
    expect([...takenEvents(subscriber, events)]).toEqual([event.id]);
  });

  test("a producer's outbox that no flow or found subscriber names is NOT PROVEN, naming the producer and the table", () => {
    const flow = { flows: [{ outboxTable: 'FlowOutbox' }], subscribers: [orderTracking('OrderedOutbox')] };
    const lines = producerOutboxesUnchecked(flow, [
      { producer: 'Orders/PlaceOrder', functionName: 'App-PlaceOrder', outboxTable: 'FlowOutbox' },
      { producer: 'Orders/Fulfilment', functionName: 'App-Fulfilment', outboxTable: 'OrderedOutbox' },
      { producer: 'Orders/Returns', functionName: 'App-Returns', outboxTable: 'ReturnsOutbox' },
    ]);
    expect(lines).toEqual([expect.stringMatching(/^the producer Orders\/Returns \(App-Returns\) commits into outbox table ReturnsOutbox, /)]);
  });
});
