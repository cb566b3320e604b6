/**
 * Contention is not the message's fault (issue 40): under every processing mode, a write refused because another
 * transaction holds its item (a real `TransactionConflict`: the proxy arbitrates as DynamoDB does, and a transaction
 * held ongoing at the upstream gate holds the item for as long as the test wants) or because DynamoDB throttles it is
 * retried inside the invocation with jittered back-off, and applied once; a contention that outlasts the invocation's
 * remaining time (less the safety margin) is returned as a batch item failure, in time, with nothing applied.
 */
import { DynamoDBClient, GetItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { createAggregateConsumer } from '../../lambda/aggregate/aggregate-consumer';
import type { ConsumerConfig, LeaseConsumerConfig } from '../../lambda/config';
import type { SqsBatchHandler } from '../../lambda/consumer/create-consumer';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';
import { recordKey } from '../../lambda/contract/wire-format';
import { createLeaseConsumer } from '../../lambda/processing/lease-consumer';
import { createMultiStepConsumer } from '../../lambda/processing/multi-step-consumer';
import { CONTENTION_ATTEMPTS_WITHOUT_DEADLINE, CONTENTION_SAFETY_MARGIN_MILLISECONDS, type ContentionRetryOptions } from '../../lambda/transaction/contention-retry';
import { LOCAL_CREDENTIALS, localClient } from '../support/dynamodb-client';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { createInbox, createKeyedTable, createLeaseInbox } from '../support/proof/tables';
import { startUpstreamGate, type UpstreamGate } from '../support/upstream-gate';
import { envelopeObject, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

type Mode = 'transactional' | 'lease' | 'multi-step' | 'aggregate';

let gate: UpstreamGate;
let proxy: FaultProxy;
let blockerClient: DynamoDBClient;
const direct = localClient();
let business: string;
const configs = new Map<Mode, ConsumerConfig | LeaseConsumerConfig>();
const effects = new Map<string, number>();

beforeAll(async () => {
  gate = await startUpstreamGate(inject('dynamoDbEndpoint'));
  proxy = await startFaultProxy(gate.endpoint, { transactionConflicts: true });
  blockerClient = new DynamoDBClient({ endpoint: proxy.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  business = await createKeyedTable(direct, 'contention');
  const [transactional, lease, steps] = await Promise.all([
    createInbox(direct, { subscriberName: 'contended-tx', deduplicationWindowSeconds: 86_400 }),
    createLeaseInbox(direct, { subscriberName: 'contended-lease', deduplicationWindowSeconds: 86_400, leaseDurationSeconds: 60, processingMode: 'lease' }),
    createLeaseInbox(direct, { subscriberName: 'contended-steps', deduplicationWindowSeconds: 86_400, leaseDurationSeconds: 60, processingMode: 'multi-step' }),
  ]);
  configs.set('transactional', transactional).set('aggregate', { ...transactional, subscriberName: 'contended-agg' }).set('lease', lease).set('multi-step', steps);
});
afterAll(async () => {
  blockerClient.destroy();
  direct.destroy();
  await proxy.stop();
  await gate.stop();
});

function consumer(mode: Mode, contentionRetry: ContentionRetryOptions): { handler: SqsBatchHandler; deadLetter: RecordingDeadLetterPublisher } {
  const deadLetter = new RecordingDeadLetterPublisher();
  // the SDK does not retry: each refusal reaches the runtime's own retry as it is
  const common = { client: localClient({ endpoint: proxy.endpoint, maxAttempts: 1 }), deadLetter, logger: recordingLogger().logger, metricsSink: () => undefined, contentionRetry };
  const effect = (id: string): void => void effects.set(id, (effects.get(id) ?? 0) + 1);
  switch (mode) {
    case 'transactional':
      return {
        deadLetter,
        handler: createTransactionalConsumer<{ account: string; amount: number }>({
          ...common,
          config: configs.get(mode) as ConsumerConfig,
          handle: (envelope, tx) => {
            tx.update({ TableName: business, Key: { pk: envelope.data.account }, UpdateExpression: 'ADD #total :amount', ExpressionAttributeNames: { '#total': 'total' }, ExpressionAttributeValues: { ':amount': envelope.data.amount } });
            effect(envelope.id); // counted per run: the last run's writes are the ones that commit
          },
        }),
      };
    case 'aggregate':
      return {
        deadLetter,
        handler: createAggregateConsumer<{ account: string; amount: number }, { total: number }>({
          ...common,
          config: { subscriberName: 'contended-agg' },
          locate: (envelope) => ({ tableName: business, key: { pk: envelope.data.account } }),
          apply: (current, envelope) => ({ state: { total: (current?.total ?? 0) + envelope.data.amount } }),
        }),
      };
    case 'lease':
      return { deadLetter, handler: createLeaseConsumer({ ...common, config: configs.get(mode) as LeaseConsumerConfig, handle: (envelope) => effect(envelope.id) }) };
    case 'multi-step':
      return {
        deadLetter,
        handler: createMultiStepConsumer({
          ...common,
          config: configs.get(mode) as LeaseConsumerConfig,
          steps: [
            { name: 'reserve', run: () => undefined },
            { name: 'charge', run: (envelope) => effect(envelope.id) },
          ],
        }),
      };
  }
}

/** The item the mode's first write of event `eventId` on `account` touches: the account (transactional, aggregate), or its processing record. */
function hotItem(mode: Mode, account: string, eventId: string): { table: string; pk: string } {
  if (mode === 'transactional' || mode === 'aggregate') return { table: business, pk: account };
  const config = configs.get(mode) as LeaseConsumerConfig;
  return { table: config.inboxTableName, pk: recordKey(config.subscriberName, eventId) };
}

/**
 * Another writer's transaction on `item`, held ongoing at the upstream gate until released: every write on the item
 * meanwhile is refused with a real TransactionConflict. It checks the item (changing nothing of it) and writes an
 * unrelated item.
 */
async function holdItem(item: { table: string; pk: string }): Promise<{ release: () => Promise<void> }> {
  const held = gate.holdNext('TransactWriteItems');
  const done = blockerClient.send(
    new TransactWriteItemsCommand({
      TransactItems: [
        { ConditionCheck: { TableName: item.table, Key: { pk: { S: item.pk } }, ConditionExpression: 'attribute_not_exists(#never)', ExpressionAttributeNames: { '#never': 'never-set' } } },
        { Put: { TableName: business, Item: { pk: { S: `blocker-${crypto.randomUUID()}` } } } },
      ],
    }),
  );
  await held.arrived;
  let released: Promise<void> | undefined;
  return {
    release: () => {
      held.release();
      released ??= done.then(() => undefined);
      return released;
    },
  };
}

async function applied(mode: Mode, account: string, eventId: string): Promise<number> {
  if (mode === 'lease' || mode === 'multi-step') return effects.get(eventId) ?? 0;
  const item = (await direct.send(new GetItemCommand({ TableName: business, Key: { pk: { S: account } }, ConsistentRead: true }))).Item;
  return item === undefined ? 0 : (unmarshall(item) as { total: number }).total;
}

const deposit = (account: string) => {
  const envelope = envelopeObject({ data: { account, amount: 1 } });
  return { id: envelope.id as string, record: sqsRecord(JSON.stringify(envelope)) };
};
const lambdaContext = (remaining: () => number) => ({ getRemainingTimeInMillis: remaining });
const TARGET_OF: Record<Mode, string> = {
  transactional: 'DynamoDB_20120810.TransactWriteItems',
  aggregate: 'DynamoDB_20120810.PutItem',
  lease: 'DynamoDB_20120810.PutItem',
  'multi-step': 'DynamoDB_20120810.PutItem',
};

describe.each<Mode>(['transactional', 'lease', 'multi-step', 'aggregate'])('%s mode under contention', (mode) => {
  test('a write refused by a real TransactionConflict (another transaction holds the item) is retried in the invocation and applied once', async () => {
    const account = `hot-${crypto.randomUUID()}`;
    const { id, record } = deposit(account);
    const blocker = await holdItem(hotItem(mode, account, id));
    const refusedBefore = proxy.transactionConflictFigures().refused;
    const waits: number[] = [];
    // the other transaction ends during the first back-off: the retry after it passes
    const { handler, deadLetter } = consumer(mode, {
      sleep: async (milliseconds) => {
        waits.push(milliseconds);
        await blocker.release();
      },
    });

    const response = await handler({ Records: [record] }, lambdaContext(() => 60_000));

    expect(response.batchItemFailures).toEqual([]);
    expect(proxy.transactionConflictFigures().refused - refusedBefore).toBeGreaterThanOrEqual(1);
    expect(waits.length).toBeGreaterThanOrEqual(1);
    expect(deadLetter.published).toEqual([]);
    expect(await applied(mode, account, id)).toBe(1);
  });

  test(`throttling more often than the ${CONTENTION_ATTEMPTS_WITHOUT_DEADLINE} attempts of a call without a deadline is retried while the remaining time allows`, async () => {
    const account = `hot-${crypto.randomUUID()}`;
    const { id, record } = deposit(account);
    const throttles = proxy.inject({ target: TARGET_OF[mode], times: CONTENTION_ATTEMPTS_WITHOUT_DEADLINE + 4, fault: { kind: 'throttle', errorType: 'ProvisionedThroughputExceededException' } });
    const { handler, deadLetter } = consumer(mode, { sleep: async () => undefined });

    const response = await handler({ Records: [record] }, lambdaContext(() => 60_000));
    proxy.clearRules();

    expect(throttles()).toBe(CONTENTION_ATTEMPTS_WITHOUT_DEADLINE + 4);
    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetter.published).toEqual([]);
    expect(await applied(mode, account, id)).toBe(1);
  });

  test('a conflict that outlasts the remaining time less the safety margin is a batch item failure, before the deadline, nothing applied; its batch peer is not held up', async () => {
    const account = `hot-${crypto.randomUUID()}`;
    const { id, record } = deposit(account);
    const cold = `cold-${crypto.randomUUID()}`;
    const peer = deposit(cold);
    const blocker = await holdItem(hotItem(mode, account, id));
    const budget = CONTENTION_SAFETY_MARGIN_MILLISECONDS + 400;
    let waited = 0;
    let overran = false;
    const { handler, deadLetter } = consumer(mode, {
      sleep: async (milliseconds) => {
        waited += milliseconds;
        // a retry past the deadline: Lambda would have killed the invocation; let the other writer go so the test ends
        if (waited > budget) overran = true;
        if (overran) await blocker.release();
      },
    });

    const response = await handler({ Records: [record, peer.record] }, lambdaContext(() => Math.max(0, budget - waited)));
    await blocker.release();

    expect(overran).toBe(false);
    expect(waited).toBeLessThanOrEqual(budget - CONTENTION_SAFETY_MARGIN_MILLISECONDS);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(deadLetter.published).toEqual([]);
    expect(await applied(mode, account, id)).toBe(0);
    expect(await applied(mode, cold, peer.id)).toBe(1);
  });
});
