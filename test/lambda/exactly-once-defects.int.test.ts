/**
 * The runtime defects a second review found (issue 19), each pinned against DynamoDB Local through the fault proxy:
 * - a handler that changes its event in place must not see its own change again when its attempt is retried (a
 *   transaction conflict, an aggregate's version race) or when the next step runs: each run gets a fresh event;
 * - a write DynamoDB refuses only in the item's current state (a map another event creates) is retried, not
 *   dead-lettered at once;
 * - a commit that landed but whose response was lost (the SDK's retry then meeting a conflict) is `processed`, not
 *   `duplicate`.
 */
import { GetItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createAggregateConsumer } from '../../lambda/aggregate/aggregate-consumer';
import type { ConsumerBaseConfig, ConsumerConfig, LeaseConsumerConfig } from '../../lambda/config';
import { createTransactionalConsumer, type TransactionalConsumerOptions } from '../../lambda/consumer/transactional-consumer';
import { createMultiStepConsumer } from '../../lambda/processing/multi-step-consumer';
import { localClient } from '../support/dynamodb-client';
import type { FaultProxy } from '../support/fault-proxy';
import { createInbox, createKeyedTable, createLeaseInbox } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';
import { envelopeObject, outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

const TRANSACT = 'DynamoDB_20120810.TransactWriteItems';

interface Deposit {
  account: string;
  amount: number;
}

let client: DynamoDBClient;
let proxy: FaultProxy;
let ledgerTable: string;
let config: ConsumerConfig;
let leaseConfig: LeaseConsumerConfig;

beforeAll(async () => {
  ({ client, proxy } = await startTestbed());
  [ledgerTable, config, leaseConfig] = await Promise.all([
    createKeyedTable(client, 'ledger'),
    createInbox(client, { subscriberName: 'billing', deduplicationWindowSeconds: 3600 }),
    createLeaseInbox(client, { subscriberName: 'invoicing', deduplicationWindowSeconds: 3600, leaseDurationSeconds: 60, processingMode: 'multi-step' }),
  ]);
});
afterAll(() => proxy.stop());

function deposit(amount: number): { id: string; account: string; body: string } {
  const account = `account-${crypto.randomUUID()}`;
  const envelope = envelopeObject({ data: { account, amount } });
  return { id: envelope.id as string, account, body: JSON.stringify(envelope) };
}

async function attribute(account: string, name: string): Promise<Record<string, unknown> | undefined> {
  const item = (await client.send(new GetItemCommand({ TableName: ledgerTable, Key: { pk: { S: account } }, ConsistentRead: true }))).Item;
  return item?.[name] as Record<string, unknown> | undefined;
}

function transactional(overrides: Partial<TransactionalConsumerOptions<Deposit>>) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = createTransactionalConsumer<Deposit>({
    handle: () => undefined,
    client: localClient({ endpoint: proxy.endpoint }),
    config,
    deadLetter,
    logger,
    metricsSink: () => undefined,
    batchRead: false,
    ...overrides,
  });
  return { handler, lines, deadLetter };
}

describe('each run of a handler gets a fresh event (defect 2)', () => {
  test('transactional: a handler that scales its amount in place, retried after a TransactionConflict, commits the amount once scaled', async () => {
    const message = deposit(7);
    let runs = 0;
    const { handler, lines } = transactional({
      handle: (envelope, tx) => {
        runs += 1;
        envelope.data.amount *= 100; // normalizes in place: euros to cents
        tx.update({ TableName: ledgerTable, Key: { pk: envelope.data.account }, UpdateExpression: 'ADD balance :amount', ExpressionAttributeValues: { ':amount': envelope.data.amount } });
      },
    });
    const conflicts = proxy.inject({ target: TRANSACT, fault: { kind: 'transaction-conflict' } });

    const response = await handler({ Records: [sqsRecord(message.body)] });

    expect(conflicts()).toBe(1);
    expect(runs).toBe(2);
    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(await attribute(message.account, 'balance')).toEqual({ N: '700' });
  });

  test("aggregate: an apply that scales the event in place, run again after losing the version race, applies the amount once scaled", async () => {
    const message = deposit(3);
    let runs = 0;
    const { logger, lines } = recordingLogger();
    const handler = createAggregateConsumer<Deposit, { balance: number }>({
      config: { subscriberName: 'balances' } satisfies ConsumerBaseConfig,
      client,
      logger,
      deadLetter: new RecordingDeadLetterPublisher(),
      metricsSink: () => undefined,
      locate: (envelope) => ({ tableName: ledgerTable, key: { pk: envelope.data.account } }),
      apply: async (current, envelope) => {
        runs += 1;
        envelope.data.amount *= 100;
        if (runs === 1) {
          // another writer changes the aggregate between this attempt's read and its write: the version race is lost
          await client.send(new UpdateItemCommand({ TableName: ledgerTable, Key: { pk: { S: envelope.data.account } }, UpdateExpression: 'ADD version :one', ExpressionAttributeValues: { ':one': { N: '1' } } }));
        }
        return { state: { balance: (current?.balance ?? 0) + envelope.data.amount } };
      },
    });

    await handler({ Records: [sqsRecord(message.body)] });

    expect(runs).toBe(2);
    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(await attribute(message.account, 'balance')).toEqual({ N: '300' });
  });

  test('multi-step: a step that changes the event in place does not change what the next step sees (a redelivery would not show it either)', async () => {
    const message = deposit(5);
    const seen: number[] = [];
    const { logger, lines } = recordingLogger();
    const handler = createMultiStepConsumer<Deposit>({
      config: leaseConfig,
      client,
      logger,
      deadLetter: new RecordingDeadLetterPublisher(),
      metricsSink: () => undefined,
      steps: [
        { name: 'scale', run: (envelope) => void (envelope.data.amount *= 100) },
        { name: 'charge', run: (envelope) => void seen.push(envelope.data.amount) },
      ],
    });

    await handler({ Records: [sqsRecord(message.body)] });

    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(seen).toEqual([5]);
  });
});

describe('a write refused only in the item\'s current state is retried, not dead-lettered (defect 3)', () => {
  test('SET days.#day on a map another event creates fails (retried) until that event arrives, then applies', async () => {
    const account = `account-${crypto.randomUUID()}`;
    const setDay = JSON.stringify(envelopeObject({ type: 'DaySet', data: { account, amount: 1 } }));
    const createDays = JSON.stringify(envelopeObject({ type: 'DaysCreated', data: { account, amount: 0 } }));
    const { handler, lines, deadLetter } = transactional({
      handle: (envelope, tx) => {
        if (envelope.type === 'DaysCreated') {
          tx.update({ TableName: ledgerTable, Key: { pk: envelope.data.account }, UpdateExpression: 'SET days = :empty', ExpressionAttributeValues: { ':empty': {} } });
        } else {
          tx.update({
            TableName: ledgerTable,
            Key: { pk: envelope.data.account },
            UpdateExpression: 'SET days.#day = :v',
            ExpressionAttributeNames: { '#day': 'mon' },
            ExpressionAttributeValues: { ':v': envelope.data.amount },
          });
        }
      },
    });

    const early = await handler({ Records: [sqsRecord(setDay, { messageId: 'early' })] });

    expect(early.batchItemFailures).toEqual([{ itemIdentifier: 'early' }]);
    expect(deadLetter.published).toEqual([]);
    const failure = lines.find((line) => line.outcome === 'failed');
    expect(failure).toMatchObject({ level: 'WARN' });
    expect(String((failure?.error as { message?: string } | undefined)?.message ?? failure?.error)).toMatch(
      /DynamoDB refused .* in the item's current state: The document path provided in the update expression is invalid for update; .*retried/,
    );

    await handler({ Records: [sqsRecord(createDays)] });
    const retried = await handler({ Records: [sqsRecord(setDay, { messageId: 'early', receiveCount: 2 })] });

    expect(retried.batchItemFailures).toEqual([]);
    expect(await attribute(account, 'days')).toEqual({ M: { mon: { N: '1' } } });
  });

  test('a request that can never succeed (a syntax error) is still dead-lettered at once', async () => {
    const message = deposit(1);
    const { handler, deadLetter } = transactional({
      handle: (envelope, tx) => tx.update({ TableName: ledgerTable, Key: { pk: envelope.data.account }, UpdateExpression: 'SET = :v', ExpressionAttributeValues: { ':v': 1 } }),
    });

    await handler({ Records: [sqsRecord(message.body)] });

    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['InvalidWriteError']);
  });
});

describe('a landed commit is processed, never a duplicate (defect 5)', () => {
  test('the response of the commit is lost, the SDK retry meets a TransactionConflict, the runtime retries: processed, applied once', async () => {
    const message = deposit(9);
    const emf: string[] = [];
    const { handler, lines } = transactional({
      handle: (envelope, tx) => tx.update({ TableName: ledgerTable, Key: { pk: envelope.data.account }, UpdateExpression: 'ADD balance :amount', ExpressionAttributeValues: { ':amount': envelope.data.amount } }),
      metricsSink: (line) => void emf.push(line),
    });
    const dropped = proxy.inject({ target: TRANSACT, fault: { kind: 'drop-response' } });
    const conflicted = proxy.inject({ target: TRANSACT, nth: 2, fault: { kind: 'transaction-conflict' } });

    const response = await handler({ Records: [sqsRecord(message.body)] });

    expect([dropped(), conflicted()]).toEqual([1, 1]);
    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(emf.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([expect.objectContaining({ Processed: 1, Duplicates: 0 })]);
    expect(await attribute(message.account, 'balance')).toEqual({ N: '9' });
  });
});
