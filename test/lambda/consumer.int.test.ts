import { GetItemCommand, PutItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ConfigurationError, type ConsumerConfig, type ProducerConfig } from '../../lambda/config';
import { ENV } from '../../lambda/contract/environment';
import type { SqsBatchHandler } from '../../lambda/consumer/create-consumer';
import { createTransactionalConsumer, type EventHandler, type TransactionalConsumerOptions } from '../../lambda/consumer/transactional-consumer';
import { parseEnvelope } from '../../lambda/envelope';
import { PermanentError, RetryableError } from '../../lambda/errors';
import { derivedEventId, payloadFingerprint } from '../../lambda/fingerprint';
import { createLeaseConsumer } from '../../lambda/processing/lease-consumer';
import { Outbox } from '../../lambda/producer/outbox';
import { INBOX_ITEM, OUTBOX_ITEM, PROCESSING_RECORD, RECORD_STATUS, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { localClient } from '../support/dynamodb-client';
import type { FaultProxy } from '../support/fault-proxy';
import { outboxItemsWithEventId } from '../support/proof/table-reads';
import { createInbox, createKeyedTable, createOutbox } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';
import { envelopeObject, outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

const SUBSCRIBER = 'billing';
const WINDOW_SECONDS = 3600;
const TRANSACT = 'DynamoDB_20120810.TransactWriteItems';
const BATCH_GET = 'DynamoDB_20120810.BatchGetItem';

interface Deposit {
  readonly account: string;
  readonly amount: number;
}

let client: DynamoDBClient;
let proxy: FaultProxy;
let ledgerTable: string;
let config: ConsumerConfig;
let outboxConfig: ProducerConfig;

beforeAll(async () => {
  ({ client, proxy } = await startTestbed());
  [ledgerTable, config, outboxConfig] = await Promise.all([
    createKeyedTable(client, 'ledger'),
    createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: WINDOW_SECONDS }),
    createOutbox(client, { eventSource: 'billing-service', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
  ]);
});
afterAll(() => proxy.stop());

/** Credits the account: the business write that must happen exactly once per event. */
const credit: EventHandler<Deposit> = (envelope, tx) => {
  tx.update({
    TableName: ledgerTable,
    Key: { pk: envelope.data.account },
    UpdateExpression: 'ADD balance :amount',
    ExpressionAttributeValues: { ':amount': envelope.data.amount },
  });
};

function consumer(overrides: Partial<TransactionalConsumerOptions<Deposit>> = {}) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = createTransactionalConsumer<Deposit>({ handle: credit, client, config, deadLetter, logger, metricsSink: () => undefined, ...overrides });
  return { handler, lines, deadLetter };
}

function deposit(amount = 10, overrides: Record<string, unknown> = {}): { id: string; account: string; body: string } {
  const account = `account-${crypto.randomUUID()}`;
  const envelope = envelopeObject({ data: { account, amount }, ...overrides });
  return { id: envelope.id as string, account, body: JSON.stringify(envelope) };
}

async function balance(account: string): Promise<number | undefined> {
  const item = (await client.send(new GetItemCommand({ TableName: ledgerTable, Key: { pk: { S: account } }, ConsistentRead: true }))).Item;
  return item?.balance?.N === undefined ? undefined : Number(item.balance.N);
}

async function inboxItem(eventId: string) {
  const key = { [TABLE_SCHEMA.PARTITION_KEY]: { S: `${SUBSCRIBER}${INBOX_ITEM.KEY_SEPARATOR}${eventId}` } };
  return (await client.send(new GetItemCommand({ TableName: config.inboxTableName, Key: key, ConsistentRead: true }))).Item;
}

describe('createTransactionalConsumer', () => {
  test('applies a duplicate delivery once', async () => {
    const { handler, lines } = consumer();
    const message = deposit(10);

    const first = await handler({ Records: [sqsRecord(message.body)] });
    const second = await handler({ Records: [sqsRecord(message.body, { receiveCount: 1 })] });

    expect(first.batchItemFailures).toEqual([]);
    expect(second.batchItemFailures).toEqual([]);
    expect(await balance(message.account)).toBe(10);
    expect(outcomesOf(lines)).toEqual(['processed', 'duplicate']);
  });

  test('records the inbox item in the wire format, with the payload fingerprint and the TTL in epoch seconds', async () => {
    const now = new Date('2024-05-01T12:00:00.500Z');
    const { handler } = consumer({ now: () => now });
    const message = deposit(5, { type: 'FundsDeposited' });

    await handler({ Records: [sqsRecord(message.body)] });

    expect(await inboxItem(message.id)).toEqual({
      pk: { S: `billing#${message.id}` },
      eventId: { S: message.id },
      eventType: { S: 'FundsDeposited' },
      subscriber: { S: 'billing' },
      processedAt: { S: '2024-05-01T12:00:00.500Z' },
      payloadFingerprint: { S: payloadFingerprint(parseEnvelope(message.body)) },
      lastWrite: { S: expect.stringMatching(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/) },
      expiresAt: { N: String(Math.floor(now.getTime() / 1000) + WINDOW_SECONDS) },
    });
  });

  test('a crash after commit (response lost), then redelivery, applies once', async () => {
    // the first invocation's client never retries, so the lost response surfaces as an error
    const crashing = consumer({ client: localClient({ endpoint: proxy.endpoint, maxAttempts: 1 }) });
    const message = deposit(25);
    const record = sqsRecord(message.body);
    const fired = proxy.inject({ target: TRANSACT, fault: { kind: 'drop-response' } });

    const crashed = await crashing.handler({ Records: [record] });

    expect(fired()).toBe(1);
    expect(crashed.batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(await balance(message.account)).toBe(25); // it did commit

    const redelivery = consumer();
    const redelivered = await redelivery.handler({ Records: [{ ...record, attributes: { ApproximateReceiveCount: '2' } }] });

    expect(redelivered.batchItemFailures).toEqual([]);
    expect(outcomesOf(redelivery.lines)).toEqual(['duplicate']);
    expect(await balance(message.account)).toBe(25);
  });

  test('two concurrent deliveries of one message apply once', async () => {
    const { handler, lines } = consumer();
    const message = deposit(7);
    const record = sqsRecord(message.body);

    const responses = await Promise.all([handler({ Records: [record] }), handler({ Records: [record] })]);

    expect(await balance(message.account)).toBe(7);
    const outcomes = outcomesOf(lines).sort();
    expect(outcomes.filter((outcome) => outcome === 'processed')).toHaveLength(1);
    expect(['duplicate', 'failed']).toContain(outcomes.find((outcome) => outcome !== 'processed'));
    // a delivery that lost a transaction conflict is retried by SQS; that retry must not apply it again
    if (responses.some((response) => response.batchItemFailures.length > 0)) {
      expect((await handler({ Records: [record] })).batchItemFailures).toEqual([]);
    }
    expect(await balance(message.account)).toBe(7);
  });

  test('a malformed message goes to the dead-letter publisher with its reason; the rest of the batch commits', async () => {
    const { handler, deadLetter, lines } = consumer();
    const good1 = deposit(1);
    const good2 = deposit(2);
    const malformed = sqsRecord(JSON.stringify({ ...envelopeObject(), id: 42 }), { receiveCount: 3 });

    const response = await handler({ Records: [sqsRecord(good1.body), malformed, sqsRecord(good2.body)] });

    expect(response.batchItemFailures).toEqual([]);
    expect([await balance(good1.account), await balance(good2.account)]).toEqual([1, 2]);
    expect(deadLetter.published).toEqual([
      {
        body: malformed.body,
        errorName: 'MalformedEnvelopeError',
        errorMessage: "malformed event envelope: field 'id' must be a non-empty string, but was a number",
        subscriber: SUBSCRIBER,
        sourceMessageId: malformed.messageId,
        approximateReceiveCount: 3,
        eventId: undefined,
      },
    ]);
    // the records run concurrently: their lines come in the order they finish
    expect(outcomesOf(lines).sort()).toEqual(['dead-lettered', 'processed', 'processed']);
  });

  test('a malformed message is reported as a batch item failure when the dead-letter send fails', async () => {
    const { handler } = consumer({ deadLetter: new RecordingDeadLetterPublisher(true) });
    const good1 = deposit(1);
    const good2 = deposit(2);
    const malformed = sqsRecord('not json at all');

    const response = await handler({ Records: [sqsRecord(good1.body), malformed, sqsRecord(good2.body)] });

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: malformed.messageId }]);
    expect([await balance(good1.account), await balance(good2.account)]).toEqual([1, 2]);
  });

  test('without a dead-letter queue URL, a malformed message is left for SQS redrive', async () => {
    const { logger } = recordingLogger();
    const handler = createTransactionalConsumer<Deposit>({ handle: credit, client, config, logger, metricsSink: () => undefined });
    const malformed = sqsRecord('{}');
    expect((await handler({ Records: [malformed] })).batchItemFailures).toEqual([{ itemIdentifier: malformed.messageId }]);
  });

  test('a PermanentError dead-letters the message with its reason and writes nothing', async () => {
    const { handler, deadLetter } = consumer({
      handle: (envelope, tx) => {
        credit(envelope, tx, undefined as never);
        throw new PermanentError(`account ${envelope.data.account} is closed`);
      },
    });
    const message = deposit(9);
    const record = sqsRecord(message.body);

    const response = await handler({ Records: [record] });

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetter.published).toEqual([
      expect.objectContaining({ body: message.body, errorName: 'PermanentError', errorMessage: `account ${message.account} is closed`, eventId: message.id }),
    ]);
    expect(await balance(message.account)).toBeUndefined();
    expect(await inboxItem(message.id)).toBeUndefined();
  });

  test('throttling on one record is retried inside the invocation (contention is not the message\'s fault); its peers are unaffected', async () => {
    const { handler, lines } = consumer({ client: localClient({ endpoint: proxy.endpoint, maxAttempts: 1 }) });
    const messages = [deposit(1), deposit(2), deposit(3)];
    const records = messages.map((message) => sqsRecord(message.body));
    const fired = proxy.inject({ target: TRANSACT, nth: 2, fault: { kind: 'throttle', errorType: 'ProvisionedThroughputExceededException' } });

    const response = await handler({ Records: records });

    expect(fired()).toBe(1);
    expect(response.batchItemFailures).toEqual([]);
    expect(await Promise.all(messages.map((message) => balance(message.account)))).toEqual([1, 2, 3]);
    expect(lines.filter((line) => line.outcome === 'processed' && line.attempts === 2)).toHaveLength(1);
  });

  test('a handler that stages nothing still records the inbox item, so a redelivery is a duplicate, answered by the inbox Put (a one-record batch skips the batch read)', async () => {
    let calls = 0;
    const { handler, lines } = consumer({ handle: () => void calls++, client: localClient({ endpoint: proxy.endpoint }) });
    const message = deposit(1);
    const putsBefore = proxy.requestCount('DynamoDB_20120810.PutItem');
    const transactionsBefore = proxy.requestCount(TRANSACT);
    const batchReadsBefore = proxy.requestCount(BATCH_GET);

    await handler({ Records: [sqsRecord(message.body)] });
    expect(await inboxItem(message.id)).toMatchObject({ eventId: { S: message.id }, subscriber: { S: SUBSCRIBER } });
    await handler({ Records: [sqsRecord(message.body)] });

    expect(outcomesOf(lines)).toEqual(['processed', 'duplicate']);
    expect(calls).toBe(2); // staging nothing is harmless to repeat: the failed Put says duplicate
    // one conditional PutItem each delivery (the redelivery's fails on the live record), no transaction, no read
    expect(proxy.requestCount('DynamoDB_20120810.PutItem') - putsBefore).toBe(2);
    expect(proxy.requestCount(TRANSACT) - transactionsBefore).toBe(0);
    expect(proxy.requestCount(BATCH_GET) - batchReadsBefore).toBe(0);
  });

  test('a handler error reports only that record, and writes nothing for it', async () => {
    const messages = [deposit(1), deposit(2), deposit(3)];
    const { handler, lines } = consumer({
      handle: (envelope, tx, context) => {
        if (envelope.data.account === messages[1]?.account) throw new Error('downstream unavailable');
        credit(envelope, tx, context);
      },
    });
    const records = messages.map((message) => sqsRecord(message.body));

    const response = await handler({ Records: records });

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: records[1]?.messageId }]);
    expect(await Promise.all(messages.map((message) => balance(message.account)))).toEqual([1, undefined, 3]);
    expect(await inboxItem(messages[1]?.id as string)).toBeUndefined();
    expect(lines.find((line) => line.outcome === 'failed')).toMatchObject({
      level: 'WARN',
      subscriber: SUBSCRIBER,
      eventId: messages[1]?.id,
      sqsMessageId: records[1]?.messageId,
      error: { name: 'Error', message: 'downstream unavailable' },
    });
  });

  test('a failed business condition reports the record as failed, naming the staged action', async () => {
    const { handler, lines } = consumer({
      handle: (envelope, tx) => {
        tx.conditionCheck({ TableName: ledgerTable, Key: { pk: envelope.data.account }, ConditionExpression: 'attribute_exists(pk)' });
        tx.put({ TableName: ledgerTable, Item: { pk: `${envelope.data.account}-audit` } });
      },
    });
    const message = deposit(1);
    const record = sqsRecord(message.body);

    expect((await handler({ Records: [record] })).batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(await inboxItem(message.id)).toBeUndefined();
    const failed = lines.find((line) => line.outcome === 'failed') as { error: { name: string; message: string } };
    expect(failed.error.name).toBe('TransactionCancelledError');
    expect(failed.error.message).toMatch(/action 0 \(staged ConditionCheck on table '.*'\): ConditionalCheckFailed/);
  });

  test('dead-letters a record whose handler stages two writes to one item, before any request (a one-record batch has no batch read)', async () => {
    const { handler, lines, deadLetter } = consumer({
      client: localClient({ endpoint: proxy.endpoint }),
      handle: (envelope, tx, context) => {
        credit(envelope, tx, context);
        credit(envelope, tx, context);
      },
    });
    const message = deposit(1);
    const sentBefore = proxy.requestCount();
    const batchReadsBefore = proxy.requestCount(BATCH_GET);

    const response = await handler({ Records: [sqsRecord(message.body)] });

    expect(response.batchItemFailures).toEqual([]);
    expect(proxy.requestCount() - sentBefore).toBe(0); // no batch read for one record, no write
    expect(proxy.requestCount(BATCH_GET) - batchReadsBefore).toBe(0);
    expect(deadLetter.published).toHaveLength(1);
    expect(deadLetter.published[0]).toMatchObject({ errorName: 'TransactionLimitError', errorMessage: expect.stringMatching(/both target the item/) });
    expect(lines.find((line) => line.outcome === 'dead-lettered')).toMatchObject({ error: { name: 'TransactionLimitError' } });
  });

  test('dead-letters a record whose handler stages more writes than fit beside the inbox record', async () => {
    const { handler, lines, deadLetter } = consumer({
      handle: (envelope, tx) => {
        for (let i = 0; i < 100; i++) tx.put({ TableName: ledgerTable, Item: { pk: `${envelope.id}-${i}` } });
      },
    });
    const response = await handler({ Records: [sqsRecord(deposit(1).body)] });
    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['TransactionLimitError']);
    expect(lines.find((line) => line.outcome === 'dead-lettered')).toMatchObject({ error: { name: 'TransactionLimitError', message: expect.stringMatching(/at most 99 writes/) } });
  });

  test('dead-letters an event whose id is too long for the inbox key, before any request', async () => {
    const { handler, deadLetter } = consumer({ client: localClient({ endpoint: proxy.endpoint }) });
    const sentBefore = proxy.requestCount();
    await handler({ Records: [sqsRecord(deposit(1, { id: 'i'.repeat(2_041) }).body)] });
    expect(proxy.requestCount() - sentBefore).toBe(0);
    expect(deadLetter.published[0]).toMatchObject({
      errorName: 'PermanentError',
      errorMessage: "event id of 2041 characters is too long for the inbox: its key 'billing#<id>' is 2049 bytes, but DynamoDB allows at most 2048 bytes for a partition key value",
    });
  });

  test('accepts a double-encoded and an SNS-wrapped body', async () => {
    const { handler } = consumer();
    const doubled = deposit(3);
    const wrapped = deposit(4);
    const response = await handler({
      Records: [sqsRecord(JSON.stringify(doubled.body)), sqsRecord(JSON.stringify({ Type: 'Notification', Message: wrapped.body }))],
    });
    expect(response.batchItemFailures).toEqual([]);
    expect([await balance(doubled.account), await balance(wrapped.account)]).toEqual([3, 4]);
  });

  test('reads its configuration once, at creation, and fails fast when it is incomplete', () => {
    vi.stubEnv(ENV.SUBSCRIBER_NAME, '');
    try {
      expect(() => createTransactionalConsumer({ handle: () => undefined, client })).toThrow(ConfigurationError);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

/** Seeds an inbox record as if an earlier delivery had written it (or an older runtime, without fingerprint). */
async function seedInboxRecord(eventId: string, expiresAtEpochSeconds: number, fingerprint?: string): Promise<void> {
  await client.send(
    new PutItemCommand({
      TableName: config.inboxTableName,
      Item: {
        pk: { S: `${SUBSCRIBER}#${eventId}` },
        eventId: { S: eventId },
        expiresAt: { N: String(expiresAtEpochSeconds) },
        ...(fingerprint === undefined ? {} : { payloadFingerprint: { S: fingerprint } }),
      },
    }),
  );
}

/** A handler that stages nothing: the inbox record is then one conditional PutItem instead of a transaction. */
const stagesNothing: EventHandler<Deposit> = () => undefined;

describe('payload fingerprints', () => {
  // both ways an inbox record is written: in a transaction (a staged write) and alone (a conditional PutItem)
  describe.each([
    ['TransactWriteItems', credit],
    ['PutItem', stagesNothing],
  ] as const)('through %s', (_path, handle) => {
    test('a reused id with a different payload is dead-lettered as PayloadMismatchError, naming both fingerprints; nothing is applied', async () => {
      const { handler, deadLetter, lines } = consumer({ handle, client: localClient({ endpoint: proxy.endpoint }) });
      const original = deposit(10);
      const reused = JSON.stringify({ ...JSON.parse(original.body), data: { account: original.account, amount: 999 } });
      await handler({ Records: [sqsRecord(original.body)] });
      const readsBefore = proxy.requestCount('DynamoDB_20120810.GetItem');

      const response = await handler({ Records: [sqsRecord(reused)] });

      expect(response.batchItemFailures).toEqual([]);
      expect(outcomesOf(lines)).toEqual(['processed', 'dead-lettered']);
      const stored = payloadFingerprint(parseEnvelope(original.body));
      const received = payloadFingerprint(parseEnvelope(reused));
      expect(deadLetter.published).toEqual([
        expect.objectContaining({
          body: reused,
          errorName: 'PayloadMismatchError',
          eventId: original.id,
          errorMessage: `event id '${original.id}' was already processed by subscriber '${SUBSCRIBER}' with a different payload (stored ${stored}, received ${received}); an event id must not be reused for another event`,
        }),
      ]);
      if (handle === credit) expect(await balance(original.account)).toBe(10);
      // the stored record came back with the failed condition (ALL_OLD): no read was needed
      expect(proxy.requestCount('DynamoDB_20120810.GetItem') - readsBefore).toBe(0);
    });

    test('a redelivery whose envelope was rebuilt with a new time and source is still a duplicate', async () => {
      const { handler, lines, deadLetter } = consumer({ handle });
      const original = deposit(10);
      const rebuilt = JSON.stringify({ ...JSON.parse(original.body), time: '2030-01-01T00:00:00Z', source: 'another-source' });
      await handler({ Records: [sqsRecord(original.body)] });
      await handler({ Records: [sqsRecord(rebuilt)] });
      expect(outcomesOf(lines)).toEqual(['processed', 'duplicate']);
      expect(deadLetter.published).toEqual([]);
    });

    test('a live record without fingerprint (written before fingerprints) is a duplicate, with a warning', async () => {
      const { handler, lines, deadLetter } = consumer({ handle });
      const message = deposit(3);
      await seedInboxRecord(message.id, Math.floor(Date.now() / 1000) + 60);

      const response = await handler({ Records: [sqsRecord(message.body)] });

      expect(response.batchItemFailures).toEqual([]);
      expect(outcomesOf(lines)).toEqual(['duplicate']);
      expect(deadLetter.published).toEqual([]);
      expect(await balance(message.account)).toBeUndefined();
      expect(lines.find((line) => line.level === 'WARN')).toMatchObject({
        message: 'payload not verified',
        eventId: message.id,
        detail: 'the live inbox record has no payload fingerprint; acknowledged as a duplicate',
      });
    });
  });
});

/**
 * TTL deletes expired items in the background, typically within a few days, and until then AWS says they "still appear"
 * in reads and must be filtered by comparing the TTL attribute with the current time
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ttl-expired-items.html). The inbox condition
 * (`attribute_not_exists(pk) OR expiresAt < :now`) therefore treats an expired record as absent.
 */
describe('expired inbox records that TTL has not deleted yet', () => {
  describe.each([
    ['TransactWriteItems', credit],
    ['PutItem', stagesNothing],
  ] as const)('through %s', (_path, handle) => {
    test('an expired record does not block reprocessing, even with another fingerprint, and is replaced by a live one', async () => {
      const { handler, lines, deadLetter } = consumer({ handle });
      const nowEpochSeconds = Math.floor(Date.now() / 1000);
      const message = deposit(4);
      await seedInboxRecord(message.id, nowEpochSeconds - 1, 'sha256:from-an-older-event-with-the-same-id');

      const response = await handler({ Records: [sqsRecord(message.body)] });

      expect(response.batchItemFailures).toEqual([]);
      expect(outcomesOf(lines)).toEqual(['processed']);
      expect(deadLetter.published).toEqual([]);
      if (handle === credit) expect(await balance(message.account)).toBe(4);
      const record = await inboxItem(message.id);
      expect(Number(record?.expiresAt?.N)).toBeGreaterThanOrEqual(nowEpochSeconds + WINDOW_SECONDS);
      expect(record?.payloadFingerprint).toEqual({ S: payloadFingerprint(parseEnvelope(message.body)) });
    });

    test('a live record (TTL still ahead) makes the delivery a duplicate', async () => {
      const { handler, lines } = consumer({ handle });
      const message = deposit(6);
      await seedInboxRecord(message.id, Math.floor(Date.now() / 1000) + 60, payloadFingerprint(parseEnvelope(message.body)));

      expect((await handler({ Records: [sqsRecord(message.body)] })).batchItemFailures).toEqual([]);

      expect(outcomesOf(lines)).toEqual(['duplicate']);
      expect(await balance(message.account)).toBeUndefined();
    });
  });
});

/**
 * A subscriber switched from lease or multi-step mode to transactional while a message was in flight: the inbox table
 * holds that message's processing record under the key its inbox record would take. Only a COMPLETED one means "done".
 */
describe('a processing record left by lease or multi-step mode (the processing mode changed while the message was in flight)', () => {
  /** Runs the message through a lease consumer on the same inbox table with `effect`; returns the record's status. */
  async function leaveProcessingRecord(message: { id: string; body: string }, effect: () => void): Promise<string | undefined> {
    const lease = createLeaseConsumer({
      handle: effect,
      client,
      config: { ...config, leaseDurationSeconds: 60 },
      deadLetter: new RecordingDeadLetterPublisher(),
      logger: recordingLogger().logger,
      metricsSink: () => undefined,
    });
    await lease({ Records: [sqsRecord(message.body)] });
    const record = await inboxItem(message.id);
    expect(record?.[PROCESSING_RECORD.RECORD_TYPE_ATTRIBUTE]).toEqual({ S: PROCESSING_RECORD.RECORD_TYPE_VALUE });
    return record?.[PROCESSING_RECORD.STATUS_ATTRIBUTE]?.S;
  }

  const unknownOutcome = (): void => {
    throw new Error('connection reset: outcome unknown');
  };
  const refused = (): void => {
    throw new RetryableError('refused before acting');
  };

  describe.each([
    ['TransactWriteItems', credit],
    ['PutItem', stagesNothing],
  ] as const)('through %s', (_path, handle) => {
    test.each([
      [RECORD_STATUS.BLOCKED, unknownOutcome],
      [RECORD_STATUS.IN_PROGRESS, refused],
    ])('a %s record is not a duplicate: the message is dead-lettered as blocked, for an operator; nothing is applied', async (status, effect) => {
      const message = deposit(5);
      expect(await leaveProcessingRecord(message, effect)).toBe(status);
      const before = await inboxItem(message.id);
      const { handler, lines, deadLetter } = consumer({ handle });

      expect((await handler({ Records: [sqsRecord(message.body)] })).batchItemFailures).toEqual([]);

      expect(outcomesOf(lines)).toEqual(['blocked']);
      expect(deadLetter.published).toEqual([
        expect.objectContaining({
          body: message.body,
          errorName: 'MessageBlockedError',
          eventId: message.id,
          errorMessage: expect.stringMatching(
            new RegExp(`^event '${message.id}' is ${status} under lease processing .*processing mode changed while it was in flight.*npx idempotent-event-flow blocked .*before redriving`),
          ),
        }),
      ]);
      expect(await balance(message.account)).toBeUndefined();
      expect(await inboxItem(message.id)).toEqual(before); // the record is the operator's, untouched
    });

    test('a COMPLETED record with the same payload is a duplicate', async () => {
      const message = deposit(5);
      expect(await leaveProcessingRecord(message, () => undefined)).toBe(RECORD_STATUS.COMPLETED);
      const { handler, lines, deadLetter } = consumer({ handle });

      expect((await handler({ Records: [sqsRecord(message.body)] })).batchItemFailures).toEqual([]);

      expect(outcomesOf(lines)).toEqual(['duplicate']);
      expect(deadLetter.published).toEqual([]);
      expect(await balance(message.account)).toBeUndefined();
    });

    test('a COMPLETED record with another payload is a PayloadMismatchError', async () => {
      const message = deposit(5);
      expect(await leaveProcessingRecord(message, () => undefined)).toBe(RECORD_STATUS.COMPLETED);
      const reused = JSON.stringify({ ...JSON.parse(message.body), data: { account: message.account, amount: 500 } });
      const { handler, deadLetter } = consumer({ handle });

      await handler({ Records: [sqsRecord(reused)] });

      expect(deadLetter.published).toEqual([expect.objectContaining({ errorName: 'PayloadMismatchError', eventId: message.id })]);
      expect(await balance(message.account)).toBeUndefined();
    });
  });
});

describe('emitting events (tx.emit)', () => {
  /** Credits the account and emits one event about it. */
  const creditAndNotify: EventHandler<Deposit> = (envelope, tx, context) => {
    credit(envelope, tx, context);
    tx.emit({ type: 'AccountCredited', subject: envelope.data.account, data: { account: envelope.data.account, amount: envelope.data.amount } });
  };

  async function emitted(consumedEventId: string, index = 0) {
    const id = derivedEventId(SUBSCRIBER, consumedEventId, index);
    return { id, items: await outboxItemsWithEventId(client, outboxConfig.outboxTableName, id) };
  }

  const outboxFor = (overrides: Partial<ProducerConfig> = {}) => new Outbox({ client, config: { ...outboxConfig, ...overrides } });

  test('the emitted event, the business write and the inbox record commit together', async () => {
    const { handler, lines } = consumer({ handle: creditAndNotify, outbox: outboxFor() });
    const message = deposit(12);

    expect((await handler({ Records: [sqsRecord(message.body)] })).batchItemFailures).toEqual([]);

    expect(await balance(message.account)).toBe(12);
    expect(await inboxItem(message.id)).toBeDefined();
    const { id, items } = await emitted(message.id);
    expect(items).toHaveLength(1);
    expect(parseEnvelope(items[0]?.[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]?.S as string)).toMatchObject({
      id,
      source: 'billing-service',
      type: 'AccountCredited',
      subject: message.account,
      data: { account: message.account, amount: 12 },
    });
    expect(lines.find((line) => line.outcome === 'processed')).toMatchObject({ stagedWrites: 1, emittedEvents: 1 });
  });

  test('a failed business condition writes neither the event nor the inbox record', async () => {
    const { handler } = consumer({
      outbox: outboxFor(),
      handle: (envelope, tx) => {
        tx.conditionCheck({ TableName: ledgerTable, Key: { pk: envelope.data.account }, ConditionExpression: 'attribute_exists(pk)' });
        tx.emit({ type: 'AccountCredited', data: {} });
      },
    });
    const message = deposit(1);
    const record = sqsRecord(message.body);

    expect((await handler({ Records: [record] })).batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);

    expect((await emitted(message.id)).items).toHaveLength(0);
    expect(await inboxItem(message.id)).toBeUndefined();
  });

  test('a duplicate delivery emits nothing', async () => {
    const { handler, lines } = consumer({ handle: creditAndNotify, outbox: outboxFor() });
    const message = deposit(5);

    await handler({ Records: [sqsRecord(message.body)] });
    await handler({ Records: [sqsRecord(message.body)] });

    expect(outcomesOf(lines)).toEqual(['processed', 'duplicate']);
    expect((await emitted(message.id)).items).toHaveLength(1);
    expect(await balance(message.account)).toBe(5);
  });

  test('a crash after commit (response lost), then redelivery, emits exactly one event', async () => {
    const crashing = consumer({ handle: creditAndNotify, outbox: outboxFor(), client: localClient({ endpoint: proxy.endpoint, maxAttempts: 1 }) });
    const message = deposit(8);
    const record = sqsRecord(message.body);
    const fired = proxy.inject({ target: TRANSACT, fault: { kind: 'drop-response' } });

    expect((await crashing.handler({ Records: [record] })).batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);
    expect(fired()).toBe(1);

    const redelivery = consumer({ handle: creditAndNotify, outbox: outboxFor() });
    expect((await redelivery.handler({ Records: [{ ...record, attributes: { ApproximateReceiveCount: '2' } }] })).batchItemFailures).toEqual([]);

    expect(outcomesOf(redelivery.lines)).toEqual(['duplicate']);
    expect((await emitted(message.id)).items).toHaveLength(1);
    expect(await balance(message.account)).toBe(8);
  });

  /** Moves the message's inbox record past its deduplication window (TTL has not deleted it yet). */
  async function expireInboxRecord(eventId: string): Promise<void> {
    await client.send(
      new UpdateItemCommand({
        TableName: config.inboxTableName,
        Key: { pk: { S: `${SUBSCRIBER}#${eventId}` } },
        UpdateExpression: 'SET expiresAt = :past',
        ExpressionAttributeValues: { ':past': { N: String(Math.floor(Date.now() / 1000) - 1) } },
      }),
    );
  }

  /**
   * Processes a deposit, expires its inbox record and redelivers it through `handler`; checks that the redelivery is
   * reported for retry (logged `failed` after `processed`) and returns the deposit and the `failed` line.
   */
  async function failingRedeliveryAfterExpiry(handler: SqsBatchHandler, lines: ReadonlyArray<Record<string, unknown>>) {
    const message = deposit(7);
    await handler({ Records: [sqsRecord(message.body)] });
    await expireInboxRecord(message.id);
    const record = sqsRecord(message.body);

    expect((await handler({ Records: [record] })).batchItemFailures).toEqual([{ itemIdentifier: record.messageId }]);

    expect(outcomesOf(lines)).toEqual(['processed', 'failed']);
    return { message, failed: lines.find((line) => line.outcome === 'failed') };
  }

  test('a redelivery after its inbox record expired is a duplicate when the event it emitted (derived id) is in the outbox', async () => {
    const { handler, lines, deadLetter } = consumer({ handle: creditAndNotify, outbox: outboxFor() });
    const message = deposit(7);
    await handler({ Records: [sqsRecord(message.body)] });
    await expireInboxRecord(message.id);

    expect((await handler({ Records: [sqsRecord(message.body)] })).batchItemFailures).toEqual([]);

    expect(outcomesOf(lines)).toEqual(['processed', 'duplicate']);
    expect(deadLetter.published).toEqual([]);
    expect(await balance(message.account)).toBe(7);
    const { id, items } = await emitted(message.id);
    expect(items).toHaveLength(1);
    expect(lines.find((line) => line.level === 'WARN')).toMatchObject({
      message: 'payload not verified',
      eventId: message.id,
      detail: expect.stringMatching(new RegExp(`inbox record .*expired.*emitted event '${id}'.* is already in the outbox.*acknowledged as a duplicate$`)),
    });
  });

  test('after the inbox record expired, an event id the handler chose that is already in the outbox still fails the transaction', async () => {
    const chosen = `chosen-${crypto.randomUUID()}`;
    const { handler, lines } = consumer({
      outbox: outboxFor(),
      handle: (envelope, tx, context) => {
        credit(envelope, tx, context);
        tx.emit({ id: chosen, type: 'AccountCredited', data: {} });
      },
    });
    const { message, failed } = await failingRedeliveryAfterExpiry(handler, lines);

    expect(failed).toMatchObject({
      error: { name: 'TransactionCancelledError', message: expect.stringMatching(new RegExp(`emitted event '${chosen}' \\(AccountCredited\\)\\): ConditionalCheckFailed`)) },
    });
    expect(await balance(message.account)).toBe(7);
  });

  test('after the inbox record expired, a derived event in the outbox does not hide another failed condition', async () => {
    const { handler, lines } = consumer({
      outbox: outboxFor(),
      handle: (envelope, tx, context) => {
        // an audit item written once: on the redelivery its condition fails too
        tx.put({ TableName: ledgerTable, Item: { pk: `${envelope.data.account}-audit` }, ConditionExpression: 'attribute_not_exists(pk)' });
        creditAndNotify(envelope, tx, context);
      },
    });
    const { failed } = await failingRedeliveryAfterExpiry(handler, lines);

    expect(failed).toMatchObject({ error: { name: 'TransactionCancelledError', message: expect.stringMatching(/action 0 \(staged Put on table '.*'\): ConditionalCheckFailed/) } });
  });

  test('a handler that only emits commits the event and the inbox record in a transaction', async () => {
    const { handler } = consumer({ handle: (envelope, tx) => void tx.emit({ type: 'Seen', data: { id: envelope.id } }), outbox: outboxFor() });
    const message = deposit(1);
    await handler({ Records: [sqsRecord(message.body)] });
    expect((await emitted(message.id)).items).toHaveLength(1);
    expect(await inboxItem(message.id)).toBeDefined();
  });

  test('emitting without an outbox dead-letters the message, saying to deploy with publishesEvents: true', async () => {
    const { handler, deadLetter } = consumer({ handle: creditAndNotify });
    const message = deposit(2);

    expect((await handler({ Records: [sqsRecord(message.body)] })).batchItemFailures).toEqual([]);

    expect(deadLetter.published).toEqual([
      expect.objectContaining({ errorName: 'InvalidEventError', errorMessage: expect.stringMatching(/subscriber 'billing' has no outbox\. Deploy the subscriber with `publishesEvents: true`/) }),
    ]);
    expect(await balance(message.account)).toBeUndefined();
    expect(await inboxItem(message.id)).toBeUndefined();
  });

  test('an invalid emitted event dead-letters the message and writes nothing', async () => {
    const { handler, deadLetter } = consumer({ outbox: outboxFor(), handle: (_envelope, tx) => void tx.emit({ type: '', data: {} }) });
    const message = deposit(2);
    await handler({ Records: [sqsRecord(message.body)] });
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['InvalidEventError']);
    expect(await inboxItem(message.id)).toBeUndefined();
  });

  test('uses the outbox the environment describes when IEF_OUTBOX_TABLE_NAME is set', async () => {
    vi.stubEnv(ENV.OUTBOX_TABLE_NAME, outboxConfig.outboxTableName);
    vi.stubEnv(ENV.OUTBOX_PARTITION_KEY_NAME, 'pk');
    vi.stubEnv(ENV.OUTBOX_SORT_KEY_NAME, 'sk');
    vi.stubEnv(ENV.OUTBOX_EVENT_RETENTION_SECONDS, '60');
    vi.stubEnv(ENV.EVENT_SOURCE, 'from-environment');
    let handler;
    try {
      handler = consumer({ handle: creditAndNotify }).handler;
    } finally {
      vi.unstubAllEnvs();
    }
    const message = deposit(3);
    await handler({ Records: [sqsRecord(message.body)] });
    const { items } = await emitted(message.id);
    expect(items).toHaveLength(1);
    expect(parseEnvelope(items[0]?.[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]?.S as string).source).toBe('from-environment');
  });

  test('counts emitted events in the transaction limit, dead-lettering before any request (a one-record batch has no batch read)', async () => {
    const { handler, deadLetter } = consumer({
      outbox: outboxFor(),
      client: localClient({ endpoint: proxy.endpoint }),
      handle: (envelope, tx) => {
        for (let i = 0; i < 60; i++) tx.put({ TableName: ledgerTable, Item: { pk: `${envelope.id}-${i}` } });
        for (let i = 0; i < 40; i++) tx.emit({ type: 'Many', data: i });
      },
    });
    const sentBefore = proxy.requestCount();
    const batchReadsBefore = proxy.requestCount(BATCH_GET);
    await handler({ Records: [sqsRecord(deposit(1).body)] });
    expect(proxy.requestCount() - sentBefore).toBe(0); // no batch read for one record, no write
    expect(proxy.requestCount(BATCH_GET) - batchReadsBefore).toBe(0);
    expect(deadLetter.published[0]).toMatchObject({ errorName: 'TransactionLimitError', errorMessage: expect.stringMatching(/staged event number 100 \(60 writes and 39 events before it\)/) });
  });
});

/**
 * "A handler that breaks [a transaction limit] is dead-lettered at once (it would on every retry)": also when the
 * breach is in expression values, or only DynamoDB can see it (two Puts of one item in a table whose key schema the
 * runtime does not know, an Update that grows an item past 400 KB).
 */
describe('staged writes that break a DynamoDB limit are dead-lettered at once, not retried', () => {
  test('ConditionChecks whose values add up to more than 4 MB, before any request', async () => {
    const { handler, deadLetter, lines } = consumer({
      client: localClient({ endpoint: proxy.endpoint }),
      handle: (envelope, tx) => {
        for (let i = 0; i < 11; i++) {
          tx.conditionCheck({
            TableName: ledgerTable,
            Key: { pk: `${envelope.id}-${i}` },
            ConditionExpression: 'attribute_not_exists(note) OR note <> :note',
            ExpressionAttributeValues: { ':note': 'x'.repeat(390_000) },
          });
        }
      },
    });
    const transactionsBefore = proxy.requestCount(TRANSACT);
    const message = deposit(1);

    expect((await handler({ Records: [sqsRecord(message.body)] })).batchItemFailures).toEqual([]);

    expect(outcomesOf(lines)).toEqual(['dead-lettered']);
    expect(deadLetter.published).toEqual([expect.objectContaining({ errorName: 'TransactionLimitError', errorMessage: expect.stringMatching(/may add up to at most 4,194,304 bytes/) })]);
    expect(proxy.requestCount(TRANSACT) - transactionsBefore).toBe(0);
    expect(await inboxItem(message.id)).toBeUndefined();
  });

  test('two Puts of one item in a table of unknown key schema', async () => {
    const { handler, deadLetter, lines } = consumer({
      handle: (envelope, tx) => {
        tx.put({ TableName: ledgerTable, Item: { pk: envelope.data.account, balance: 1 } });
        tx.put({ TableName: ledgerTable, Item: { pk: envelope.data.account, balance: 2 } });
      },
    });
    const message = deposit(1);

    expect((await handler({ Records: [sqsRecord(message.body)] })).batchItemFailures).toEqual([]);

    expect(outcomesOf(lines)).toEqual(['dead-lettered']);
    expect(deadLetter.published).toEqual([
      expect.objectContaining({ errorName: 'TransactionLimitError', errorMessage: expect.stringMatching(/Transaction request cannot include multiple operations on one item/) }),
    ]);
    expect(await balance(message.account)).toBeUndefined();
    expect(await inboxItem(message.id)).toBeUndefined();
  });

  test('an Update that grows an item past 400 KB, naming the action', async () => {
    const account = `account-${crypto.randomUUID()}`;
    await client.send(new PutItemCommand({ TableName: ledgerTable, Item: { pk: { S: account }, history: { S: 'x'.repeat(405_000) } } }));
    const { handler, deadLetter, lines } = consumer({
      handle: (envelope, tx) =>
        tx.update({ TableName: ledgerTable, Key: { pk: envelope.data.account }, UpdateExpression: 'SET note = :note', ExpressionAttributeValues: { ':note': 'y'.repeat(5_000) } }),
    });
    const message = deposit(1, { data: { account, amount: 1 } });

    expect((await handler({ Records: [sqsRecord(message.body)] })).batchItemFailures).toEqual([]);

    expect(outcomesOf(lines)).toEqual(['dead-lettered']);
    expect(deadLetter.published).toEqual([
      expect.objectContaining({
        errorName: 'TransactionLimitError',
        errorMessage: expect.stringMatching(new RegExp(`action 0 \\(staged Update on table '${ledgerTable}'\\).*Item size to update has exceeded the maximum allowed size`)),
      }),
    ]);
    expect(await inboxItem(message.id)).toBeUndefined();
  });
});
