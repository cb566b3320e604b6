/**
 * R7-3 in every processing mode (issue 42): a late copy of an APPLIED offloaded event whose object has expired (S3's
 * lifecycle rule; here the object is deleted as the rule would) is acknowledged as a duplicate, never dead-lettered for
 * data it no longer needs; a copy of an event that was never applied is still dead-lettered with its reason. Against
 * DynamoDB Local and the local S3 (s3rver behind the simulator's S3 endpoint).
 *
 * How (lambda/consumer/process-message.ts): an offloaded event's fingerprint needs no data (fingerprint.ts
 * `eventFingerprint`: the producer's `ieffingerprint`, or for an envelope written before it, type, subject, the data's
 * SHA-256 and size), so the batch read recognises a copy before any S3
 * read; without the batch read, an object found missing is followed by one look-up of the mode's record
 * (consumer/applied-lookup.ts, or the aggregate's processed-messages list) before the message is dead-lettered.
 */
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, LeaseConsumerConfig, ProducerConfig } from '../../lambda/config';
import { createAggregateConsumer } from '../../lambda/aggregate/aggregate-consumer';
import type { ClaimCheckConfig } from '../../lambda/claim-check/claim-check-config';
import { S3PayloadStore, type PayloadReader } from '../../lambda/claim-check/payload-store';
import { parseDataRef } from '../../lambda/contract/claim-check';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';
import type { SqsBatchHandler } from '../../lambda/consumer/create-consumer';
import type { SQSRecord } from '../../lambda/consumer/sqs';
import type { EventEnvelope } from '../../lambda/envelope';
import { createLeaseConsumer } from '../../lambda/processing/lease-consumer';
import { createMultiStepConsumer } from '../../lambda/processing/multi-step-consumer';
import { legacyOffloadedFingerprint, payloadFingerprint } from '../../lambda/fingerprint';
import { Outbox } from '../../lambda/producer/outbox';
import type { FaultProxy } from '../support/fault-proxy';
import { createInbox, createKeyedTable, createLeaseInbox, createOutbox } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';
import { startLocalS3, type LocalS3 } from '../support/s3-local';
import { localClient } from '../support/dynamodb-client';
import { RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

const PREFIX = 'event-data/';

let client: DynamoDBClient;
let proxy: FaultProxy;
let s3: LocalS3;
let store: S3PayloadStore;
let bucket: string;
let outboxConfig: ProducerConfig;
let inboxConfig: ConsumerConfig;
let leaseConfig: LeaseConsumerConfig;
let aggregatesTable: string;
let claimCheck: ClaimCheckConfig;

beforeAll(async () => {
  [{ client, proxy }, s3] = await Promise.all([startTestbed(), startLocalS3()]);
  store = new S3PayloadStore(s3.client);
  [bucket, outboxConfig, inboxConfig, leaseConfig, aggregatesTable] = await Promise.all([
    s3.createBucket(),
    createOutbox(client, { eventSource: 'orders-service', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
    createInbox(client, { subscriberName: 'billing', deduplicationWindowSeconds: 3600 }),
    createLeaseInbox(client, { subscriberName: 'shipping', deduplicationWindowSeconds: 3600, leaseDurationSeconds: 30 }),
    createKeyedTable(client, 'orders'),
  ]);
  claimCheck = { bucketName: bucket, keyPrefix: PREFIX, inlineThresholdBytes: 1024 };
});
afterAll(async () => {
  await Promise.all([proxy.stop(), s3.stop()]);
});

async function publish(seed = 'x'): Promise<EventEnvelope> {
  const outbox = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store } });
  const order = `order-${crypto.randomUUID()}`;
  const event = await outbox.transactWrite({ events: [{ type: 'OrderPlaced', subject: order, data: { orderId: order, attachment: seed.repeat(4000) } }] });
  expect(event[0]!.dataref).toBeDefined();
  return event[0]!;
}

async function expire(envelope: EventEnvelope): Promise<void> {
  const { bucketName, key } = parseDataRef(envelope.dataref!)!;
  await s3.backendClient.send(new DeleteObjectCommand({ Bucket: bucketName, Key: key }));
}

type Mode = 'transactional' | 'lease' | 'multi-step' | 'aggregate';

/** A consumer of `mode` on the flow's bucket, counting its S3 reads; `run` returns each record's outcome. */
function consumer(mode: Mode, options: { batchRead?: boolean; locateByData?: boolean; client?: DynamoDBClient } = {}) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const applied: string[] = [];
  let reads = 0;
  const payloadReader: PayloadReader = { get: async (b, k) => (reads++, store.get(b, k)) };
  const common = { client: options.client ?? client, deadLetter, logger, metricsSink: () => undefined, payloadReader };
  Object.assign(process.env, { IEF_PAYLOAD_BUCKET_NAME: bucket, IEF_PAYLOAD_KEY_PREFIX: PREFIX });
  let handler: SqsBatchHandler;
  if (mode === 'transactional') {
    handler = createTransactionalConsumer({ ...common, config: inboxConfig, handle: (envelope) => void applied.push(envelope.id), ...(options.batchRead === undefined ? {} : { batchRead: options.batchRead }) });
  } else if (mode === 'lease') {
    handler = createLeaseConsumer({ ...common, config: leaseConfig, handle: (envelope) => void applied.push(envelope.id), ...(options.batchRead === undefined ? {} : { batchRead: options.batchRead }) });
  } else if (mode === 'multi-step') {
    const steps = [
      { name: 'reserve', run: () => ({ reserved: true }) },
      { name: 'ship', run: (envelope: EventEnvelope<unknown>) => (applied.push(envelope.id), { shipped: true }) },
    ];
    handler = createMultiStepConsumer({ ...common, config: { ...leaseConfig, processingMode: 'multi-step' }, steps });
  } else {
    handler = createAggregateConsumer<{ orderId: string }, { placed: number }>({
      ...common,
      config: { subscriberName: 'orders-view' },
      // by subject: the envelope without its data still names the aggregate; by data: it cannot (the data is in S3)
      locate: (envelope) => ({ tableName: aggregatesTable, key: { pk: options.locateByData === true ? envelope.data.orderId : envelope.subject! } }),
      apply: (current, envelope) => (applied.push(envelope.id), { state: { placed: (current?.placed ?? 0) + 1 } }),
    });
  }
  delete process.env.IEF_PAYLOAD_BUCKET_NAME;
  delete process.env.IEF_PAYLOAD_KEY_PREFIX;
  const run = async (records: SQSRecord[]): Promise<string[]> => {
    const from = lines.length;
    await handler({ Records: records });
    const outcomeOf = new Map(lines.slice(from).filter((line) => typeof line.outcome === 'string').map((line) => [line.sqsMessageId, line.outcome as string]));
    return records.map((record) => outcomeOf.get(record.messageId) ?? 'none');
  };
  return { run, deadLetter, applied, reads: () => reads };
}

const modes: Mode[] = ['transactional', 'lease', 'multi-step', 'aggregate'];

describe.each(modes)('%s mode', (mode) => {
  test('a late copy of an applied event whose object expired is acknowledged as a duplicate, after one S3 read that found nothing', async () => {
    const event = await publish();
    const { run, deadLetter, applied, reads } = consumer(mode);
    const record = sqsRecord(JSON.stringify(event));
    expect(await run([record])).toEqual(['processed']);
    await expire(event);
    expect(await run([sqsRecord(record.body)])).toEqual(['duplicate']);
    expect({ applied: applied.filter((id) => id === event.id).length, deadLetters: deadLetter.published.length, reads: reads() }).toEqual({ applied: 1, deadLetters: 0, reads: 2 });
  });

  test('an event never applied whose object is missing is still dead-lettered with its reason', async () => {
    const event = await publish();
    await expire(event);
    const { run, deadLetter, applied } = consumer(mode);
    expect(await run([sqsRecord(JSON.stringify(event))])).toEqual(['dead-lettered']);
    expect(applied).toEqual([]);
    expect(deadLetter.published.map((letter) => [letter.errorName, letter.errorMessage])).toEqual([['PayloadUnavailableError', expect.stringContaining('offloaded data missing')]]);
  });
});

/**
 * The look-up reads with the action the mode's role is granted on its inbox table (lib/consumer/inbox-table.ts): a
 * transactional (or ordered) consumer has BatchGetItem and PutItem, not GetItem; lease and multi-step have GetItem. A
 * GetItem by a transactional consumer is denied on AWS: the late copy would be dead-lettered as a configuration error
 * (found by the new-user trial nu9, in a simulated run with IAM evaluated).
 */
describe.each([
  ['transactional', 'BatchGetItem', 'GetItem'],
  ['lease', 'GetItem', 'BatchGetItem'],
] as const)('%s mode: the look-up of a late copy', (mode, granted, notGranted) => {
  test(`reads with ${granted}, never ${notGranted}`, async () => {
    const event = await publish();
    const { run } = consumer(mode, { batchRead: false, client: localClient({ endpoint: proxy.endpoint }) });
    const record = sqsRecord(JSON.stringify(event));
    expect(await run([record])).toEqual(['processed']);
    await expire(event);
    const before = { granted: proxy.requestCount(`DynamoDB_20120810.${granted}`), notGranted: proxy.requestCount(`DynamoDB_20120810.${notGranted}`) };
    expect(await run([sqsRecord(record.body)])).toEqual(['duplicate']);
    expect({ granted: proxy.requestCount(`DynamoDB_20120810.${granted}`) - before.granted, notGranted: proxy.requestCount(`DynamoDB_20120810.${notGranted}`) - before.notGranted }).toEqual({ granted: 1, notGranted: 0 });
  });
});

describe.each(['transactional', 'lease'] as const)('%s mode with the batch read', (mode) => {
  test('a copy the batch read knows applied is a duplicate without any S3 read, even with its object gone', async () => {
    const [first, second] = [await publish(), await publish()];
    const { run, deadLetter, reads } = consumer(mode, { batchRead: true });
    const records = [first, second].map((event) => sqsRecord(JSON.stringify(event)));
    expect(await run(records)).toEqual(['processed', 'processed']);
    expect(reads()).toBe(2);
    await Promise.all([expire(first), expire(second)]);
    expect(await run(records.map((record) => sqsRecord(record.body)))).toEqual(['duplicate', 'duplicate']);
    expect({ reads: reads(), deadLetters: deadLetter.published.length }).toEqual({ reads: 2, deadLetters: 0 });
  });
});

describe('the fingerprint of an offloaded event', () => {
  test('names its type, subject and data; another payload under the id is refused, not taken for a duplicate', async () => {
    const event = await publish();
    // the one of an envelope written before ieffingerprint: type, subject, data digest and size
    const base = { type: event.type, subject: event.subject, iefdatasha256: event.iefdatasha256, iefdatasize: event.iefdatasize };
    expect(new Set([base, { ...base, iefdatasha256: 'f'.repeat(64) }, { ...base, iefdatasize: 1 }, { ...base, subject: 'other' }, { ...base, type: 'OrderCancelled' }].map(legacyOffloadedFingerprint)).size).toBe(5);
    // the producer's now (R8b-6): the event's inline fingerprint
    expect(event.ieffingerprint).toBe(payloadFingerprint({ type: event.type, subject: event.subject, data: JSON.parse(Buffer.from((await store.get(bucket, parseDataRef(event.dataref!)!.key))!).toString("utf8")) }));
    const { run, deadLetter } = consumer('transactional');
    const record = sqsRecord(JSON.stringify(event));
    expect(await run([record])).toEqual(['processed']);
    await expire(event);
    // the same id, another object (a producer that reused the id): the look-up finds the id applied with another fingerprint
    const reused = { ...event, iefdatasha256: 'e'.repeat(64), ieffingerprint: `sha256:${'e'.repeat(64)}` };
    expect(await run([sqsRecord(JSON.stringify(reused))])).toEqual(['dead-lettered']);
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['PayloadMismatchError']);
  });

  test('aggregate mode whose locate reads the data cannot look the event up: the late copy is dead-lettered as missing (documented)', async () => {
    const event = await publish();
    const { run, deadLetter } = consumer('aggregate', { locateByData: true });
    const record = sqsRecord(JSON.stringify(event));
    expect(await run([record])).toEqual(['processed']);
    await expire(event);
    expect(await run([sqsRecord(record.body)])).toEqual(['dead-lettered']);
    expect(deadLetter.published.map((letter) => letter.errorMessage)).toEqual([expect.stringContaining('offloaded data missing')]);
  });
});
