/**
 * Review r12b (session 12) of `verify --cleanup` (findings in /work/runs/s12/r12b.md): an aggregate-mode subscriber's
 * item was deleted with the run's items, though its processed message ids are that subscriber's only duplicate
 * detection (R12B-5); and the kept line counted sequence fences as inbox records that "expire by their TTL", though a
 * fence has none (R12B-8). Against DynamoDB Local (the real SDK clients).
 */
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { SEQUENCE_FENCE, sequenceFenceKey } from '../../../lambda/contract/ordered-wire-format';
import { AGGREGATE_ITEM, recordKey, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { cleanUpRun } from '../../../simulator/verify/cleanup';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { newRunId } from '../../../simulator/verify/run-ids';
import { KEPT_RECORD_EXPIRY } from '../../../simulator/verify/runtime-records';
import { createTable, uniqueTableName } from '../../support/dynamodb-client';
import { VerifyTestbed } from './verify-test-kit';

const bed = VerifyTestbed.start();
const { dynamoDb, documents } = bed;

describe('--cleanup and the records that make a late duplicate a no-op (review r12b)', () => {
  test("R12B-5: an aggregate-mode subscriber's item of the run is kept and named; R12B-8: a fence is said never to expire, an inbox record to expire by its TTL", async () => {
    const runId = newRunId(1_700_000_000_000, () => Buffer.from([7, 7, 7, 7]));
    const customer = `${runId}-customer-00001`;
    const older = `${runId}-customer-00002`;
    const order = `${runId}-order-00001`;
    const eventId = `order-placed-${order}`;
    const stats = uniqueTableName('r12b-stats');
    const inbox = uniqueTableName('r12b-inbox');
    for (const table of [stats, inbox]) await createTable(dynamoDb, table, { partitionKey: TABLE_SCHEMA.PARTITION_KEY });
    const put = (table: string, item: Record<string, unknown>) => documents.send(new PutCommand({ TableName: table, Item: item }));
    // GIVEN CustomerStats' aggregate item of the run's customer (the aggregate consumer's attributes), an item of an
    // older runtime (processed message ids, no subscriber named yet), a business item of the run without them, and
    // OrderTracking's inbox record and sequence fence in a table of the stacks
    await put(stats, { pk: `CUSTOMER#${customer}`, orders: 1, [AGGREGATE_ITEM.VERSION_ATTRIBUTE]: 1, [AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE]: 'CustomerStats', [AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE]: [`${eventId} 0123456789abcdef`] });
    await put(stats, { pk: `CUSTOMER#${older}`, orders: 1, [AGGREGATE_ITEM.VERSION_ATTRIBUTE]: 1, [AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE]: [`${eventId} 0123456789abcdef`] });
    await put(stats, { pk: `NOTE#${customer}`, text: 'a business item of the run' });
    await put(inbox, { pk: recordKey('OrderTracking', eventId), eventId, subscriber: 'OrderTracking', expiresAt: 1_800_000_000 });
    await put(inbox, { pk: sequenceFenceKey('OrderTracking', order), [SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE]: SEQUENCE_FENCE.RECORD_TYPE_VALUE, subscriber: 'OrderTracking', aggregateId: order, appliedSequence: 1 });
    const flow: DeployedFlow = {
      stackNames: ['App'],
      flows: [],
      resources: [stats, inbox].map((table) => ({ stackName: 'App', logicalId: table, type: 'AWS::DynamoDB::Table', physicalId: table })),
      subscribers: [],
    };

    // WHEN the run is cleaned up
    const lines = await cleanUpRun(bed.clients(), flow, runId, new Set([eventId]), new Set([customer, older, order]));

    // THEN the aggregate items stay (before the fix they were deleted: a late duplicate was applied again), the plain
    // business item goes, and each kept kind is said with whether it expires
    const exists = async (table: string, pk: string) => (await documents.send(new GetCommand({ TableName: table, Key: { pk }, ConsistentRead: true }))).Item !== undefined;
    expect(await exists(stats, `CUSTOMER#${customer}`)).toBe(true);
    expect(await exists(stats, `CUSTOMER#${older}`)).toBe(true);
    expect(await exists(stats, `NOTE#${customer}`)).toBe(false);
    expect(await exists(inbox, sequenceFenceKey('OrderTracking', order))).toBe(true);
    expect(lines).toContain(`1 item(s) of the run from table ${stats}`);
    expect(lines).toContain(
      `kept 2 runtime record(s) of the run in table ${stats} (CustomerStats, an aggregate-mode subscriber not named on its item): a late duplicate delivery of one of the run's events finds them and is not applied again; 2 aggregate item(s) ${KEPT_RECORD_EXPIRY['aggregate item']}`,
    );
    expect(lines).toContain(
      `kept 2 runtime record(s) of the run in table ${inbox} (OrderTracking): a late duplicate delivery of one of the run's events finds them and is not applied again; 1 inbox record(s) ${KEPT_RECORD_EXPIRY['inbox record']}; 1 sequence fence(s) ${KEPT_RECORD_EXPIRY['sequence fence']}`,
    );
    expect(KEPT_RECORD_EXPIRY['sequence fence']).toMatch(/^never expire/);
    expect(KEPT_RECORD_EXPIRY['aggregate item']).toMatch(/^never expire/);
  });
});
