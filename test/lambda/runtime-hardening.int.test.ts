/**
 * The edge cases of issue 10 (an adversarial review and a chaos run of the runtime), each against DynamoDB Local
 * through the transactional consumer, faults through the proxy: what each delivery applies, acknowledges or
 * dead-letters, and why.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig } from '../../lambda/config';
import { createTransactionalConsumer, type EventHandler, type TransactionalConsumerOptions } from '../../lambda/consumer/transactional-consumer';
import { createLogger } from '../../lambda/logger';
import { CONSUMER_METRICS } from '../../lambda/contract/metric-names';
import { localClient } from '../support/dynamodb-client';
import { startLedgerTestbed, type Deposit, type LedgerTestbed } from '../support/proof/ledger-testbed';
import { envelopeObject, outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

const SUBSCRIBER = 'hardening';
const PUT_ITEM = 'DynamoDB_20120810.PutItem';

let testbed: LedgerTestbed;
let config: ConsumerConfig;
let ledgerTable: string;

beforeAll(async () => {
  testbed = await startLedgerTestbed(SUBSCRIBER);
  ({ config, ledgerTable } = testbed);
});
afterAll(() => testbed.proxy.stop());

const credit: EventHandler<Deposit> = (envelope, tx) => testbed.credit(envelope, tx);
const balance = (account: string) => testbed.balance(account);

function consumer(overrides: Partial<TransactionalConsumerOptions<Deposit>> = {}) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const metrics: Record<string, unknown>[] = [];
  const handler = createTransactionalConsumer<Deposit>({
    handle: credit,
    client: testbed.client,
    config,
    deadLetter,
    logger,
    metricsSink: (line) => metrics.push(JSON.parse(line) as Record<string, unknown>),
    ...overrides,
  });
  return { handler, lines, deadLetter, metrics };
}

let accounts = 0;
const newAccount = (): string => `account-${process.pid}-${++accounts}-${Date.now()}`;


describe('ids that are not well-formed Unicode (issue 10, item 1)', () => {
  test('two ids differing only in an unpaired surrogate are each dead-lettered as malformed, neither taken for the other', async () => {
    const { handler, lines, deadLetter } = consumer();
    const account = newAccount();
    const stem = newAccount();
    const first = sqsRecord(JSON.stringify(envelopeObject({ id: `${stem}\ud800`, data: { account, amount: 5 } })));
    const second = sqsRecord(JSON.stringify(envelopeObject({ id: `${stem}\udfff`, data: { account, amount: 5 } })));

    const response = await handler({ Records: [first, second] });

    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['dead-lettered', 'dead-lettered']);
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['MalformedEnvelopeError', 'MalformedEnvelopeError']);
    expect(deadLetter.published[0]?.errorMessage).toMatch(/field 'id' must be well-formed Unicode, but has an unpaired UTF-16 surrogate \(U\+D800 at index \d+\)/);
    expect(deadLetter.published[1]?.errorMessage).toMatch(/an unpaired UTF-16 surrogate \(U\+DFFF at index \d+\)/);
    expect(await balance(account)).toBeUndefined();
  });

  test('a well-formed id with a whole emoji is applied', async () => {
    const { handler, lines } = consumer();
    const account = newAccount();
    const record = sqsRecord(JSON.stringify(envelopeObject({ id: `${newAccount()}-😀`, data: { account, amount: 3 } })));

    expect((await handler({ Records: [record] })).batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(await balance(account)).toBe(3);
  });
});

describe('subscriber names that cannot be part of a key (issue 10, item 1)', () => {
  test.each([
    ['an unpaired surrogate', 'billing\ud800', /the subscriber name must be well-formed Unicode, but has an unpaired UTF-16 surrogate \(U\+D800 at index 7\)/],
    ['the key separator', 'billing#eu', /the subscriber name must not contain '#', the record keys' separator, but was 'billing#eu'/],
  ])('a config naming the subscriber with %s fails at creation', (_what, subscriberName, message) => {
    expect(() => consumer({ config: { ...config, subscriberName } })).toThrow(message);
  });
});

describe('the payload fingerprint is taken as delivered (issue 10, item 5)', () => {
  test('a parse that adds a default field does not turn a redelivery into a payload mismatch', async () => {
    let parsedAt = 0;
    const parse = (data: unknown): Deposit => ({ ...(data as Deposit), parsedAt: ++parsedAt }) as Deposit;
    const account = newAccount();
    const record = sqsRecord(JSON.stringify(envelopeObject({ data: { account, amount: 4 } })));

    const first = consumer({ parse });
    await first.handler({ Records: [record] });
    const redelivery = consumer({ parse });
    await redelivery.handler({ Records: [{ ...record, attributes: { ApproximateReceiveCount: '2' } }] });

    expect(outcomesOf(first.lines)).toEqual(['processed']);
    expect(outcomesOf(redelivery.lines)).toEqual(['duplicate']);
    expect(await balance(account)).toBe(4);
  });
});

describe('deeply nested bodies (issue 10, item 6)', () => {
  test('a body nested 20,000 levels deep is dead-lettered as malformed at once, naming the bound', async () => {
    const { handler, lines, deadLetter } = consumer();
    const deep = `${'['.repeat(20_000)}${']'.repeat(20_000)}`;
    const body = JSON.stringify(envelopeObject()).replace('"data":{"account":"account-1","amount":10}', `"data":${deep}`);
    expect(body).toContain('[[[[');

    const response = await handler({ Records: [sqsRecord(body)] });

    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['dead-lettered']);
    expect(deadLetter.published[0]?.errorName).toBe('MalformedEnvelopeError');
    expect(deadLetter.published[0]?.errorMessage).toMatch(/nested more than 64 levels deep/);
  });

  test('a body nested exactly at the bound is applied', async () => {
    const { handler, lines } = consumer();
    const account = newAccount();
    let nested: unknown = 'leaf';
    for (let level = 1; level < 63; level++) nested = [nested]; // the envelope object is level 1, data level 2
    const record = sqsRecord(JSON.stringify(envelopeObject({ data: { account, amount: 2, nested } })));

    expect((await handler({ Records: [record] })).batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['processed']);
  });
});

describe('values that can never be written (issue 10, item 7)', () => {
  test.each([
    ['NaN', Number.NaN, /Special numeric value NaN is not allowed/],
    ['a Date', new Date(0), /Unsupported type passed/],
    ['a number beyond double precision', 2 ** 53 + 2, /greater than Number.MAX_SAFE_INTEGER/],
  ])('a handler staging %s is dead-lettered at once as InvalidWriteError, naming the staged write', async (_what, value, reason) => {
    const account = newAccount();
    const { handler, lines, deadLetter } = consumer({
      handle: (envelope, tx) => {
        tx.put({ TableName: ledgerTable, Item: { pk: envelope.data.account, value } });
      },
    });

    const response = await handler({ Records: [sqsRecord(JSON.stringify(envelopeObject({ data: { account, amount: 1 } })))] });

    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['dead-lettered']);
    expect(deadLetter.published[0]?.errorName).toBe('InvalidWriteError');
    expect(deadLetter.published[0]?.errorMessage).toMatch(new RegExp(`action 0 \\(staged Put on table '${ledgerTable}'\\): its Item attribute 'value' cannot be written`));
    expect(deadLetter.published[0]?.errorMessage).toMatch(reason);
    expect(await balance(account)).toBeUndefined();
  });

  test.each([
    ['named by its expression', { ':total': undefined }],
    ['the only value, so none would be left', { ':unused': undefined }],
  ])('a handler staging an undefined expression value %s (which no client option can write) is dead-lettered at once, told so', async (_what, values) => {
    const account = newAccount();
    const [name] = Object.keys(values);
    const { handler, deadLetter } = consumer({
      handle: (envelope, tx) => {
        tx.update({ TableName: ledgerTable, Key: { pk: envelope.data.account }, UpdateExpression: name === ':total' ? 'SET total = :total' : 'SET total = if_not_exists(total, total)', ExpressionAttributeValues: values });
      },
    });

    const response = await handler({ Records: [sqsRecord(JSON.stringify(envelopeObject({ data: { account, amount: 1 } })))] });

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetter.published[0]?.errorName).toBe('InvalidWriteError');
    expect(deadLetter.published[0]?.errorMessage).toContain(`its ExpressionAttributeValues attribute '${name}' cannot be written: its value is undefined, which DynamoDB cannot store or compare (removeUndefinedValues would drop it and leave the request incomplete): check what computes it`);
    expect(await balance(account)).toBeUndefined();
  });

  test('an undefined key attribute is dropped as removeUndefinedValues does: a key left incomplete is refused by DynamoDB, told it may be an undefined value; an extra one is written', async () => {
    const missing = newAccount();
    const refused = consumer({ handle: (_envelope, tx) => void tx.update({ TableName: ledgerTable, Key: { pk: undefined }, UpdateExpression: 'ADD balance :one', ExpressionAttributeValues: { ':one': 1 } }) });
    expect((await refused.handler({ Records: [sqsRecord(JSON.stringify(envelopeObject({ data: { account: missing, amount: 1 } })))] })).batchItemFailures).toEqual([]);
    expect(refused.deadLetter.published[0]?.errorName).toBe('InvalidWriteError');
    expect(refused.deadLetter.published[0]?.errorMessage).toMatch(/DynamoDB refused the write as invalid: .*an undefined value is dropped/);

    const extra = newAccount();
    const written = consumer({ handle: (envelope, tx) => void tx.update({ TableName: ledgerTable, Key: { pk: envelope.data.account, sk: undefined }, UpdateExpression: 'ADD balance :one', ExpressionAttributeValues: { ':one': 1 } }) });
    expect((await written.handler({ Records: [sqsRecord(JSON.stringify(envelopeObject({ data: { account: extra, amount: 1 } })))] })).batchItemFailures).toEqual([]);
    expect(outcomesOf(written.lines)).toEqual(['processed']);
    expect(await balance(extra)).toBe(1);
  });

  test('an undefined expression value no expression names is dropped, as removeUndefinedValues does, and the write applied', async () => {
    const account = newAccount();
    const { handler, lines } = consumer({
      handle: (envelope, tx) => {
        tx.update({ TableName: ledgerTable, Key: { pk: envelope.data.account }, UpdateExpression: 'ADD balance :amount', ExpressionAttributeValues: { ':amount': 3, ':amountNote': undefined } });
      },
    });

    const response = await handler({ Records: [sqsRecord(JSON.stringify(envelopeObject({ data: { account, amount: 3 } })))] });

    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(await balance(account)).toBe(3);
  });

  test('low-level attribute values in tx.update, which DynamoDB refuses as invalid, are dead-lettered at once', async () => {
    const account = newAccount();
    const { handler, lines, deadLetter } = consumer({
      handle: (envelope, tx) => {
        tx.update({
          TableName: ledgerTable,
          Key: { pk: envelope.data.account },
          UpdateExpression: 'ADD balance :amount',
          ExpressionAttributeValues: { ':amount': { N: '7' } },
        });
      },
    });

    const response = await handler({ Records: [sqsRecord(JSON.stringify(envelopeObject({ data: { account, amount: 7 } })))] });

    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['dead-lettered']);
    expect(deadLetter.published[0]?.errorName).toBe('InvalidWriteError');
    expect(deadLetter.published[0]?.errorMessage).toMatch(/DynamoDB refused the write as invalid: .*operand type: MAP/);
  });
});

describe('numbers beyond double precision (issue 10, item 8)', () => {
  test('an id reused with data differing only past double precision is taken as a redelivery: the documented limit', async () => {
    const account = newAccount();
    const id = `${newAccount()}-big`;
    const body = (amount: string) =>
      JSON.stringify(envelopeObject({ id, data: { account, amount: 1 } })).replace('"amount":1', `"amount":1,"reference":${amount}`);

    const first = consumer();
    await first.handler({ Records: [sqsRecord(body('9007199254740993'))] });
    const reused = consumer();
    await reused.handler({ Records: [sqsRecord(body('9007199254740992'))] });

    expect(outcomesOf(first.lines)).toEqual(['processed']);
    expect(outcomesOf(reused.lines)).toEqual(['duplicate']);
  });
});

describe('a lost PutItem response on the nothing-staged path (issue 10, item 9)', () => {
  test('the SDK retry that finds the runtime\'s own record counts the message as processed, not as a duplicate', async () => {
    const { handler, lines, metrics } = consumer({
      handle: () => undefined, // nothing staged: the inbox record alone, one PutItem
      client: localClient({ endpoint: testbed.proxy.endpoint, maxAttempts: 3 }),
    });
    const fired = testbed.proxy.inject({ target: PUT_ITEM, times: 1, fault: { kind: 'drop-response' } });

    const response = await handler({ Records: [sqsRecord(JSON.stringify(envelopeObject()))] });

    expect(fired()).toBe(1);
    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(metrics[0]?.[CONSUMER_METRICS.PROCESSED]).toBe(1);
    expect(metrics[0]?.[CONSUMER_METRICS.DUPLICATES]).toBe(0);
  });

  test('a real redelivery after that is still a duplicate', async () => {
    const { handler, lines } = consumer({ handle: () => undefined });
    const record = sqsRecord(JSON.stringify(envelopeObject()));

    await handler({ Records: [record] });
    await handler({ Records: [{ ...record, attributes: { ApproximateReceiveCount: '2' } }] });

    expect(outcomesOf(lines)).toEqual(['processed', 'duplicate']);
  });
});

describe('CloudEvents without time (issue 10, item 10)', () => {
  test('a valid CloudEvents 1.0 event without the optional time attribute is applied', async () => {
    const { handler, lines } = consumer();
    const account = newAccount();
    const envelope = envelopeObject({ data: { account, amount: 6 } });
    delete envelope.time;

    expect((await handler({ Records: [sqsRecord(JSON.stringify(envelope))] })).batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(await balance(account)).toBe(6);
  });
});

describe('log volume at the default level (issue 11, part 3)', () => {
  test('at INFO a batch writes one summary line and no line per applied or duplicate record; failures keep theirs', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = createLogger({ level: 'INFO', sink: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
    const handler = createTransactionalConsumer<Deposit>({
      handle: (envelope, tx, context) => {
        if (envelope.data.amount < 0) throw new Error('negative');
        return credit(envelope, tx, context);
      },
      client: testbed.client,
      config,
      logger,
      deadLetter: new RecordingDeadLetterPublisher(),
      metricsSink: () => undefined,
    });
    const record = (amount: number) => sqsRecord(JSON.stringify(envelopeObject({ data: { account: newAccount(), amount } })));
    const applied = record(1);
    await handler({ Records: [applied] });
    lines.length = 0;

    const failing = record(-1);
    await handler({ Records: [applied, record(2), record(3), failing] });

    expect(lines.filter((line) => line.message === 'batch')).toEqual([
      expect.objectContaining({ level: 'INFO', subscriber: SUBSCRIBER, records: 4, outcomes: { processed: 2, duplicate: 1, failed: 1 } }),
    ]);
    expect(lines.filter((line) => typeof line.outcome === 'string')).toEqual([
      expect.objectContaining({ level: 'WARN', outcome: 'failed', sqsMessageId: failing.messageId }),
    ]);
  });
});
