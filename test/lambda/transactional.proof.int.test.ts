/**
 * Proof of the transactional mode against a real DynamoDB Local: many messages through at-least-once delivery with
 * duplicates, concurrent duplicates, and crashes injected where a crash matters (before the commit, and after it but
 * before the ack), plus lost responses and throttling from the fault proxy. Asserted from the real tables: every
 * message's effect (a ledger credit and an emitted event) applied exactly once, and no message lost: each is
 * processed, or in the dead-letter recorder with its reason.
 */
import { describe, expect, test } from 'vitest';
import { createTransactionalConsumer, type EventHandler } from '../../lambda/consumer/transactional-consumer';
import { PermanentError } from '../../lambda/errors';
import { Outbox } from '../../lambda/producer/outbox';
import { localClient } from '../support/dynamodb-client';
import { deliverPlanned, expectDeadLetters, expectEmittedOnce, fingerprintOf, type Deposit, type PlannedMessage } from '../support/proof/commit-proof';
import { scanItems } from '../support/proof/table-reads';
import { createInbox, createKeyedTable, createOutbox } from '../support/proof/tables';
import { envelopeObject } from './helpers';

const SUBSCRIBER = 'billing';
const ACCOUNTS = 5;
const DEPOSITS = 88;
const PINGS = 6;
const SEEDS = [11, 22, 33];

const admin = localClient();

function depositBody(id: string, account: string, amount: unknown): string {
  return JSON.stringify(envelopeObject({ id, type: 'FundsDeposited', subject: account, data: { account, amount } }));
}

function plan(seed: number): PlannedMessage[] {
  const planned: PlannedMessage[] = [];
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
    const original = planned[reused] as PlannedMessage;
    planned.push({ body: depositBody(original.id as string, original.account as string, 1000 + reused), id: original.id, expect: 'reused-id', account: original.account, amount: 1000 + reused });
  }
  return planned;
}

describe('transactional mode, proof under at-least-once delivery, crashes, lost responses and throttling', () => {
  test.each(SEEDS)('seed %i: every effect exactly once, every message processed or dead-lettered with its reason', async (seed) => {
    const [ledgerTable, config, outboxConfig] = await Promise.all([
      createKeyedTable(admin, 'proof-ledger'),
      createInbox(admin, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }, 'proof-inbox'),
      createOutbox(admin, { eventSource: 'billing' }, 'proof-outbox'),
    ]);
    const planned = plan(seed);

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

    // an invocation may crash at its 1st, 2nd or 3rd commit, before or after it; no message may be lost
    const run = await deliverPlanned({
      seed,
      planned,
      // faults inside DynamoDB: lost responses (DynamoDB applied the request) and throttling, at random positions
      faults: [
        {
          operation: 'TransactWriteItems',
          within: 140,
          lostResponses: 6,
          throttles: 6,
          throttleErrors: ['ThrottlingException', 'ProvisionedThroughputExceededException'],
          throttleRun: 2,
        },
        { operation: 'PutItem', within: 15, lostResponses: 1, throttles: 1 },
      ],
      consumer: ({ client, deadLetter, logger }) =>
        createTransactionalConsumer<Deposit>({ handle, parse, client, config, outbox: new Outbox({ client, config: outboxConfig }), deadLetter, logger, metricsSink: () => undefined }),
    });

    // which payload of each reused id won is whatever the inbox recorded
    const inbox = await scanItems(admin, config.inboxTableName);
    const recordedFingerprint = new Map(inbox.map((item) => [item.eventId as string, item.payloadFingerprint as string]));
    const applied = planned.filter((message) => (message.expect === 'apply' || message.expect === 'reused-id') && recordedFingerprint.get(message.id as string) === fingerprintOf(message));
    const reusedPairs = planned.filter((message) => message.expect === 'reused-id');
    expect(applied).toHaveLength(DEPOSITS + PINGS); // one of each reused pair, never both

    // every dead letter is a poison message (or the loser of a reused id), with the right reason
    expectDeadLetters(run.deadLetters, planned, applied);
    expect(reusedPairs.length + 4).toBe(planned.length - applied.length);

    // effects, from the real tables: each account's balance is the sum of its applied deposits, counted once
    const expectedBalances = new Map<string, number>();
    for (const message of applied) {
      if (message.account === undefined) continue;
      expectedBalances.set(message.account, (expectedBalances.get(message.account) ?? 0) + (message.amount as number));
    }
    const ledger = await scanItems(admin, ledgerTable);
    expect(new Map(ledger.map((item) => [item.pk as string, item.balance as number]))).toEqual(expectedBalances);
    // one inbox record per applied message, with the fingerprint of the payload that was applied
    expect(inbox).toHaveLength(applied.length);
    // one emitted event per applied deposit, under its derived id, carrying the applied amount
    await expectEmittedOnce(admin, outboxConfig.outboxTableName, SUBSCRIBER, applied.filter((message) => message.account !== undefined));

    // the faults really happened (besides what deliverPlanned checked)
    const outcomes = run.lines.map((line) => line.outcome);
    expect(outcomes).toContain('duplicate');
    expect(outcomes).toContain('failed');
  });
});
