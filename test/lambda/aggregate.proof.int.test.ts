/**
 * Proof of the aggregate mode (optimistic concurrency, no inbox) against a real DynamoDB Local: many messages on a few
 * aggregates (so concurrent writers really contend) through at-least-once delivery with duplicates, concurrent
 * duplicates, and crashes before the conditional write and after it (before the ack), plus lost responses and
 * throttling from the fault proxy. Asserted from the real table: each aggregate's version is the number of distinct
 * messages applied to it, its balance their sum, its processed list exactly their ids; every emitted event exists
 * once; no message lost: each is applied or in the dead-letter recorder with its reason.
 */
import { describe, expect, test } from 'vitest';
import { createAggregateConsumer, type AggregateHandler } from '../../lambda/aggregate/aggregate-consumer';
import { PermanentError } from '../../lambda/errors';
import { Outbox } from '../../lambda/producer/outbox';
import { localClient } from '../support/dynamodb-client';
import { deliverPlanned, expectDeadLetters, expectEmittedOnce, fingerprintOf, type Deposit, type PlannedMessage } from '../support/proof/commit-proof';
import { scanItems } from '../support/proof/table-reads';
import { createKeyedTable, createOutbox } from '../support/proof/tables';
import { envelopeObject } from './helpers';

const SUBSCRIBER = 'balances';
const AGGREGATES = 4;
const DEPOSITS = 100;
/** Every EMIT_EVERY-th deposit also emits an event, so its write is a transaction with the outbox Put. */
const EMIT_EVERY = 4;
const SEEDS = [5, 6, 7];

interface Account extends Record<string, unknown> {
  readonly balance: number;
}

const admin = localClient();

function depositBody(id: string, data: Record<string, unknown>): string {
  return JSON.stringify(envelopeObject({ id, type: 'FundsDeposited', subject: String(data.account), data }));
}

function plan(seed: number): PlannedMessage[] {
  const planned: PlannedMessage[] = [];
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
    const original = planned[reused] as PlannedMessage;
    const data = { account: original.account, amount: 1000 + reused, notify: original.notify };
    planned.push({ body: depositBody(original.id as string, data), id: original.id, expect: 'reused-id', ...data });
  }
  return planned;
}

describe('aggregate mode, proof under at-least-once delivery, contention, crashes, lost responses and throttling', () => {
  test.each(SEEDS)('seed %i: every change exactly once, every message applied or dead-lettered with its reason', async (seed) => {
    const [accountsTable, outboxConfig] = await Promise.all([createKeyedTable(admin, 'proof-accounts'), createOutbox(admin, { eventSource: 'balances' }, 'proof-outbox')]);
    const planned = plan(seed);

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

    const run = await deliverPlanned({
      seed,
      planned,
      faults: [
        { operation: 'GetItem', within: 200, throttles: 4 },
        { operation: 'PutItem', within: 120, lostResponses: 4, throttles: 4, throttleErrors: ['ProvisionedThroughputExceededException'] },
        { operation: 'TransactWriteItems', within: 30, lostResponses: 2, throttles: 1 },
      ],
      consumer: ({ client, deadLetter, logger }) =>
        createAggregateConsumer<Deposit, Account>({
          locate: (envelope) => ({ tableName: accountsTable, key: { pk: envelope.data.account } }),
          apply,
          parse,
          client,
          config: { subscriberName: SUBSCRIBER },
          outbox: new Outbox({ client, config: outboxConfig }),
          deadLetter,
          logger,
          metricsSink: () => undefined,
        }),
    });

    const aggregates = new Map((await scanItems(admin, accountsTable)).map((item) => [item.pk as string, item]));
    // an entry is `<eventId> <first 16 hex digits of the payload fingerprint>`
    const entryOf = (message: PlannedMessage) => `${message.id as string} ${fingerprintOf(message).slice('sha256:'.length, 'sha256:'.length + 16)}`;
    // an entry may carry the event time after '@' (see processed-messages.ts)
    const remembered = (message: PlannedMessage) =>
      ((aggregates.get(message.account as string)?.processedMessages ?? []) as string[]).some((entry) => entry === entryOf(message) || entry.startsWith(`${entryOf(message)}@`));
    const applied = planned.filter((message) => (message.expect === 'apply' || message.expect === 'reused-id') && remembered(message));
    expect(applied).toHaveLength(DEPOSITS); // one of each reused pair, never both

    // dead letters: exactly the poison messages and the losers of the reused ids, each with its reason
    expectDeadLetters(run.deadLetters, planned, applied);

    // each aggregate: version = number of distinct messages applied, balance = their sum, list = exactly their ids
    expect(aggregates.size).toBe(AGGREGATES);
    for (const [account, item] of aggregates) {
      const mine = applied.filter((message) => message.account === account);
      expect(item.aggregateVersion).toBe(mine.length);
      expect(item.balance).toBe(mine.reduce((sum, message) => sum + (message.amount as number), 0));
      const ids = (item.processedMessages as string[]).map((entry) => entry.slice(0, entry.lastIndexOf(' ')));
      expect(new Set(ids).size).toBe(ids.length);
      expect([...ids].sort()).toEqual(mine.map((message) => message.id as string).sort());
    }

    // every emitted event exists once, for the payload that was applied
    await expectEmittedOnce(admin, outboxConfig.outboxTableName, SUBSCRIBER, applied.filter((message) => message.notify === true));

    // the contention really happened (deliverPlanned checked the faults)
    const processed = run.lines.filter((line) => line.outcome === 'processed');
    expect(processed.some((line) => (line.attempts as number) > 1)).toBe(true);
    expect(run.lines.map((line) => line.outcome)).toContain('duplicate');
  });
});
