/**
 * Review r7 (seventh session, adversarial) of the claim-check (issue 42): findings as failing tests, against DynamoDB
 * Local and the local S3 (s3rver behind the simulator's S3 endpoint, test/support/s3-local.ts). Each test names its
 * finding (R7-n) and says what AWS would do.
 */
import { existsSync, readdirSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { DeleteObjectCommand, HeadObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import type { ClaimCheckConfig } from '../../lambda/claim-check/claim-check-config';
import { offloadIfLarge, sha256Hex } from '../../lambda/claim-check/offload';
import { S3PayloadStore, type PayloadReader } from '../../lambda/claim-check/payload-store';
import { parseDataRef } from '../../lambda/contract/claim-check';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { Outbox } from '../../lambda/producer/outbox';
import { buildEnvelope } from '../../lambda/producer/new-event';
import { createTransactionalConsumer, type TransactionalConsumerOptions } from '../../lambda/consumer/transactional-consumer';
import type { EventEnvelope } from '../../lambda/envelope';
import type { SQSRecord } from '../../lambda/consumer/sqs';
import { largeDocument, PAYLOAD_PREFIX, startClaimCheckBed, type ClaimCheckBed } from './claim-check-kit';
import { RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';
import { outboxItemsWithEventId } from '../support/proof/table-reads';
import type { LocalS3 } from '../support/s3-local';

const PREFIX = PAYLOAD_PREFIX;
const DAY_MS = 86_400_000;

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
});
afterAll(async () => {
  await bed.stop();
});

const document = largeDocument;

/**
 * Ages an object in s3rver's store by `days`, as the passage of time would: s3rver answers LastModified from the
 * object file's mtime (node_modules/s3rver/lib/stores/filesystem.js), and S3's lifecycle expiration counts from the
 * object's creation. The store is the temporary directory `ief-s3-*` simulator/aws/s3-local.ts made.
 */
function ageObject(bucketName: string, key: string, days: number): void {
  const roots = readdirSync(tmpdir()).filter((name) => name.startsWith('ief-s3-')).map((name) => path.join(tmpdir(), name));
  const file = roots.map((root) => path.join(root, bucketName, ...key.split('/').slice(0, -1), `${key.split('/').at(-1)}._S3rver_object`)).find((candidate) => existsSync(candidate));
  expect(file, `s3rver's file of ${bucketName}/${key}`).toBeDefined();
  const then = new Date(Date.now() - days * DAY_MS);
  utimesSync(file!, then, then);
}

async function lastModified(bucketName: string, key: string): Promise<Date> {
  return (await s3.backendClient.send(new HeadObjectCommand({ Bucket: bucketName, Key: key }))).LastModified!;
}

describe('R7-1: an event committed on an object an earlier attempt wrote keeps that object’s age', () => {
  test('transactWriteOnce retried after the outbox TTL (documented: it writes the events again) commits an event whose data is 30 days into its 37-day expiry', async () => {
    const outbox = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store } });
    const id = `order-placed-${crypto.randomUUID()}`;
    const event = { id, type: 'OrderPlaced', data: document(3000) };
    const first = await outbox.transactWriteOnce({ events: [event] });
    expect(first.written).toBe(true);
    const { key } = parseDataRef(first.events[0]!.dataref!)!;
    // 30 days pass: the outbox's TTL removes the item (eventRetention, e.g. 7 days); the object stays (payloadExpiration,
    // 38 days by default, counted by S3 from the object's creation)
    const [item] = await outboxItemsWithEventId(client, outboxConfig.outboxTableName, id);
    await client.send(
      new DeleteItemCommand({
        TableName: outboxConfig.outboxTableName,
        Key: { [TABLE_SCHEMA.PARTITION_KEY]: item![TABLE_SCHEMA.PARTITION_KEY]!, [TABLE_SCHEMA.SORT_KEY]: item![TABLE_SCHEMA.SORT_KEY]! },
      }),
    );
    ageObject(bucket, key, 30);
    // the caller's retry (same request, same derived id, same data): outbox.ts says a retry later than the retention
    // "writes the events again", and it does: a new event, relayed, replayable for eventRetention, read by subscribers
    // for up to their longest path, all measured from NOW by the payloadExpiration bound (idempotent-event-flow.ts
    // payloadWindow: "from when its data is written")
    // fixed (e42): the object key names the UTC day of the write (contract/claim-check.ts payloadObjectKey), and the
    // retry's producer clock (30 days on, as S3's) names another day: it writes a fresh object instead of taking the old one
    const commitStart = Date.now();
    const later = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store }, now: () => new Date(Date.now() + 30 * DAY_MS) });
    const again = await later.transactWriteOnce({ events: [event] });
    expect(again.written).toBe(true);
    expect(parseDataRef(again.events[0]!.dataref!)!.key).not.toBe(key);
    // the conditional PutObject answered 412 and the producer took the 30-day-old object as its own: S3 expires it
    // 7 days after this commit, while the bound promised 37 (replay for 7 days + a subscriber path of up to 30): the
    // event's subscribers dead-letter it (PayloadUnavailableError, 'offloaded data missing') inside the window
    const created = await lastModified(bucket, parseDataRef(again.events[0]!.dataref!)!.key);
    expect(created.getTime(), `the object the committed event refers to was created ${Math.round((commitStart - created.getTime()) / DAY_MS)} days before the commit`).toBeGreaterThanOrEqual(commitStart - 60_000);
  });
});

describe('R7-1 fixed: an object is reused by a retry on its own UTC day only', () => {
  test('a retry the same UTC day writes no second object; one after midnight UTC writes a fresh one; another payload never replaces the first', async () => {
    const envelope = buildEnvelope({ type: 'OrderPlaced', data: document(3000) }, { source: 'orders-service', now: () => new Date(), newId: () => crypto.randomUUID() });
    const at = (iso: string) => new Date(iso);
    const first = await offloadIfLarge(envelope, { config: claimCheck, store }, undefined, at('2026-11-29T23:58:00Z'));
    const sameDay = await offloadIfLarge(envelope, { config: claimCheck, store }, undefined, at('2026-11-29T23:59:59Z'));
    const nextDay = await offloadIfLarge(envelope, { config: claimCheck, store }, undefined, at('2026-11-30T00:00:01Z'));
    const other = await offloadIfLarge({ ...envelope, data: document(3000, 'y') }, { config: claimCheck, store }, undefined, at('2026-11-29T23:59:00Z'));
    expect(sameDay.dataref).toBe(first.dataref);
    expect(nextDay.dataref).not.toBe(first.dataref);
    expect(other.dataref).not.toBe(first.dataref);
    expect(parseDataRef(first.dataref!)!.key).toMatch(/^event-data\/[0-9a-f]{64}\/2026-11-29-[0-9a-f]{64}$/);
    const keys = (await s3.backendClient.send(new ListObjectsV2Command({ Bucket: bucket, Prefix: parseDataRef(first.dataref!)!.key.split('/').slice(0, 2).join('/') }))).Contents?.map((object) => object.Key);
    expect(keys).toHaveLength(3); // the first, the next day's, the other payload's: the same-day retry wrote nothing
    expect((await store.get(bucket, parseDataRef(first.dataref!)!.key))?.byteLength).toBe(first.iefdatasize);
  });
});

/** A transactional consumer of the inbox, as claim-check.int.test.ts builds it; `run` returns each record's outcome. */
function consumer(seen: EventEnvelope[], overrides: Partial<TransactionalConsumerOptions<unknown>> = {}, payloadBucket?: string) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  // the flow's bucket, as the flow sets it on its consumers (read when the consumer is created); none: R7-4's case
  if (payloadBucket !== undefined) Object.assign(process.env, { IEF_PAYLOAD_BUCKET_NAME: payloadBucket, IEF_PAYLOAD_KEY_PREFIX: PREFIX });
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
  delete process.env.IEF_PAYLOAD_BUCKET_NAME;
  delete process.env.IEF_PAYLOAD_KEY_PREFIX;
  const run = async (records: SQSRecord[]): Promise<string[]> => {
    const from = lines.length;
    await handler({ Records: records });
    const outcomeOf = new Map(lines.slice(from).filter((line) => typeof line.outcome === 'string').map((line) => [line.sqsMessageId, line.outcome as string]));
    return records.map((record) => outcomeOf.get(record.messageId) ?? 'none');
  };
  return { run, deadLetter };
}

async function publish(data: unknown): Promise<EventEnvelope> {
  const outbox = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store } });
  return (await outbox.transactWrite({ events: [{ type: 'OrderPlaced', data }] }))[0]!;
}

describe('R7-3: a copy of an applied offloaded event fetches its data before the duplicate check', () => {
  test('a redelivery of an applied event whose object is gone is acknowledged as a duplicate, not dead-lettered', async () => {
    const offloaded = await publish(document(4000));
    const seen: EventEnvelope[] = [];
    let reads = 0;
    const counting: PayloadReader = { get: async (b, k) => (reads++, store.get(b, k)) };
    const { run, deadLetter } = consumer(seen, { payloadReader: counting }, bucket);
    const record = sqsRecord(JSON.stringify(offloaded));
    expect(await run([record])).toEqual(['processed']);
    expect(reads).toBe(1);
    // the object expires (S3 lifecycle; here removed from s3rver as the rule would): the event is applied, its inbox
    // record live (deduplicationWindow), and a late copy arrives (SQS at-least-once, a DLQ redrive, a replay)
    const { bucketName, key } = parseDataRef(offloaded.dataref!)!;
    await s3.backendClient.send(new DeleteObjectCommand({ Bucket: bucketName, Key: key }));
    const copy = sqsRecord(record.body);
    // process-message.ts fetches and verifies the data (one GetObject of up to 64 MiB) before the batch read's
    // recognise() and before the inbox write: the copy of an APPLIED event is dead-lettered as PayloadUnavailableError
    // ('offloaded data missing, no retry can bring it back'), a false dead letter the operator is alarmed for, and
    // whose redrive fails again
    const outcome = await run([copy]);
    expect({ outcome, deadLetters: deadLetter.published.map((letter) => letter.errorMessage) }).toEqual({ outcome: ['duplicate'], deadLetters: [] });
    expect(seen).toHaveLength(1);
    // fixed (e42): the copy's one GetObject finds nothing, and the inbox record, looked up before any dead letter, shows
    // the event applied. With the batch read on, the copy is recognised with no GetObject at all
    // (claim-check-late-copy.int.test.ts): the offloaded event's fingerprint needs no data
    expect(reads, 'one GetObject that found nothing, then the inbox record').toBe(2);
  });
});

describe('R7-4: a consumer with no payload bucket configured follows a dataref into any bucket', () => {
  test('an offloaded envelope naming a bucket the flow never wrote is refused without a read when IEF_PAYLOAD_BUCKET_NAME is unset', async () => {
    expect(process.env.IEF_PAYLOAD_BUCKET_NAME).toBeUndefined();
    // another bucket the consumer's role can read (its own data, or another team's): an object whose content is known
    const foreign = await s3.createBucket('foreign');
    const text = JSON.stringify({ orderId: 'o-foreign', amount: 1_000_000 });
    await s3.client.send(new PutObjectCommand({ Bucket: foreign, Key: 'private/report.json', Body: text }));
    const envelope = {
      specversion: '1.0',
      id: `forged-${crypto.randomUUID()}`,
      source: 'orders-service',
      type: 'OrderPlaced',
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      dataref: `s3://${foreign}/private/report.json`,
      iefdatasha256: sha256Hex(text),
      iefdatasize: Buffer.byteLength(text),
    };
    let reads = 0;
    const counting: PayloadReader = { get: async (b, k) => (reads++, store.get(b, k)) };
    const seen: EventEnvelope[] = [];
    const { run } = consumer(seen, { payloadReader: counting });
    // process-message.ts documents claimCheck's default as 'none: an offloaded event is dead-lettered', but
    // create-consumer.ts always passes a reader, with no expected bucket when the variable is unset (every subscriber of
    // a flow without offloadLargeEvents, and every cross-account subscriber): the consumer reads s3://<any bucket>/<any
    // key> with its own role and applies the object as the event's data
    const outcome = await run([sqsRecord(JSON.stringify(envelope))]);
    expect({ outcome, reads, applied: seen.map((event) => event.data) }).toEqual({ outcome: ['dead-lettered'], reads: 0, applied: [] });
  });
});

describe('R7-7: transactWriteOnce takes its own earlier commit for a reused id when the inline threshold changed between tries', () => {
  test('a retry of the same request after a deploy raised payloadInlineThreshold says written: false, not "an event id must not be reused"', async () => {
    const id = `order-placed-${crypto.randomUUID()}`;
    const event = { id, type: 'OrderPlaced', data: document(3000) };
    // try 1 (threshold 1 KiB): offloaded and committed; its response is lost to the caller
    const before = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store } });
    const first = await before.transactWriteOnce({ events: [event] });
    expect(first.events[0]!.dataref).toBeDefined();
    // try 2, after a deploy set payloadInlineThreshold to 64 KiB (IEF_PAYLOAD_INLINE_THRESHOLD_BYTES): the same event,
    // now inline. outbox.ts compares payloadFingerprint (type, subject, data) and iefdatasha256: the stored envelope
    // has no data and a digest, the retry data and no digest, so the same payload reads as another one
    const after = new Outbox({ client, config: outboxConfig, claimCheck: { config: { ...claimCheck, inlineThresholdBytes: 64 * 1024 }, store } });
    const retried = await after.transactWriteOnce({ events: [event] }).then(
      (result) => ({ written: result.written, error: undefined as string | undefined }),
      (error: Error) => ({ written: undefined, error: error.message.replace(/^.*; /, '') }),
    );
    expect(retried).toEqual({ written: false, error: undefined });
  });

  test('the reverse (inline first, offloaded on the retry) is the same event too; another payload under the id is still refused across the change', async () => {
    const id = `order-placed-${crypto.randomUUID()}`;
    const event = { id, type: 'OrderPlaced', data: document(3000) };
    const inline = new Outbox({ client, config: outboxConfig, claimCheck: { config: { ...claimCheck, inlineThresholdBytes: 64 * 1024 }, store } });
    const first = await inline.transactWriteOnce({ events: [event] });
    expect(first.events[0]!.dataref).toBeUndefined();
    const offloading = new Outbox({ client, config: outboxConfig, claimCheck: { config: claimCheck, store } });
    expect(await offloading.transactWriteOnce({ events: [event] })).toEqual({ written: false, events: first.events });
    const other = { ...event, data: document(3000, 'y') };
    await expect(offloading.transactWriteOnce({ events: [other] })).rejects.toThrow(/already in the outbox with another payload/);
  });
});
