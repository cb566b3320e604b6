/**
 * Review r12 (session 12) of `verify`: each test names a way verify said OK, or deleted what it must keep, while
 * something was wrong (findings in /work/runs/s12/r12.md). Against real parts: DynamoDB Local and the simulator's SQS
 * endpoint (the real SDK clients).
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { ORDERED_OUTBOX_ITEM, SEQUENCE_FENCE, sequenceFenceKey } from '../../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM, PROCESSING_RECORD, recordKey, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { cleanUpRun } from '../../../simulator/verify/cleanup';
import { keptRecordsLine } from '../../../simulator/verify/runtime-records';
import type { DeployedFlow, DeployedSubscriber } from '../../../simulator/verify/deployed-flow';
import { readRunEvents, takenEvents } from '../../../simulator/verify/observe';
import { producerOutboxesUnchecked } from '../../../simulator/verify/producer-outboxes';
import { newRunId } from '../../../simulator/verify/run-ids';
import { verifyVerdict } from '../../../simulator/verify/verdict';
import { formatVerifyReport } from '../../../simulator/verify/verify-report';
import { cleanUpIfOk } from '../../../simulator/verify/verify-run';
import { verifyResult } from './verify-result-kit';
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

describe("R12-1: --cleanup and the records of a subscriber verify did not find", () => {
  test('its inbox record, processing record and sequence fence of the run are kept (recognised by their shape); a business item of the run in the same table goes', async () => {
    const runId = newRunId(1_700_000_000_000, () => Buffer.from([9, 9, 9, 9]));
    const aggregate = `${runId}-order-00001`;
    const eventId = `order-packed-${aggregate}`;
    const table = uniqueTableName('r12-shared');
    await createTable(dynamoDb, table, { partitionKey: TABLE_SCHEMA.PARTITION_KEY });
    const put = (item: Record<string, unknown>) => documents.send(new PutCommand({ TableName: table, Item: item }));
    // GIVEN a table of the stacks read holding OrderTracking's and Shipping's records of the run's event (neither is a
    // subscriber verify found: an Operator output of another version, or a shared inbox table of a stack not read)
    await put({ pk: recordKey('OrderTracking', eventId), eventId, subscriber: 'OrderTracking', processedAt: '2026-11-30T06:00:00.000Z' });
    await put({ pk: sequenceFenceKey('OrderTracking', aggregate), [SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE]: SEQUENCE_FENCE.RECORD_TYPE_VALUE, subscriber: 'OrderTracking', aggregateId: aggregate, appliedSequence: 1 });
    await put({ pk: recordKey('Shipping', eventId), eventId, subscriber: 'Shipping', [PROCESSING_RECORD.RECORD_TYPE_ATTRIBUTE]: PROCESSING_RECORD.RECORD_TYPE_VALUE, status: 'COMPLETED' });
    await put({ pk: `CUSTOMER#${aggregate}`, orders: 1 });
    const flow: DeployedFlow = { stackNames: ['App'], flows: [], resources: [{ stackName: 'App', logicalId: 'Shared', type: 'AWS::DynamoDB::Table', physicalId: table }], subscribers: [] };
    // WHEN the run is cleaned up
    const lines = await cleanUpRun(bed.clients(), flow, runId, new Set([eventId]), new Set([aggregate]));
    const exists = async (pk: string) => (await documents.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }))).Item !== undefined;
    // THEN the runtime's records stay (before the fix all three were deleted: a late duplicate would be applied again)
    expect(await exists(recordKey('OrderTracking', eventId))).toBe(true);
    expect(await exists(sequenceFenceKey('OrderTracking', aggregate))).toBe(true);
    expect(await exists(recordKey('Shipping', eventId))).toBe(true);
    expect(await exists(`CUSTOMER#${aggregate}`)).toBe(false);
    expect(lines).toEqual([
      `1 item(s) of the run from table ${table}`,
      keptRecordsLine(table, new Map([['inbox record', 1], ['processing record', 1], ['sequence fence', 1]]), ['OrderTracking', 'Shipping']),
    ]);
  });
});

describe('R12-6: --cleanup and the verdict', () => {
  const unapplied = { kind: 'unapplied-event', subscriber: 'Shipping', detail: 'events order-placed-v0-01020304-order-00001 were never applied: their messages left in its dead-letter queue' } as const;

  test('a VIOLATED or NOT PROVEN run is not cleaned up: its dead letters and outbox items are what the verdict points at, and it says so', async () => {
    for (const checked of [verifyResult({ violations: [unapplied] }), verifyResult({ unproven: ['Loyalty: not seen'] })]) {
      let cleaned = 0;
      const result = await cleanUpIfOk(checked, async () => ((cleaned += 1), ['2 dead letter(s) of the run\'s events from ShippingDlq']));
      // before the fix the cleanup ran whatever the verdict: the dead letters the violation names were deleted
      expect(cleaned).toBe(0);
      expect(result.cleanedUp).toBeUndefined();
      expect(result.cleanupSkipped).toMatch(new RegExp(`^kept everything of the run .*the verdict is ${verifyVerdict(checked).status}`));
      expect(formatVerifyReport(result)).toContain(`cleanup: ${result.cleanupSkipped!}`);
    }
  });

  test('an OK run is cleaned up; a cleanup that fails leaves the verdict, its exit and --json standing, and is said after it', async () => {
    expect((await cleanUpIfOk(verifyResult({}), async () => ['1 item(s) of the run from table Ledger'])).cleanedUp).toEqual(['1 item(s) of the run from table Ledger']);
    const denied = Object.assign(new Error('not authorized to perform: dynamodb:DeleteItem on Ledger'), { name: 'AccessDeniedException' });
    const result = await cleanUpIfOk(verifyResult({}), async () => {
      throw denied;
    });
    expect(verifyVerdict(result).status).toBe('OK');
    expect(result.cleanupFailed).toMatch(/^AccessDeniedException: not authorized to perform: dynamodb:DeleteItem on Ledger; part of the run's items/);
    const report = formatVerifyReport(result);
    expect(report.indexOf(`cleanup failed: ${result.cleanupFailed!}`)).toBeGreaterThan(report.indexOf('OK: '));
  });
});
