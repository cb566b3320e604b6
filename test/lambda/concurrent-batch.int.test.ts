/**
 * A batch in one round trip (issue 11, parts 1 and 2), against DynamoDB Local through the proxy: records run
 * concurrently, duplicates are answered by one batch read before any write, and exactly-once holds where records of
 * one batch meet (two copies of one event, two records on one item).
 */
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { ConfigurationError } from '../../lambda/config';
import { createTransactionalConsumer, MAX_CONFLICT_ATTEMPTS, type EventHandler, type TransactionalConsumerOptions } from '../../lambda/consumer/transactional-consumer';
import type { SQSRecord } from '../../lambda/consumer/sqs';
import { CONSUMER_METRICS } from '../../lambda/contract/metric-names';
import { localClient } from '../support/dynamodb-client';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { startLedgerTestbed, type Deposit, type LedgerTestbed } from '../support/proof/ledger-testbed';
import { envelopeObject, outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

const TRANSACT = 'DynamoDB_20120810.TransactWriteItems';
const BATCH_GET = 'DynamoDB_20120810.BatchGetItem';

let testbed: LedgerTestbed;
let proxy: FaultProxy;

beforeAll(async () => {
  testbed = await startLedgerTestbed('batch');
  ({ proxy } = testbed);
});
afterAll(() => proxy.stop());

let handlerRuns = 0;
let running = 0;
let maxRunning = 0;
/**
 * While set, each handler holds until it holds true (checked as each handler starts), then all held ones go on: how a
 * test makes records overlap by a condition, not by a sleep that a loaded machine can outlast. Unset, a handler takes
 * 10 ms.
 */
let releaseWhen: (() => boolean) | undefined;
const held: Array<() => void> = [];
const credit: EventHandler<Deposit> = async (envelope, tx) => {
  handlerRuns += 1;
  running += 1;
  maxRunning = Math.max(maxRunning, running);
  if (releaseWhen === undefined) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  } else {
    const release = new Promise<void>((resolve) => held.push(resolve));
    if (releaseWhen()) for (const go of held.splice(0)) go();
    await release;
  }
  running -= 1;
  testbed.credit(envelope, tx);
};

function consumer(overrides: Partial<TransactionalConsumerOptions<Deposit>> = {}) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const metrics: Array<Record<string, unknown>> = [];
  const handler = createTransactionalConsumer<Deposit>({
    handle: credit,
    client: localClient({ endpoint: proxy.endpoint }),
    config: testbed.config,
    logger,
    deadLetter,
    metricsSink: (line) => metrics.push(JSON.parse(line) as Record<string, unknown>),
    ...overrides,
  });
  handlerRuns = 0;
  maxRunning = 0;
  releaseWhen = undefined;
  return { handler, lines, deadLetter, metrics };
}

const newAccount = (): string => `account-${crypto.randomUUID()}`;
const deposit = (account: string, amount: number, overrides: Record<string, unknown> = {}) => sqsRecord(JSON.stringify(envelopeObject({ data: { account, amount }, ...overrides })));

const balance = (account: string) => testbed.balance(account);

function requestsDuring() {
  const before = { transactions: proxy.requestCount(TRANSACT), batchReads: proxy.requestCount(BATCH_GET), all: proxy.requestCount() };
  return () => ({
    transactions: proxy.requestCount(TRANSACT) - before.transactions,
    batchReads: proxy.requestCount(BATCH_GET) - before.batchReads,
    all: proxy.requestCount() - before.all,
  });
}

describe('concurrent records (issue 11, part 1)', () => {
  test('a batch of 10 runs its records concurrently, at most maxConcurrency at once', async () => {
    const { handler } = consumer({ maxConcurrency: 4 });
    const records = Array.from({ length: 10 }, () => deposit(newAccount(), 1));
    // each handler waits until 4 run at once (or the last record has started): a limit below 4 would hang here, one
    // above it shows in maxRunning
    releaseWhen = () => running === 4 || handlerRuns === records.length;

    expect((await handler({ Records: records })).batchItemFailures).toEqual([]);

    expect(maxRunning).toBe(4);
    expect(handlerRuns).toBe(10);
  });

  test('maxConcurrency 1 runs one record at a time', async () => {
    const { handler } = consumer({ maxConcurrency: 1 });
    await handler({ Records: Array.from({ length: 3 }, () => deposit(newAccount(), 1)) });
    expect(maxRunning).toBe(1);
  });

  test.each([0, 51, 2.5])('refuses maxConcurrency %s at creation', (maxConcurrency) => {
    expect(() => consumer({ maxConcurrency })).toThrow(ConfigurationError);
    expect(() => consumer({ maxConcurrency })).toThrow(`maxConcurrency must be a whole number from 1 to 50, but ${maxConcurrency} was given`);
  });

  test('ten records of one batch on ONE item all apply exactly once', async () => {
    const { handler } = consumer({ maxConcurrency: 10 });
    const account = newAccount();
    const records = Array.from({ length: 10 }, (_, index) => deposit(account, 2 ** index));

    const response = await handler({ Records: records });
    // what still lost every retry is left to SQS; its redelivery applies it (once)
    const retried = records.filter((record) => response.batchItemFailures.some((failure) => failure.itemIdentifier === record.messageId));
    if (retried.length > 0) expect((await handler({ Records: retried })).batchItemFailures).toEqual([]);

    expect(await balance(account)).toBe(1023); // each power of two exactly once
  });

  test('records of one batch on one item commit one after another (DynamoDB would refuse the later as a TransactionConflict); records on other items still commit at once', async () => {
    const client = localClient({ endpoint: proxy.endpoint });
    // every TransactWriteItems as sent and answered, with the accounts it credits
    const commits: Array<{ accounts: string[]; sent: number; answered: number }> = [];
    client.middlewareStack.add(
      (next) => async (args) => {
        const request = args.request as { headers: Record<string, string>; body: string };
        if (request.headers['x-amz-target'] !== TRANSACT) return next(args);
        const items = (JSON.parse(request.body) as { TransactItems: Array<{ Update?: { Key: { pk: { S: string } } } }> }).TransactItems;
        const accounts = items.flatMap((item) => (item.Update === undefined ? [] : [item.Update.Key.pk.S]));
        const sent = performance.now();
        try {
          return await next(args);
        } finally {
          commits.push({ accounts, sent, answered: performance.now() });
        }
      },
      { step: 'finalizeRequest' },
    );
    const { handler } = consumer({ client, maxConcurrency: 10 });
    const [shared, other1, other2] = [newAccount(), newAccount(), newAccount()];
    const records = [deposit(shared, 1), deposit(other1, 10), deposit(shared, 2), deposit(other2, 20), deposit(shared, 4)];

    expect((await handler({ Records: records })).batchItemFailures).toEqual([]);

    const onShared = commits.filter((commit) => commit.accounts.includes(shared)).sort((a, b) => a.sent - b.sent);
    expect(onShared).toHaveLength(3);
    for (let i = 1; i < onShared.length; i++) expect(onShared[i]!.sent).toBeGreaterThanOrEqual(onShared[i - 1]!.answered);
    // the first commit on the shared item and the two on other items were under way together
    const first = onShared[0]!;
    const others = commits.filter((commit) => !commit.accounts.includes(shared));
    expect(others).toHaveLength(2);
    for (const other of others) expect(other.sent).toBeLessThan(first.answered);
    expect([await balance(shared), await balance(other1), await balance(other2)]).toEqual([7, 10, 20]);
  });

  test('under the conflict rule of real DynamoDB (the proxy refuses a transaction on an item an ongoing one holds): ten records on one item meet no conflict, one transaction each', async () => {
    const aws = await startFaultProxy(inject('dynamoDbEndpoint'), { transactionConflicts: true });
    try {
      const { handler } = consumer({ client: localClient({ endpoint: aws.endpoint }), maxConcurrency: 10 });
      const [shared, other] = [newAccount(), newAccount()];
      const records = [...Array.from({ length: 9 }, (_, index) => deposit(shared, 2 ** index)), deposit(other, 1000)];

      expect((await handler({ Records: records })).batchItemFailures).toEqual([]);

      expect(aws.transactionConflictFigures().refused).toBe(0);
      expect(aws.requestCount(TRANSACT)).toBe(10);
      expect([await balance(shared), await balance(other)]).toEqual([511, 1000]);
    } finally {
      await aws.stop();
    }
  });

  test('a TransactionConflict is retried inside the invocation (the handler runs again), and applies once', async () => {
    const { handler, lines } = consumer();
    const account = newAccount();
    const conflicts = proxy.inject({ target: TRANSACT, times: 2, fault: { kind: 'transaction-conflict' } });

    const response = await handler({ Records: [deposit(account, 9)] });

    expect(conflicts()).toBe(2);
    expect(response.batchItemFailures).toEqual([]);
    expect(lines.find((line) => line.outcome === 'processed')).toMatchObject({ attempts: 3 });
    expect(handlerRuns).toBe(3);
    expect(await balance(account)).toBe(9);
  });

  test('a conflict that outlasts every attempt leaves the message to SQS, nothing applied', async () => {
    const { handler, lines } = consumer();
    const account = newAccount();
    const record = deposit(account, 9);
    const conflicts = proxy.inject({ target: TRANSACT, times: MAX_CONFLICT_ATTEMPTS, fault: { kind: 'transaction-conflict' } });

    const response = await handler({ Records: [record] });

    expect(conflicts()).toBe(MAX_CONFLICT_ATTEMPTS);
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(lines.find((line) => line.outcome === 'failed')).toMatchObject({ error: { name: 'TransactionCancelledError' } });
    expect(await balance(account)).toBeUndefined();
  });
});

describe('duplicates answered before any write (issue 11, part 2)', () => {
  test.each([
    { batchRead: true, batchReads: 1 },
    { batchRead: 'adaptive', batchReads: 0 },
  ] as const)('two copies of one event in one batch (batchRead $batchRead): applied once, the second a duplicate with no handler run and no write', async ({ batchRead, batchReads }) => {
    const { handler, lines, metrics } = consumer({ batchRead });
    const account = newAccount();
    const copy = deposit(account, 5);
    const requests = requestsDuring();

    const response = await handler({ Records: [copy, { ...copy, messageId: 'second-copy' }] });

    expect(response.batchItemFailures).toEqual([]);
    expect(await balance(account)).toBe(5);
    expect(outcomesOf(lines)).toEqual(['processed', 'duplicate']);
    expect(handlerRuns).toBe(1);
    expect(requests()).toEqual({ batchReads, transactions: 1, all: batchReads + 1 });
    expect(metrics[0]).toMatchObject({ [CONSUMER_METRICS.PROCESSED]: 1, [CONSUMER_METRICS.DUPLICATES]: 1 });
  });

  test('a batch of 10 with 2 redeliveries: 1 batch read + 8 transactions, the handler runs 8 times, the redeliveries cost no write', async () => {
    const first = consumer();
    const accounts = Array.from({ length: 10 }, newAccount);
    const records = accounts.map((account) => deposit(account, 3));
    await first.handler({ Records: records.slice(0, 2) });

    const { handler, lines } = consumer({ batchRead: true });
    const requests = requestsDuring();
    const response = await handler({ Records: records });

    expect(response.batchItemFailures).toEqual([]);
    expect(handlerRuns).toBe(8);
    expect(requests()).toEqual({ batchReads: 1, transactions: 8, all: 9 });
    expect(lines.filter((line) => line.outcome === 'duplicate').map((line) => line.detail)).toEqual([
      'recognised by the batch read: no handler run, nothing written',
      'recognised by the batch read: no handler run, nothing written',
    ]);
    for (const account of accounts) expect(await balance(account)).toBe(3);
  });

  test('batchRead false: no batch read; the 2 redeliveries run the handler and their transactions are cancelled on the inbox record, nothing applied twice', async () => {
    const first = consumer();
    const accounts = Array.from({ length: 10 }, newAccount);
    const records = accounts.map((account) => deposit(account, 3));
    await first.handler({ Records: records.slice(0, 2) });

    const { handler, lines } = consumer({ batchRead: false });
    const requests = requestsDuring();
    const response = await handler({ Records: records });

    expect(response.batchItemFailures).toEqual([]);
    expect(handlerRuns).toBe(10);
    expect(requests()).toEqual({ batchReads: 0, transactions: 10, all: 10 });
    expect(outcomesOf(lines).filter((outcome) => outcome === 'duplicate')).toHaveLength(2);
    for (const account of accounts) expect(await balance(account)).toBe(3);
  });

  test('a reused id with another payload, recognised by the batch read, is dead-lettered as PayloadMismatchError', async () => {
    const id = crypto.randomUUID();
    const account = newAccount();
    await consumer().handler({ Records: [deposit(account, 1, { id })] });

    const { handler, deadLetter } = consumer({ batchRead: true });
    const requests = requestsDuring();
    // in a batch with another record (a batch of one skips the read): the reused id costs no write
    await handler({ Records: [deposit(account, 999, { id }), deposit(newAccount(), 2)] });

    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['PayloadMismatchError']);
    expect(requests()).toEqual({ batchReads: 1, transactions: 1, all: 2 });
    expect(await balance(account)).toBe(1);
  });

  test("by default ('adaptive', issue 40) a new environment that has seen no redelivery does not read: the batch commits in one round trip", async () => {
    // copies of one event held by two invocations at once may then meet in their transactions: contention, retried in the invocation
    const { handler } = consumer();
    const requests = requestsDuring();

    await handler({ Records: [deposit(newAccount(), 1), deposit(newAccount(), 2)] });

    expect(requests()).toEqual({ batchReads: 0, transactions: 2, all: 2 });
  });

  test("batchRead 'adaptive': no read while redeliveries are rare; redeliveries found by their writes turn it on, and it answers them with no write; rare again, it goes off", async () => {
    const { handler, lines } = consumer({ batchRead: 'adaptive' });
    const accounts = Array.from({ length: 10 }, newAccount);
    const records = accounts.map((account) => deposit(account, 3));
    const readsOf = () => lines.filter((line) => line.message === 'batch').map((line) => line.batchRead);

    // a new environment: nothing seen, no read; the batch applies everything
    let requests = requestsDuring();
    await handler({ Records: records.slice(0, 5) });
    expect(requests()).toEqual({ batchReads: 0, transactions: 5, all: 5 });

    // 3 of 5 records are redeliveries: no read yet, their writes find them (cancelled), and that is seen
    requests = requestsDuring();
    await handler({ Records: [...records.slice(0, 3), ...records.slice(5, 7)] });
    expect(requests()).toEqual({ batchReads: 0, transactions: 5, all: 5 });
    expect(handlerRuns).toBe(10);

    // now it reads, for the records behind another in their lane (here one FIFO group; the first commits at once,
    // beside the read): the 3 redeliveries behind it cost no write and no handler run
    const inGroup = (record: SQSRecord): SQSRecord => ({ ...record, attributes: { ...record.attributes, MessageGroupId: 'adaptive' } });
    requests = requestsDuring();
    await handler({ Records: [records[7]!, ...records.slice(0, 3), records[8]!].map(inGroup) });
    expect(requests()).toEqual({ batchReads: 1, transactions: 2, all: 3 });
    expect(handlerRuns).toBe(12);

    // batches without redeliveries wear the estimate down until the read goes off again
    // (records of no redelivery: the estimate follows about the last hundred records)
    let quietBatches = 0;
    while (quietBatches < 100 && readsOf().at(-1) !== false) {
      await handler({ Records: [deposit(newAccount(), 1), deposit(newAccount(), 1), deposit(newAccount(), 1), deposit(newAccount(), 1)].map(inGroup) });
      quietBatches += 1;
    }
    expect(readsOf().slice(0, 3)).toEqual([false, false, true]);
    expect(readsOf().at(-1)).toBe(false);
    expect(quietBatches).toBeGreaterThan(5);
    for (const account of accounts.slice(0, 9)) expect(await balance(account)).toBe(3);
  });

  test('an expired inbox record is not taken as a duplicate by the batch read: the message is applied again, as the write path decides', async () => {
    const account = newAccount();
    const record = deposit(account, 4);
    const later = new Date(Date.now() + 2 * 3600 * 1000); // past the 1 h window
    await consumer().handler({ Records: [record] });

    const { handler, lines } = consumer({ now: () => later });
    await handler({ Records: [record] });

    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(await balance(account)).toBe(8);
  });

  test('a batch read that fails (throttled) only costs the shortcut: every message goes the write path and applies once', async () => {
    const account = newAccount();
    const record = deposit(account, 6);
    await consumer().handler({ Records: [record] });
    const throttled = proxy.inject({ target: BATCH_GET, times: 10, fault: { kind: 'throttle' } });

    const { handler, lines } = consumer({ client: localClient({ endpoint: proxy.endpoint, maxAttempts: 1 }), batchRead: true });
    const response = await handler({ Records: [record, deposit(account, 1)] });

    expect(throttled()).toBe(1);
    expect(response.batchItemFailures).toEqual([]);
    expect(lines.find((line) => line.message === 'batch read of known records failed')).toMatchObject({ level: 'WARN' });
    expect(outcomesOf(lines).sort()).toEqual(['duplicate', 'processed']);
    expect(await balance(account)).toBe(7);
  });
});
