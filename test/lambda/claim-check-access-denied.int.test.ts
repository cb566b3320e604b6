/**
 * The consumer's reading of an offloaded event when S3 answers `403 AccessDenied` (issue 42). S3 answers a missing key
 * with 403, not 404, to a caller it does not let `s3:ListBucket` (S3 API Reference, GetObject, "Permissions"), so a 403
 * may be a missing object or a refused read. The runtime lists the one key (ListObjectsV2, the flow's prefix-scoped
 * `s3:ListBucket`) to tell them apart: a missing object is dead-lettered at once with its reason, a refused read is
 * retried (the queue's `maxReceiveCount` moves it to the dead-letter queue), with a message saying which grant to check.
 *
 * Real parts: s3rver behind the simulator's S3 endpoint, whose `authorize` hook stands for IAM (the only fault injected:
 * which requests IAM refuses); DynamoDB Local for the consumer's inbox.
 */
import { createHash } from 'node:crypto';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { S3PayloadStore } from '../../lambda/claim-check/payload-store';
import { resolvePayload } from '../../lambda/claim-check/resolve-payload';
import type { ConsumerConfig } from '../../lambda/config';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';
import type { EventEnvelope } from '../../lambda/envelope';
import { PayloadAccessDeniedError, PayloadUnavailableError } from '../../lambda/errors';
import { startS3Endpoint, type S3Endpoint, type S3EndpointOptions } from '../../simulator/aws/s3-endpoint';
import { startLocalS3, type LocalS3 } from '../../simulator/aws/s3-local';
import type { FaultProxy } from '../support/fault-proxy';
import { createInbox } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';
import { RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

const BUCKET = 'payloads-denied';
const PREFIX = 'event-data/';
let local: LocalS3;
let proxy: FaultProxy;
let client: DynamoDBClient;
let inboxConfig: ConsumerConfig;
const endpoints: S3Endpoint[] = [];

beforeAll(async () => {
  [local, { client, proxy }] = await Promise.all([startLocalS3([BUCKET]), startTestbed()]);
  inboxConfig = await createInbox(client, { subscriberName: 'billing', deduplicationWindowSeconds: 3600 });
});
afterAll(async () => {
  await Promise.all(endpoints.map((endpoint) => endpoint.stop()));
  await Promise.all([local.stop(), proxy.stop()]);
});

function s3Client(endpoint: string): S3Client {
  return new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'ASIADENIEDTEST', secretAccessKey: 'x' }, maxAttempts: 1 });
}

/** A store over an endpoint whose IAM refuses what `authorize` says. */
async function storeWith(authorize: NonNullable<S3EndpointOptions['authorize']>): Promise<S3PayloadStore> {
  const endpoint = await startS3Endpoint({ backend: local.endpoint, authorize });
  endpoints.push(endpoint);
  return new S3PayloadStore(s3Client(endpoint.endpoint));
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
let count = 0;

/** An offloaded envelope whose object is written (`write`) or not. */
async function offloaded(write: boolean): Promise<EventEnvelope> {
  count += 1;
  const data = { orderId: `order-${count}`, attachment: 'x'.repeat(2000) };
  const text = JSON.stringify(data);
  const id = `evt-denied-${count}-${crypto.randomUUID()}`;
  const key = `${PREFIX}${sha256(id)}/${sha256(text)}`;
  if (write) {
    // straight to s3rver (its own fixed credentials), as the producer's put would have stored it
    const raw = new S3Client({ endpoint: local.endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } });
    await raw.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: text }));
    raw.destroy();
  }
  return {
    specversion: '1.0',
    id,
    source: 'orders-service',
    type: 'OrderPlaced',
    time: '2026-11-29T12:00:00.000Z',
    datacontenttype: 'application/json',
    dataref: `s3://${BUCKET}/${key}`,
    iefdatasha256: sha256(text),
    iefdatasize: Buffer.byteLength(text),
  } as EventEnvelope;
}

const DENIED = 'User: arn:aws:sts::111111111111:assumed-role/fn is not authorized to perform (simulated IAM evaluation)';
/** IAM that refuses S3's own ListBucket check of a missing key (the one asked on the GetObject), and lets the listing through. */
function refusingTheImplicitCheckOnly(): NonNullable<S3EndpointOptions['authorize']> {
  let lastOperation: string | undefined;
  return async ({ operation }) => {
    const implicit = operation === 'ListBucket' && lastOperation === 'GetObject';
    lastOperation = operation;
    return implicit ? DENIED : undefined;
  };
}

describe('S3PayloadStore.get after a 403', () => {
  test('a missing object whose GetObject S3 answers 403: the listing shows no object, so it is missing (permanent, with the reason)', async () => {
    const store = await storeWith(refusingTheImplicitCheckOnly());
    const envelope = await offloaded(false);
    const error = await resolvePayload(envelope, store, { bucketName: BUCKET, keyPrefix: PREFIX }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadUnavailableError);
    expect((error as Error).message).toMatch(/^offloaded data missing, no retry can bring it back/);
  });

  test('a missing object and no s3:ListBucket at all: not known to be missing, so a retryable PayloadAccessDeniedError naming the grants', async () => {
    const store = await storeWith(async ({ operation }) => (operation === 'ListBucket' ? DENIED : undefined));
    const envelope = await offloaded(false);
    const error = await resolvePayload(envelope, store).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadAccessDeniedError);
    expect(error).not.toBeInstanceOf(PayloadUnavailableError);
    expect((error as Error).message).toMatch(
      new RegExp(`^S3 refused GetObject of ${envelope.dataref!.replace(/[/.]/g, '\\$&')} \\(403 AccessDenied\\), and listing its key too: the object is missing, or this function may not read it; grant it s3:ListBucket on the bucket`),
    );
  });

  test('an object that is there but whose read IAM refuses (no s3:GetObject or kms:Decrypt): retryable, saying the object is there', async () => {
    const store = await storeWith(async ({ operation }) => (operation === 'GetObject' ? DENIED : undefined));
    const envelope = await offloaded(true);
    const error = await resolvePayload(envelope, store).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PayloadAccessDeniedError);
    expect((error as Error).message).toMatch(/^S3 refused GetObject of s3:\/\/\S+ \(403 AccessDenied\), but the object is there: this function may not read it \(check s3:GetObject on the key and kms:Decrypt on the bucket's key\)/);
  });

  test('no listing when S3 answers 404 or the object: one request', async () => {
    const asked: string[] = [];
    const store = await storeWith(async ({ operation }) => (asked.push(operation), undefined));
    expect(await store.get(BUCKET, `${PREFIX}nothing-here`)).toBeUndefined();
    const envelope = await offloaded(true);
    await resolvePayload(envelope, store);
    expect(asked).toEqual(['GetObject', 'ListBucket', 'GetObject']);
  });
});

describe('the consumer after a 403', () => {
  // the flow gives its subscribers the payload bucket (a consumer without it follows no reference: review r7, R7-4)
  beforeAll(() => {
    process.env.IEF_PAYLOAD_BUCKET_NAME = BUCKET;
    process.env.IEF_PAYLOAD_KEY_PREFIX = PREFIX;
  });
  afterAll(() => {
    delete process.env.IEF_PAYLOAD_BUCKET_NAME;
    delete process.env.IEF_PAYLOAD_KEY_PREFIX;
  });

  function consumer(store: S3PayloadStore) {
    const { logger, lines } = recordingLogger();
    const deadLetter = new RecordingDeadLetterPublisher();
    const seen: EventEnvelope[] = [];
    const handler = createTransactionalConsumer<unknown>({ handle: (envelope) => void seen.push(envelope), client, config: inboxConfig, deadLetter, logger, metricsSink: () => undefined, payloadReader: store });
    return { handler, lines, deadLetter, seen };
  }

  test('a missing object behind a 403 is dead-lettered at once with its reason; a refused read is retried, never acknowledged', async () => {
    const missing = consumer(await storeWith(refusingTheImplicitCheckOnly()));
    const gone = sqsRecord(JSON.stringify(await offloaded(false)));
    expect(await missing.handler({ Records: [gone] })).toEqual({ batchItemFailures: [] });
    expect(missing.deadLetter.published).toHaveLength(1);
    expect(missing.deadLetter.published[0]).toMatchObject({ errorName: 'PayloadUnavailableError', body: gone.body });
    expect(missing.deadLetter.published[0]!.errorMessage).toMatch(/^offloaded data missing/);

    const refused = consumer(await storeWith(async ({ operation }) => (operation === 'GetObject' ? DENIED : undefined)));
    const there = sqsRecord(JSON.stringify(await offloaded(true)));
    expect(await refused.handler({ Records: [there] })).toEqual({ batchItemFailures: [{ itemIdentifier: there.messageId }] });
    expect(refused.deadLetter.published).toEqual([]);
    expect(refused.seen).toEqual([]);
    expect(JSON.stringify(refused.lines)).toContain('PayloadAccessDeniedError');
  });
});
