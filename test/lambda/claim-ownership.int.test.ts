/**
 * Defect 6 of issue 19: a delivery rejected as a duplicate (or as "in progress elsewhere") must never release or change
 * a claim it does not own, in any mode. Powertools shipped exactly that bug in 2026 (a rejected concurrent duplicate's
 * error path deleted the owner's in-progress record: aws-powertools/powertools-lambda-typescript#5675). Here each mode's
 * rejected copies arrive in every way a copy can fail (a live lease, a completed record, a throttled or lost request of
 * its own, its handler never reached), while the owner holds the claim; the owner's record must be byte-for-byte what
 * the owner left, and the owner must still complete. The model-based tests (test/lambda/model) check the same as an
 * invariant under generated interleavings ("never two effects of one event at once").
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAggregateConsumer } from '../../lambda/aggregate/aggregate-consumer';
import type { ConsumerConfig, LeaseConsumerConfig } from '../../lambda/config';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';
import { createLeaseConsumer } from '../../lambda/processing/lease-consumer';
import { createMultiStepConsumer } from '../../lambda/processing/multi-step-consumer';
import { localClient } from '../support/dynamodb-client';
import type { FaultProxy, FaultRule } from '../support/fault-proxy';
import { rawRecord } from '../support/proof/table-reads';
import { createInbox, createKeyedTable, createLeaseInbox } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';
import { RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';
import { deferred, FakeClock, newMessage } from './processing/fixtures';

const LEASE_SECONDS = 60;
const PUT = 'DynamoDB_20120810.PutItem';
const UPDATE = 'DynamoDB_20120810.UpdateItem';
const TRANSACT = 'DynamoDB_20120810.TransactWriteItems';

let client: DynamoDBClient;
let proxy: FaultProxy;
let leaseConfig: LeaseConsumerConfig;
let stepsConfig: LeaseConsumerConfig;
let inboxConfig: ConsumerConfig;
let businessTable: string;

beforeAll(async () => {
  ({ client, proxy } = await startTestbed());
  [leaseConfig, stepsConfig, inboxConfig, businessTable] = await Promise.all([
    createLeaseInbox(client, { subscriberName: 'owner-lease', deduplicationWindowSeconds: 3600, leaseDurationSeconds: LEASE_SECONDS, processingMode: 'lease' }),
    createLeaseInbox(client, { subscriberName: 'owner-steps', deduplicationWindowSeconds: 3600, leaseDurationSeconds: LEASE_SECONDS, processingMode: 'multi-step' }),
    createInbox(client, { subscriberName: 'owner-tx', deduplicationWindowSeconds: 3600 }),
    createKeyedTable(client, 'owner-business'),
  ]);
});
afterAll(() => proxy.stop());

/** How a rejected copy's own requests fail, if they do. */
type CopyFault = 'none' | 'throttled' | 'lost-response';
const copyFault = fc.constantFrom<CopyFault>('none', 'throttled', 'lost-response');

function inject(fault: CopyFault, target: string): void {
  const rules: Record<CopyFault, FaultRule[]> = {
    none: [],
    throttled: [{ target, fault: { kind: 'throttle' } }],
    'lost-response': [{ target, fault: { kind: 'drop-response' } }],
  };
  for (const rule of rules[fault]) proxy.inject(rule);
}

async function item(table: string, key: string): Promise<unknown> {
  return (await client.send(new GetItemCommand({ TableName: table, Key: { pk: { S: key } }, ConsistentRead: true }))).Item;
}

describe.each(['lease', 'multi-step'] as const)('%s mode: copies rejected while the owner holds the claim', (mode) => {
  test('property: whatever the copies and their faults, the owner\'s record is unchanged by them and the owner completes', async () => {
    const config = mode === 'lease' ? leaseConfig : stepsConfig;
    await fc.assert(
      fc.asyncProperty(fc.array(copyFault, { minLength: 1, maxLength: 4 }), async (faults) => {
        const message = newMessage();
        const clock = new FakeClock();
        const hold = deferred();
        const entered = deferred();
        let effects = 0;
        const effect = async () => {
          effects += 1;
          entered.resolve();
          await hold.promise;
        };
        const options = { client: localClient({ endpoint: proxy.endpoint }), config, deadLetter: new RecordingDeadLetterPublisher(), now: clock.now, metricsSink: () => undefined };
        const build = () =>
          mode === 'lease'
            ? createLeaseConsumer({ ...options, logger: recordingLogger().logger, handle: effect })
            : createMultiStepConsumer({ ...options, logger: recordingLogger().logger, steps: [{ name: 'only', run: effect }] });
        const owner = build()({ Records: [sqsRecord(message.body, { messageId: 'owner' })] });
        await entered.promise;
        const held = await rawRecord(client, config.inboxTableName, config.subscriberName, message.id);

        for (const [index, fault] of faults.entries()) {
          inject(fault, PUT);
          const response = await build()({ Records: [sqsRecord(message.body, { messageId: `copy-${index}`, receiveCount: 2 })] });
          expect(response.batchItemFailures).toEqual([{ itemIdentifier: `copy-${index}` }]); // in progress elsewhere: retried later
          expect(await rawRecord(client, config.inboxTableName, config.subscriberName, message.id)).toEqual(held);
        }
        hold.resolve();
        expect((await owner).batchItemFailures).toEqual([]);
        expect(effects).toBe(1);
        expect(await rawRecord(client, config.inboxTableName, config.subscriberName, message.id)).toMatchObject({ status: { S: 'COMPLETED' } });
      }),
      { numRuns: 8 },
    );
  });
});

describe('transactional and aggregate modes: a rejected duplicate changes nothing', () => {
  test('property: a duplicate, with or without faults of its own, leaves the inbox record and the business item as they were', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(copyFault, { minLength: 1, maxLength: 3 }), async (faults) => {
        const message = newMessage({ account: `acct-${crypto.randomUUID()}`, amount: 5 });
        const data = message.envelope.data as { account: string; amount: number };
        const handler = createTransactionalConsumer<{ account: string; amount: number }>({
          client: localClient({ endpoint: proxy.endpoint }),
          config: inboxConfig,
          logger: recordingLogger().logger,
          metricsSink: () => undefined,
          deadLetter: new RecordingDeadLetterPublisher(),
          handle: (envelope, tx) => tx.update({ TableName: businessTable, Key: { pk: envelope.data.account }, UpdateExpression: 'ADD balance :a', ExpressionAttributeValues: { ':a': envelope.data.amount } }),
        });
        await handler({ Records: [sqsRecord(message.body, { messageId: 'owner' })] });
        const inbox = await item(inboxConfig.inboxTableName, `${inboxConfig.subscriberName}#${message.id}`);
        const business = await item(businessTable, data.account);

        for (const [index, fault] of faults.entries()) {
          inject(fault, TRANSACT);
          await handler({ Records: [sqsRecord(message.body, { messageId: `copy-${index}`, receiveCount: 2 })] });
          expect(await item(inboxConfig.inboxTableName, `${inboxConfig.subscriberName}#${message.id}`)).toEqual(inbox);
          expect(await item(businessTable, data.account)).toEqual(business);
        }
      }),
      { numRuns: 6 },
    );
  });

  test('aggregate: a duplicate leaves the aggregate item as it was', async () => {
    const message = newMessage({ account: `agg-${crypto.randomUUID()}`, amount: 5 });
    const data = message.envelope.data as { account: string; amount: number };
    const handler = createAggregateConsumer<{ account: string; amount: number }, { balance: number }>({
      client: localClient({ endpoint: proxy.endpoint }),
      config: { subscriberName: 'owner-agg' },
      logger: recordingLogger().logger,
      metricsSink: () => undefined,
      deadLetter: new RecordingDeadLetterPublisher(),
      locate: (envelope) => ({ tableName: businessTable, key: { pk: envelope.data.account } }),
      apply: (current, envelope) => ({ state: { balance: (current?.balance ?? 0) + envelope.data.amount } }),
    });
    await handler({ Records: [sqsRecord(message.body, { messageId: 'owner' })] });
    const before = await item(businessTable, data.account);
    const updatesBefore = proxy.requestCount(UPDATE) + proxy.requestCount(PUT) + proxy.requestCount(TRANSACT);

    await handler({ Records: [sqsRecord(message.body, { messageId: 'copy', receiveCount: 2 })] });

    expect(await item(businessTable, data.account)).toEqual(before);
    expect(proxy.requestCount(UPDATE) + proxy.requestCount(PUT) + proxy.requestCount(TRANSACT)).toBe(updatesBefore); // a read, no write
  });
});
