/**
 * Proof of the aggregate mode (optimistic concurrency, no inbox) against a real DynamoDB Local: many messages on a few
 * aggregates (so concurrent writers really contend) through at-least-once delivery with duplicates, concurrent
 * duplicates, and crashes before the conditional write and after it (before the ack), plus lost responses and
 * throttling from the fault proxy. Asserted from the real table: each aggregate's version is the number of distinct
 * messages applied to it, its balance their sum, its processed list exactly their ids; every emitted event exists
 * once; no message lost: each is applied or in the dead-letter recorder with its reason.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeAll, describe, expect, inject, test } from 'vitest';
import { createAggregateConsumer, type AggregateHandler } from '../../lambda/aggregate/aggregate-consumer';
import type { ConsumerBaseConfig, ProducerConfig } from '../../lambda/config';
import { parseEnvelope } from '../../lambda/envelope';
import { PermanentError } from '../../lambda/errors';
import { derivedEventId, payloadFingerprint } from '../../lambda/fingerprint';
import { Outbox } from '../../lambda/producer/outbox';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../lambda/wire-format';
import { deliverAtLeastOnce, seededRandom } from '../support/at-least-once';
import { createTable, localClient, uniqueTableName } from '../support/dynamodb-client';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { crashingClient, SimulatedCrash, type CrashPlan } from './crash-injector';
import { envelopeObject, RecordingDeadLetterPublisher, recordingLogger } from './helpers';

const SUBSCRIBER = 'balances';
const AGGREGATES = 4;
const DEPOSITS = 100;
/** Every EMIT_EVERY-th deposit also emits an event, so its write is a transaction with the outbox Put. */
const EMIT_EVERY = 4;
const SEEDS = [5, 6, 7];
const CRASH_RATE = 0.2;
const TARGET = (operation: string) => `DynamoDB_20120810.${operation}`;

interface Deposit {
  readonly account: string;
  readonly amount: number;
  readonly notify: boolean;
}

interface Account extends Record<string, unknown> {
  readonly balance: number;
}

let admin: DynamoDBClient;
let proxy: FaultProxy | undefined;

beforeAll(() => {
  admin = localClient();
});
afterEach(async () => {
  await proxy?.stop();
  proxy = undefined;
});

async function scanAll(table: string): Promise<Array<Record<string, unknown>>> {
  return (await DynamoDBDocumentClient.from(admin).send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];
}

interface Planned {
  readonly body: string;
  readonly id?: string;
  readonly expect: 'apply' | 'MalformedEnvelopeError' | 'SchemaValidationError' | 'PermanentError' | 'reused-id';
  readonly account?: string;
  readonly amount?: number;
  readonly notify?: boolean;
}

function depositBody(id: string, data: Record<string, unknown>): string {
  return JSON.stringify(envelopeObject({ id, type: 'FundsDeposited', subject: String(data.account), data }));
}

function plan(seed: number): Planned[] {
  const planned: Planned[] = [];
  for (let i = 0; i < DEPOSITS; i++) {
    const id = `deposit-${seed}-${i}`;
    const data = { account: `account-${seed}-${i % AGGREGATES}`, amount: i + 1, notify: i % EMIT_EVERY === 0 };
    planned.push({ body: depositBody(id, data), id, expect: 'apply', ...data });
  }
  planned.push({ body: '[1, 2, 3]', expect: 'MalformedEnvelopeError' });
  planned.push({ body: JSON.stringify({ ...envelopeObject(), specversion: '0.3' }), expect: 'MalformedEnvelopeError' });
  planned.push({ body: depositBody(`bad-${seed}`, { account: `account-${seed}-1`, amount: -5, notify: false }), id: `bad-${seed}`, expect: 'SchemaValidationError' });
  planned.push({ body: depositBody(`closed-${seed}`, { account: 'closed', amount: 5, notify: false }), id: `closed-${seed}`, expect: 'PermanentError' });
  for (const reused of [2, 41]) {
    const original = planned[reused] as Planned;
    const data = { account: original.account, amount: 1000 + reused, notify: original.notify };
    planned.push({ body: depositBody(original.id as string, data), id: original.id, expect: 'reused-id', ...data });
  }
  return planned;
}

describe('aggregate mode, proof under at-least-once delivery, contention, crashes, lost responses and throttling', () => {
  test.each(SEEDS)('seed %i: every change exactly once, every message applied or dead-lettered with its reason', async (seed) => {
    const [accountsTable, outboxTable] = [uniqueTableName('proof-accounts'), uniqueTableName('proof-outbox')];
    await Promise.all([
      createTable(admin, accountsTable, { partitionKey: 'pk' }),
      createTable(admin, outboxTable, { partitionKey: TABLE_SCHEMA.PARTITION_KEY, sortKey: TABLE_SCHEMA.SORT_KEY }),
    ]);
    const config: ConsumerBaseConfig = { subscriberName: SUBSCRIBER };
    const outboxConfig: ProducerConfig = {
      outboxTableName: outboxTable,
      partitionKeyName: TABLE_SCHEMA.PARTITION_KEY,
      sortKeyName: TABLE_SCHEMA.SORT_KEY,
      eventRetentionSeconds: 3600,
      eventSource: 'balances',
    };
    const planned = plan(seed);

    proxy = await startFaultProxy(inject('dynamoDbEndpoint'));
    const random = seededRandom(seed * 7919);
    const at = (max: number) => 1 + Math.floor(random() * max);
    const fired: Array<() => number> = [];
    for (let i = 0; i < 4; i++) fired.push(proxy.inject({ target: TARGET('GetItem'), nth: at(200), fault: { kind: 'throttle' } }));
    for (let i = 0; i < 4; i++) fired.push(proxy.inject({ target: TARGET('PutItem'), nth: at(120), fault: { kind: 'drop-response' } }));
    for (let i = 0; i < 4; i++) fired.push(proxy.inject({ target: TARGET('PutItem'), nth: at(120), fault: { kind: 'throttle', errorType: 'ProvisionedThroughputExceededException' } }));
    for (let i = 0; i < 2; i++) fired.push(proxy.inject({ target: TARGET('TransactWriteItems'), nth: at(30), fault: { kind: 'drop-response' } }));
    fired.push(proxy.inject({ target: TARGET('TransactWriteItems'), nth: at(30), fault: { kind: 'throttle' } }));
    const base = localClient({ endpoint: proxy.endpoint, maxAttempts: 2 });

    const apply: AggregateHandler<Deposit, Account> = (current, envelope) => {
      if (envelope.data.account === 'closed') throw new PermanentError('account closed is closed');
      const { account, amount, notify } = envelope.data;
      return { state: { balance: (current?.balance ?? 0) + amount }, events: notify ? [{ type: 'LargeDeposit', subject: account, data: { account, amount } }] : [] };
    };
    const parse = (data: unknown): Deposit => {
      const { amount } = data as { amount?: unknown };
      if (typeof amount !== 'number' || amount <= 0) throw new Error(`amount must be a positive number, but was ${JSON.stringify(amount)}`);
      return data as Deposit;
    };
    const deadLetter = new RecordingDeadLetterPublisher();
    const { logger, lines } = recordingLogger();
    const crashes = seededRandom(seed * 104729);
    const plans: CrashPlan[] = [];

    const report = await deliverAtLeastOnce({
      bodies: planned.map((message) => message.body),
      seed,
      duplicateRate: 0.3,
      concurrentDuplicateRate: 0.2,
      concurrency: 4,
      batchSize: 5,
      maxReceiveCount: 25,
      handler: async (event) => {
        const crashPlan: CrashPlan | undefined =
          crashes() < CRASH_RATE ? { point: plans.length % 2 === 0 ? 'before-commit' : 'after-commit', nthCommit: 1 + Math.floor(crashes() * 3) } : undefined;
        const invocation = crashingClient(base, crashPlan);
        const consumer = createAggregateConsumer<Deposit, Account>({
          locate: (envelope) => ({ tableName: accountsTable, key: { pk: envelope.data.account } }),
          apply,
          parse,
          client: invocation.client,
          config,
          outbox: new Outbox({ client: invocation.client, config: outboxConfig }),
          deadLetter,
          logger,
          metricsSink: () => undefined,
        });
        const response = await consumer(event);
        if (invocation.crashed()) {
          plans.push(crashPlan as CrashPlan);
          throw new SimulatedCrash(crashPlan?.point ?? 'before-commit');
        }
        return response;
      },
    });

    // no message lost
    expect(report.stuck.size).toBe(0);
    expect(report.redriven.size).toBe(0);
    expect(report.acknowledged.size).toBe(planned.length);

    const aggregates = new Map((await scanAll(accountsTable)).map((item) => [item.pk as string, item]));
    const remembered = (message: Planned) =>
      ((aggregates.get(message.account as string)?.processedMessages ?? []) as Array<{ id: string; fingerprint: string }>).some(
        (entry) => entry.id === message.id && entry.fingerprint === payloadFingerprint(parseEnvelope(message.body)),
      );
    const applied = planned.filter((message) => (message.expect === 'apply' || message.expect === 'reused-id') && remembered(message));
    expect(applied).toHaveLength(DEPOSITS); // one of each reused pair, never both

    // dead letters: exactly the poison messages and the losers of the reused ids, each with its reason
    const reasons = new Map<string, Set<string>>();
    for (const letter of deadLetter.published) reasons.set(letter.sourceMessageId, (reasons.get(letter.sourceMessageId) ?? new Set()).add(letter.errorName));
    const expectedReasons: Record<string, string[]> = {};
    planned.forEach((message, index) => {
      if (applied.includes(message)) return;
      expectedReasons[`m-${index}`] = [message.expect === 'apply' || message.expect === 'reused-id' ? 'PayloadMismatchError' : message.expect];
    });
    expect(Object.fromEntries([...reasons].map(([id, names]) => [id, [...names]]))).toEqual(expectedReasons);

    // each aggregate: version = number of distinct messages applied, balance = their sum, list = exactly their ids
    expect(aggregates.size).toBe(AGGREGATES);
    for (const [account, item] of aggregates) {
      const mine = applied.filter((message) => message.account === account);
      expect(item.aggregateVersion).toBe(mine.length);
      expect(item.balance).toBe(mine.reduce((sum, message) => sum + (message.amount as number), 0));
      const ids = (item.processedMessages as Array<{ id: string }>).map((entry) => entry.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect([...ids].sort()).toEqual(mine.map((message) => message.id as string).sort());
    }

    // every emitted event exists once, for the payload that was applied
    const outbox = await scanAll(outboxTable);
    const emitting = applied.filter((message) => message.notify === true);
    expect(outbox).toHaveLength(emitting.length);
    const emitted = new Map(outbox.map((item) => [item[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE] as string, parseEnvelope<Deposit>(item[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE] as string)]));
    for (const message of emitting) {
      expect(emitted.get(derivedEventId(SUBSCRIBER, message.id as string, 0))?.data).toEqual({ account: message.account, amount: message.amount });
    }

    // the faults and the contention really happened
    expect(report.duplicatesDelivered).toBeGreaterThan(20);
    expect(plans.some((crash) => crash.point === 'before-commit')).toBe(true);
    expect(plans.some((crash) => crash.point === 'after-commit')).toBe(true);
    expect(fired.reduce((sum, count) => sum + count(), 0)).toBeGreaterThan(5);
    const processed = lines.filter((line) => line.outcome === 'processed');
    expect(processed.some((line) => (line.attempts as number) > 1)).toBe(true);
    expect(lines.map((line) => line.outcome)).toContain('duplicate');
  });
});
