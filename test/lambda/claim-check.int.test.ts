/**
 * The claim-check (issue 42, docs/LARGE-EVENTS.md) against real servers: DynamoDB Local for the outbox and inbox, a
 * local S3 (s3rver behind the simulator's S3 endpoint, test/support/s3-local.ts) for the payload bucket.
 */
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import type { ClaimCheckConfig } from '../../lambda/claim-check/claim-check-config';
import { sha256Hex } from '../../lambda/claim-check/offload';
import { S3PayloadStore, type PayloadReader } from '../../lambda/claim-check/payload-store';
import { CLAIM_CHECK_ATTRIBUTES, parseDataRef } from '../../lambda/contract/claim-check';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { createTransactionalConsumer, type TransactionalConsumerOptions } from '../../lambda/consumer/transactional-consumer';
import { parseEnvelope, type EventEnvelope } from '../../lambda/envelope';
import { EventTooLargeError, TransactionCancelledError } from '../../lambda/errors';
import { payloadFingerprint } from '../../lambda/fingerprint';
import { OrderedOutbox } from '../../lambda/ordered/ordered-outbox';
import { Outbox } from '../../lambda/producer/outbox';
import { outboxItemsWithEventId } from '../support/proof/table-reads';
import type { LocalS3 } from '../support/s3-local';
import type { SQSRecord } from '../../lambda/consumer/sqs';
import { largeDocument, PAYLOAD_PREFIX, PAYLOAD_THRESHOLD, startClaimCheckBed, type ClaimCheckBed } from './claim-check-kit';
import { RecordingDeadLetterPublisher, recordingLogger, rejection, sqsRecord } from './helpers';

const PREFIX = PAYLOAD_PREFIX;
/** A threshold small enough that a 2 KB document is offloaded and a small event is not. */
const THRESHOLD = PAYLOAD_THRESHOLD;

let client: DynamoDBClient;
let s3: LocalS3;
let store: S3PayloadStore;
let bucket: string;
let outboxConfig: ProducerConfig;
let inboxConfig: ConsumerConfig;
let claimCheck: ClaimCheckConfig;

let bed: ClaimCheckBed;

beforeAll(async () => {
  bed = await startClaimCheckBed();
  ({ client, s3, store, bucket, outboxConfig, inboxConfig, claimCheck } = bed);
  // the consumers' payload bucket, as the flow sets it (a consumer with none follows no reference: R7-4)
  process.env.IEF_PAYLOAD_BUCKET_NAME = bucket;
  process.env.IEF_PAYLOAD_KEY_PREFIX = PREFIX;
});
afterAll(async () => {
  delete process.env.IEF_PAYLOAD_BUCKET_NAME;
  delete process.env.IEF_PAYLOAD_KEY_PREFIX;
  await bed.stop();
});

const document = largeDocument;

async function outboxEnvelope(eventId: string): Promise<EventEnvelope> {
  const items = await outboxItemsWithEventId(client, outboxConfig.outboxTableName, eventId);
  expect(items).toHaveLength(1);
  return parseEnvelope(items[0]![OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]!.S as string);
}

async function objectText(dataref: string): Promise<string> {
  const { bucketName, key } = parseDataRef(dataref)!;
  return (await (await s3.client.send(new GetObjectCommand({ Bucket: bucketName, Key: key }))).Body!.transformToString('utf8'));
}

async function keysOfEvent(eventId: string): Promise<string[]> {
  const listed = await s3.backendClient.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `${PREFIX}${sha256Hex(eventId)}/` }));
  return (listed.Contents ?? []).map((object) => object.Key!);
}

describe('producer', () => {
  test('offloads an event over the threshold: the object holds the data, the envelope the reference, digest and size', async () => {
    const outbox = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store } });
    const data = document(2000);
    const [written] = await outbox.transactWrite({ events: [{ type: 'OrderPlaced', data }] });
    const stored = await outboxEnvelope(written!.id);
    expect('data' in stored).toBe(false);
    const text = JSON.stringify(data);
    expect(stored).toMatchObject({ [CLAIM_CHECK_ATTRIBUTES.SHA256]: sha256Hex(text), [CLAIM_CHECK_ATTRIBUTES.SIZE]: Buffer.byteLength(text) });
    // the key names the UTC day of the write (the producer's clock, as the envelope's time): R7-1
    expect(stored.dataref).toBe(`s3://${bucket}/${PREFIX}${sha256Hex(written!.id)}/${written!.time!.slice(0, 10)}-${sha256Hex(text)}`);
    expect(await objectText(stored.dataref!)).toBe(text);
    expect(written).toEqual(stored);
  });

  test('keeps a small event inline, and offloads every event with a threshold of 0', async () => {
    const inline = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store } });
    const [small] = await inline.transactWrite({ events: [{ type: 'OrderPlaced', data: { orderId: 'o-1' } }] });
    expect(await outboxEnvelope(small!.id)).toMatchObject({ data: { orderId: 'o-1' } });
    expect((await outboxEnvelope(small!.id)).dataref).toBeUndefined();
    const always = new Outbox({ client, config: outboxConfig, claimCheck: { config: { ...claimCheck, inlineThresholdBytes: 0 }, store } });
    const [tiny] = await always.transactWrite({ events: [{ type: 'OrderPlaced', data: { orderId: 'o-2' } }] });
    const stored = await outboxEnvelope(tiny!.id);
    expect(stored.dataref).toBeDefined();
    expect(await objectText(stored.dataref!)).toBe('{"orderId":"o-2"}');
  });

  test('a producer retried after a lost response writes one object, and its retry is recognised as written', async () => {
    // the first PutObject lands but its response is lost: the SDK call throws after S3 stored the object
    let lose = true;
    const losing = {
      putOnce: async (...args: Parameters<S3PayloadStore['putOnce']>) => {
        const outcome = await store.putOnce(...args);
        if (lose) {
          lose = false;
          throw Object.assign(new Error('socket hang up'), { name: 'TimeoutError' });
        }
        return outcome;
      },
    };
    const outbox = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store: losing } });
    const id = `order-placed-${crypto.randomUUID()}`;
    const event = { id, type: 'OrderPlaced', data: document(3000) };
    expect((await rejection(outbox.transactWriteOnce({ events: [event] }))).name).toBe('TimeoutError');
    expect(await keysOfEvent(id)).toHaveLength(1); // the object of the lost response, with no outbox item yet: an orphan until...
    const first = await outbox.transactWriteOnce({ events: [event] }); // ...the retry, whose conditional write answers 412
    const second = await outbox.transactWriteOnce({ events: [event] });
    expect(first.written).toBe(true);
    expect(second).toEqual({ written: false, events: first.events });
    expect(await keysOfEvent(id)).toHaveLength(1);
  });

  test('a different payload under one id cannot replace the first object, and its transaction is refused', async () => {
    const outbox = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store } });
    const id = `order-placed-${crypto.randomUUID()}`;
    const [first] = await outbox.transactWrite({ events: [{ id, type: 'OrderPlaced', data: document(3000, 'a') }] });
    const error = await rejection(outbox.transactWriteOnce({ events: [{ id, type: 'OrderPlaced', data: document(3000, 'b') }] }));
    expect(error).toBeInstanceOf(TransactionCancelledError);
    expect(error.message).toContain('already in the outbox with another payload');
    expect(await outboxEnvelope(id)).toEqual(first);
    // the same key written again with other bytes: S3's conditional write keeps the first object
    const { key } = parseDataRef(first!.dataref!)!;
    expect(await store.putOnce(bucket, key, Buffer.from('"forged"'), Buffer.from(sha256Hex('"forged"'), 'hex').toString('base64'))).toBe('already-there');
    expect(sha256Hex(await objectText(first!.dataref!))).toBe(first!.iefdatasha256);
  });

  test('prepare (synchronous) refuses an event that must be offloaded and names the asynchronous calls', () => {
    const outbox = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store } });
    expect(() => outbox.prepare({ type: 'OrderPlaced', data: document(2000) })).toThrow(EventTooLargeError);
    expect(() => outbox.prepare({ type: 'OrderPlaced', data: document(2000) })).toThrow(/prepareAsync/);
  });

  test('events of 1 MiB and 6 MiB are offloaded, far over the inline limit', async () => {
    const outbox = new Outbox({ client, config: outboxConfig, claimCheck: { config: { bucketName: bucket, keyPrefix: PREFIX }, store } });
    for (const size of [1024 * 1024, 6 * 1024 * 1024]) {
      const data = document(size);
      const [written] = await outbox.transactWrite({ events: [{ type: 'DocumentAttached', data }] });
      const stored = await outboxEnvelope(written!.id);
      expect(stored.iefdatasize).toBe(Buffer.byteLength(JSON.stringify(data)));
      expect(Buffer.byteLength(JSON.stringify(stored))).toBeLessThan(1024);
    }
  });

  test('OrderedOutbox offloads too, and its ordering attributes ride on the small envelope', async () => {
    const ordered = new OrderedOutbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store } });
    const data = document(2500);
    const [written] = await ordered.transactWrite({ events: [{ aggregateId: `order-${crypto.randomUUID()}`, type: 'OrderPlaced', data }] });
    expect(written!.sequence).toBeDefined();
    expect('data' in written!).toBe(false);
    expect(await objectText(written!.dataref!)).toBe(JSON.stringify(data));
  });
});

describe('consumer', () => {
  async function publish(data: unknown, threshold = THRESHOLD): Promise<EventEnvelope> {
    const outbox = new Outbox({ client, config: outboxConfig, claimCheck: { config: { ...claimCheck, inlineThresholdBytes: threshold }, store } });
    return (await outbox.transactWrite({ events: [{ type: 'OrderPlaced', data }] }))[0]!;
  }

  function consumer(seen: EventEnvelope[], overrides: Partial<TransactionalConsumerOptions<unknown>> = {}) {
    const { logger, lines } = recordingLogger();
    const deadLetter = new RecordingDeadLetterPublisher();
    const handler = createTransactionalConsumer<unknown>({
      handle: (envelope) => {
        seen.push(envelope);
      },
      client,
      config: inboxConfig,
      deadLetter,
      logger,
      metricsSink: () => undefined,
      payloadReader: store,
      ...overrides,
    });
    /** Runs one batch and returns each record's outcome, in record order. */
    const run = async (records: SQSRecord[]): Promise<string[]> => {
      const from = lines.length;
      await handler({ Records: records });
      const outcomeOf = new Map(lines.slice(from).filter((line) => typeof line.outcome === 'string').map((line) => [line.sqsMessageId, line.outcome as string]));
      return records.map((record) => outcomeOf.get(record.messageId) ?? 'none');
    };
    return { handler, run, deadLetter };
  }

  test('hands the handler the event as if it had been inline, with the fingerprint of the inline event', async () => {
    const data = document(4000);
    const offloaded = await publish(data);
    const seen: EventEnvelope[] = [];
    const { run } = consumer(seen);
    const record = sqsRecord(JSON.stringify(offloaded));
    expect(await run([record])).toEqual(['processed']);
    expect(seen).toHaveLength(1);
    const { dataref: _r, iefdatasha256: _s, iefdatasize: _z, ieffingerprint: _f, ...inlineLooking } = offloaded;
    expect(offloaded.ieffingerprint).toBe(payloadFingerprint({ type: offloaded.type, subject: offloaded.subject, data }));
    expect(seen[0]).toEqual({ ...inlineLooking, data });
    expect(Object.keys(seen[0]!)).not.toContain('dataref');
    // a redelivery is a duplicate: the inbox holds the fingerprint of the inline-looking event
    const again = sqsRecord(record.body);
    expect(await run([again])).toEqual(['duplicate']);
    expect(payloadFingerprint(seen[0]!)).toBe(payloadFingerprint({ type: offloaded.type, subject: offloaded.subject, data }));
  });

  test('an object altered after commit dead-letters its message alone, with the reason; the rest of the batch is applied', async () => {
    const altered = await publish(document(4000));
    const { bucketName, key } = parseDataRef(altered.dataref!)!;
    const tampered = JSON.stringify(document(4000, 'y'));
    await s3.client.send(new PutObjectCommand({ Bucket: bucketName, Key: key, Body: tampered })); // a raw overwrite, as an admin could
    const resized = await publish(document(3000));
    const resizedLocation = parseDataRef(resized.dataref!)!;
    await s3.client.send(new PutObjectCommand({ Bucket: resizedLocation.bucketName, Key: resizedLocation.key, Body: '{}' }));
    const healthy = await publish(document(4000));
    const seen: EventEnvelope[] = [];
    const { run, deadLetter } = consumer(seen);
    const records = [altered, resized, healthy].map((envelope) => sqsRecord(JSON.stringify(envelope)));
    expect(await run(records)).toEqual(['dead-lettered', 'dead-lettered', 'processed']);
    expect(seen.map((envelope) => envelope.id)).toEqual([healthy.id]);
    const reasons = Object.fromEntries(deadLetter.published.map((letter) => [letter.eventId, letter]));
    expect(reasons[altered.id]).toMatchObject({ errorName: 'PayloadUnavailableError', body: records[0]!.body });
    expect(reasons[altered.id]!.errorMessage).toMatch(/^offloaded data altered after the event was written: its SHA-256 differs from iefdatasha256/);
    expect(reasons[resized.id]!.errorMessage).toMatch(/^offloaded data altered after the event was written: its size \S+ differs from iefdatasize/);
  });

  test('a missing object dead-letters its message with the reason; a failing read is retried, not dead-lettered', async () => {
    const offloaded = await publish(document(4000));
    const missing = JSON.parse(JSON.stringify(offloaded)) as Record<string, unknown>;
    missing.dataref = `s3://${bucket}/${PREFIX}${sha256Hex('never-written')}/${offloaded.iefdatasha256}`;
    const seen: EventEnvelope[] = [];
    const { run, deadLetter } = consumer(seen);
    const record = sqsRecord(JSON.stringify({ ...missing, id: `missing-${crypto.randomUUID()}` }));
    expect(await run([record])).toEqual(['dead-lettered']);
    expect(deadLetter.published[0]!.errorMessage).toMatch(/^offloaded data missing, no retry can bring it back/);

    const throttled: PayloadReader = { get: async () => Promise.reject(Object.assign(new Error('Slow Down'), { name: 'SlowDown', $metadata: { httpStatusCode: 503 } })) };
    const failing = consumer(seen, { payloadReader: throttled });
    const retried = sqsRecord(JSON.stringify(offloaded));
    expect(await failing.run([retried])).toEqual(['failed']);
    expect(failing.deadLetter.published).toEqual([]);
    expect(seen).toEqual([]);
  });

  test('a reference outside the flow’s bucket and prefix is refused without a read', async () => {
    const offloaded = await publish(document(4000));
    let reads = 0;
    const counting: PayloadReader = { get: async (b, k) => (reads++, store.get(b, k)) };
    const seen: EventEnvelope[] = [];
    const previous = { bucket: process.env.IEF_PAYLOAD_BUCKET_NAME, prefix: process.env.IEF_PAYLOAD_KEY_PREFIX };
    process.env.IEF_PAYLOAD_BUCKET_NAME = 'another-flows-bucket';
    try {
      const { run, deadLetter } = consumer(seen, { payloadReader: counting });
      const record = sqsRecord(JSON.stringify(offloaded));
      expect(await run([record])).toEqual(['dead-lettered']);
      expect(deadLetter.published[0]!.errorMessage).toContain("outside this flow's payload bucket and prefix");
      expect(reads).toBe(0);
    } finally {
      if (previous.bucket === undefined) delete process.env.IEF_PAYLOAD_BUCKET_NAME;
      else process.env.IEF_PAYLOAD_BUCKET_NAME = previous.bucket;
    }
  });

  test('a reference in the flow’s bucket but outside its prefix is refused without a read', async () => {
    const offloaded = await publish(document(4000));
    const { key } = parseDataRef(offloaded.dataref!)!;
    let reads = 0;
    const counting: PayloadReader = { get: async (b, k) => (reads++, store.get(b, k)) };
    const seen: EventEnvelope[] = [];
    const previous = { bucket: process.env.IEF_PAYLOAD_BUCKET_NAME, prefix: process.env.IEF_PAYLOAD_KEY_PREFIX };
    process.env.IEF_PAYLOAD_BUCKET_NAME = bucket;
    process.env.IEF_PAYLOAD_KEY_PREFIX = 'other-flow/';
    try {
      const { run, deadLetter } = consumer(seen, { payloadReader: counting });
      const record = sqsRecord(JSON.stringify(offloaded));
      expect(await run([record])).toEqual(['dead-lettered']);
      expect(deadLetter.published[0]!.errorMessage).toContain(`refers to s3://${bucket}/${key}, outside this flow's payload bucket and prefix (s3://${bucket}/other-flow/)`);
      expect(reads).toBe(0);
      expect(seen).toEqual([]);
    } finally {
      for (const [name, value] of [['IEF_PAYLOAD_BUCKET_NAME', previous.bucket], ['IEF_PAYLOAD_KEY_PREFIX', previous.prefix]] as const) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
    }
  });

  test('tx.emit offloads a large emitted event before the commit', async () => {
    const incoming = await publish({ orderId: 'o-emit' }, 1_000_000);
    const emittingOutbox = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store } });
    const emitted: EventEnvelope[] = [];
    const { run } = consumer([], {
      outbox: emittingOutbox,
      handle: (_envelope, tx) => {
        emitted.push(tx.emit({ type: 'InvoiceRendered', data: document(5000) }));
      },
    });
    const record = sqsRecord(JSON.stringify(incoming));
    expect(await run([record])).toEqual(['processed']);
    const stored = await outboxEnvelope(emitted[0]!.id);
    expect(stored.dataref).toBeDefined();
    expect(JSON.parse(await objectText(stored.dataref!))).toEqual(emitted[0]!.data);
  });
});
