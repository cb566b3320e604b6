/**
 * Review r7 (seventh session, adversarial) of the claim-check (issue 42): findings as failing tests, against DynamoDB
 * Local and the local S3 (s3rver behind the simulator's S3 endpoint, test/support/s3-local.ts). Each test names its
 * finding (R7-n) and says what AWS would do. R7-1 and R7-3 (not fixed yet) are on branch s7-rv7, failing, and named
 * in docs/LARGE-EVENTS.md ("Not built yet").
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import type { ClaimCheckConfig } from '../../lambda/claim-check/claim-check-config';
import { sha256Hex } from '../../lambda/claim-check/offload';
import { S3PayloadStore, type PayloadReader } from '../../lambda/claim-check/payload-store';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { Outbox } from '../../lambda/producer/outbox';
import { createTransactionalConsumer, type TransactionalConsumerOptions } from '../../lambda/consumer/transactional-consumer';
import type { EventEnvelope } from '../../lambda/envelope';
import type { SQSRecord } from '../../lambda/consumer/sqs';
import { RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';
import type { FaultProxy } from '../support/fault-proxy';
import { createInbox, createOutbox } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';
import { startLocalS3, type LocalS3 } from '../support/s3-local';

const PREFIX = 'event-data/';
const THRESHOLD = 1024;

let client: DynamoDBClient;
let proxy: FaultProxy;
let s3: LocalS3;
let store: S3PayloadStore;
let bucket: string;
let outboxConfig: ProducerConfig;
let inboxConfig: ConsumerConfig;
let claimCheck: ClaimCheckConfig;

beforeAll(async () => {
  [{ client, proxy }, s3] = await Promise.all([startTestbed(), startLocalS3()]);
  store = new S3PayloadStore(s3.client);
  [bucket, outboxConfig, inboxConfig] = await Promise.all([
    s3.createBucket(),
    createOutbox(client, { eventSource: 'orders-service', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
    createInbox(client, { subscriberName: 'billing', deduplicationWindowSeconds: 3600 }),
  ]);
  claimCheck = { bucketName: bucket, keyPrefix: PREFIX, inlineThresholdBytes: THRESHOLD };
});
afterAll(async () => {
  await Promise.all([proxy.stop(), s3.stop()]);
});

const document = (size: number, seed = 'x') => ({ orderId: `order-${crypto.randomUUID()}`, attachment: seed.repeat(size) });


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
