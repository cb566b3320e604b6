/**
 * Proof of the transactional mode against a real DynamoDB Local: many messages through at-least-once delivery with
 * duplicates, concurrent duplicates, and crashes injected where a crash matters (before the commit, and after it but
 * before the ack), plus lost responses and throttling from the fault proxy. Asserted from the real tables: every
 * message's effect (a ledger credit and an emitted event) applied exactly once, and no message lost: each is
 * processed, or in the dead-letter recorder with its reason.
 */
import { ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterEach, beforeAll, describe, expect, inject, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import { createTransactionalConsumer, type EventHandler } from '../../lambda/consumer/transactional-consumer';
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

const SUBSCRIBER = 'billing';
const ACCOUNTS = 5;
const DEPOSITS = 88;
const PINGS = 6;
const SEEDS = [11, 22, 33];
const CRASH_RATE = 0.2;
const TRANSACT = 'DynamoDB_20120810.TransactWriteItems';
const PUT = 'DynamoDB_20120810.PutItem';

interface Deposit {
  readonly account: string;
  readonly amount: number;
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

async function scanAll(table: string) {
  return (await admin.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];
}

/** A message the test sends, and what must become of it. */
interface Planned {
  readonly body: string;
  /** The event id, when the body has one. */
  readonly id?: string;
  /** `apply`: its effect must be applied exactly once; otherwise the error name it must be dead-lettered with. */
  readonly expect: 'apply' | 'MalformedEnvelopeError' | 'SchemaValidationError' | 'PermanentError' | 'reused-id';
  readonly account?: string;
  readonly amount?: number;
}

function depositBody(id: string, account: string, amount: unknown): string {
  return JSON.stringify(envelopeObject({ id, type: 'FundsDeposited', subject: account, data: { account, amount } }));
}

function plan(seed: number): Planned[] {
  const planned: Planned[] = [];
  for (let i = 0; i < DEPOSITS; i++) {
    const id = `deposit-${seed}-${i}`;
    const account = `account-${seed}-${i % ACCOUNTS}`;
    planned.push({ body: depositBody(id, account, i + 1), id, expect: 'apply', account, amount: i + 1 });
  }
  for (let i = 0; i < PINGS; i++) {
    // a handler that stages nothing: the inbox record alone, one conditional PutItem
    const id = `ping-${seed}-${i}`;
    planned.push({ body: JSON.stringify(envelopeObject({ id, type: 'Ping', data: {} })), id, expect: 'apply' });
  }
  planned.push({ body: 'not json at all', expect: 'MalformedEnvelopeError' });
  planned.push({ body: JSON.stringify({ ...envelopeObject(), id: 42 }), expect: 'MalformedEnvelopeError' });
  planned.push({ body: depositBody(`bad-amount-${seed}`, `account-${seed}-0`, 'ten'), id: `bad-amount-${seed}`, expect: 'SchemaValidationError' });
  planned.push({ body: depositBody(`closed-${seed}`, 'closed', 5), id: `closed-${seed}`, expect: 'PermanentError' });
  // the same ids as two deposits, with other amounts: whichever arrives first is applied, the other dead-lettered
  for (const reused of [3, 77]) {
    const original = planned[reused] as Planned;
    planned.push({ body: depositBody(original.id as string, original.account as string, 1000 + reused), id: original.id, expect: 'reused-id', account: original.account, amount: 1000 + reused });
  }
  return planned;
}

describe('transactional mode, proof under at-least-once delivery, crashes, lost responses and throttling', () => {
  test.each(SEEDS)('seed %i: every effect exactly once, every message processed or dead-lettered with its reason', async (seed) => {
    const [ledgerTable, inboxTable, outboxTable] = [uniqueTableName('proof-ledger'), uniqueTableName('proof-inbox'), uniqueTableName('proof-outbox')];
    await Promise.all([
      createTable(admin, ledgerTable, { partitionKey: 'pk' }),
      createTable(admin, inboxTable, { partitionKey: TABLE_SCHEMA.PARTITION_KEY }),
      createTable(admin, outboxTable, { partitionKey: TABLE_SCHEMA.PARTITION_KEY, sortKey: TABLE_SCHEMA.SORT_KEY }),
    ]);
    const config: ConsumerConfig = { subscriberName: SUBSCRIBER, inboxTableName: inboxTable, deduplicationWindowSeconds: 3600 };
    const outboxConfig: ProducerConfig = {
      outboxTableName: outboxTable,
      partitionKeyName: TABLE_SCHEMA.PARTITION_KEY,
      sortKeyName: TABLE_SCHEMA.SORT_KEY,
      eventRetentionSeconds: 3600,
      eventSource: 'billing',
    };
    const planned = plan(seed);

    // faults inside DynamoDB: lost responses (DynamoDB applied the request) and throttling, at random positions
    proxy = await startFaultProxy(inject('dynamoDbEndpoint'));
    const random = seededRandom(seed * 7919);
    const at = (max: number) => 1 + Math.floor(random() * max);
    const fired: Array<() => number> = [];
    for (let i = 0; i < 6; i++) fired.push(proxy.inject({ target: TRANSACT, nth: at(140), fault: { kind: 'drop-response' } }));
    for (let i = 0; i < 6; i++) fired.push(proxy.inject({ target: TRANSACT, nth: at(140), times: 1 + Math.floor(random() * 2), fault: { kind: 'throttle', errorType: i % 2 === 0 ? 'ThrottlingException' : 'ProvisionedThroughputExceededException' } }));
    fired.push(proxy.inject({ target: PUT, nth: at(15), fault: { kind: 'drop-response' } }));
    fired.push(proxy.inject({ target: PUT, nth: at(15), fault: { kind: 'throttle' } }));
    // one SDK retry: a lost response is then sometimes retried by the SDK (same ClientRequestToken), sometimes surfaces
    const base = localClient({ endpoint: proxy.endpoint, maxAttempts: 2 });

    const handle: EventHandler<Deposit> = (envelope, tx) => {
      if (envelope.type === 'Ping') return;
      if (envelope.data.account === 'closed') throw new PermanentError('account closed is closed');
      tx.update({ TableName: ledgerTable, Key: { pk: envelope.data.account }, UpdateExpression: 'ADD balance :amount', ExpressionAttributeValues: { ':amount': envelope.data.amount } });
      tx.emit({ type: 'AccountCredited', subject: envelope.data.account, data: { account: envelope.data.account, amount: envelope.data.amount } });
    };
    const parse = (data: unknown): Deposit => {
      const amount = (data as { amount?: unknown }).amount;
      if (amount !== undefined && typeof amount !== 'number') throw new Error(`amount must be a number, but was ${typeof amount}`);
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
        // each invocation is a fresh Lambda with its own fate: maybe it crashes at its 1st, 2nd or 3rd commit, before
        // or after it (alternating, so both kinds happen in every run)
        const crashPlan: CrashPlan | undefined =
          crashes() < CRASH_RATE ? { point: plans.length % 2 === 0 ? 'before-commit' : 'after-commit', nthCommit: 1 + Math.floor(crashes() * 3) } : undefined;
        const invocation = crashingClient(base, crashPlan);
        const consumer = createTransactionalConsumer<Deposit>({
          handle,
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

    // no message lost: every one was acknowledged (processed, duplicate or dead-lettered); none redriven or stuck
    expect(report.stuck.size).toBe(0);
    expect(report.redriven.size).toBe(0);
    expect(report.acknowledged.size).toBe(planned.length);

    // which payload of each reused id won is whatever the inbox recorded
    const inbox = await scanAll(inboxTable);
    const recordedFingerprint = new Map(inbox.map((item) => [item.eventId?.S as string, item.payloadFingerprint?.S as string]));
    const applied = planned.filter((message) => {
      if (message.expect === 'apply') return message.id === undefined || recordedFingerprint.get(message.id) === payloadFingerprint(parseEnvelope(message.body));
      if (message.expect === 'reused-id') return recordedFingerprint.get(message.id as string) === payloadFingerprint(parseEnvelope(message.body));
      return false;
    });
    const reusedPairs = planned.filter((message) => message.expect === 'reused-id');
    expect(applied).toHaveLength(DEPOSITS + PINGS); // one of each reused pair, never both

    // every dead letter is a poison message (or the loser of a reused id), with the right reason
    const reasons = new Map<string, Set<string>>();
    for (const letter of deadLetter.published) {
      const set = reasons.get(letter.sourceMessageId) ?? new Set<string>();
      set.add(letter.errorName);
      reasons.set(letter.sourceMessageId, set);
    }
    const expectedReasons = new Map<string, string[]>();
    planned.forEach((message, index) => {
      if (applied.includes(message)) return;
      const reason = message.expect === 'apply' || message.expect === 'reused-id' ? 'PayloadMismatchError' : message.expect;
      expectedReasons.set(`m-${index}`, [reason]);
    });
    expect(Object.fromEntries([...reasons].map(([id, names]) => [id, [...names]]))).toEqual(Object.fromEntries(expectedReasons));
    expect(reusedPairs.length + 4).toBe(expectedReasons.size);

    // effects, from the real tables: each account's balance is the sum of its applied deposits, counted once
    const expectedBalances = new Map<string, number>();
    for (const message of applied) {
      if (message.account === undefined) continue;
      expectedBalances.set(message.account, (expectedBalances.get(message.account) ?? 0) + (message.amount as number));
    }
    const ledger = await scanAll(ledgerTable);
    expect(new Map(ledger.map((item) => [item.pk?.S as string, Number(item.balance?.N)]))).toEqual(expectedBalances);
    // one inbox record per applied message, with the fingerprint of the payload that was applied
    expect(inbox).toHaveLength(applied.length);
    // one emitted event per applied deposit, under its derived id, carrying the applied amount
    const outbox = await scanAll(outboxTable);
    const emitted = new Map(outbox.map((item) => [item[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]?.S as string, parseEnvelope<Deposit>(item[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]?.S as string)]));
    const deposits = applied.filter((message) => message.account !== undefined);
    expect(emitted.size).toBe(deposits.length);
    for (const message of deposits) {
      expect(emitted.get(derivedEventId(SUBSCRIBER, message.id as string, 0))?.data).toEqual({ account: message.account, amount: message.amount });
    }

    // the faults really happened
    expect(report.duplicatesDelivered).toBeGreaterThan(20);
    expect(plans.filter((crash) => crash.point === 'before-commit').length).toBeGreaterThan(0);
    expect(plans.filter((crash) => crash.point === 'after-commit').length).toBeGreaterThan(0);
    expect(fired.reduce((sum, count) => sum + count(), 0)).toBeGreaterThan(5);
    const outcomes = lines.map((line) => line.outcome);
    expect(outcomes).toContain('duplicate');
    expect(outcomes).toContain('failed');
  });
});
