/**
 * The committed events the checks and effect probes read (issue 42): an offloaded envelope (a `dataref`, no `data`)
 * gets its `data` back from the run's S3 when the object matches the envelope's digest and size, so an offloaded event
 * looks to the checks as it looks to its handlers; an object missing or altered leaves it without `data`.
 */
import { createHash } from 'node:crypto';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { CLAIM_CHECK_ATTRIBUTES, payloadDataRef, payloadObjectKey, DEFAULT_PAYLOAD_KEY_PREFIX } from '../../../lambda/contract/claim-check';
import { startS3Endpoint, type S3Endpoint } from '../../../simulator/aws/s3-endpoint';
import { startLocalS3, type LocalS3 } from '../../../simulator/aws/s3-local';
import { parseEnvelope, withOffloadedData } from '../../../simulator/run/committed-events';

const BUCKET = 'payloads';
let local: LocalS3;
let endpoint: S3Endpoint;
const sha256 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex');

beforeAll(async () => {
  local = await startLocalS3([BUCKET]);
  endpoint = await startS3Endpoint({ backend: local.endpoint });
});
afterAll(async () => {
  await endpoint.stop();
  await local.stop();
});

/** Stores `data` as the producer does and returns the envelope message it would relay. */
async function offload(eventId: string, data: unknown, stored = JSON.stringify(data)): Promise<string> {
  const text = JSON.stringify(data);
  const key = payloadObjectKey(DEFAULT_PAYLOAD_KEY_PREFIX, sha256(eventId), sha256(text), new Date());
  const s3 = new S3Client({ region: 'us-east-1', endpoint: endpoint.endpoint, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
  await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: stored }));
  return JSON.stringify({
    specversion: '1.0',
    id: eventId,
    type: 'OrderPlaced',
    source: 'orders',
    [CLAIM_CHECK_ATTRIBUTES.DATAREF]: payloadDataRef(BUCKET, key),
    [CLAIM_CHECK_ATTRIBUTES.SHA256]: sha256(text),
    [CLAIM_CHECK_ATTRIBUTES.SIZE]: Buffer.byteLength(text),
  });
}

const s3View = () => ({ endpoint: endpoint.endpoint, injectedObjectFaults: () => endpoint.injectedObjectFaults(), readObject: endpoint.readObject, buckets: new Map() });

describe('an offloaded committed event', () => {
  test('gets its data back from S3 when the object matches the envelope', async () => {
    const data = { orderId: 'o-1', attachment: 'x'.repeat(1024 * 1024) };
    const message = await offload('event-1', data);
    const event = parseEnvelope(message)!;
    expect(event.data).toBeUndefined();
    expect((await withOffloadedData(event, message, s3View())).data).toEqual(data);
  });

  test('stays without data when the object does not match its digest, or is missing, or the run has no S3', async () => {
    const altered = await offload('event-2', { orderId: 'o-2' }, JSON.stringify({ orderId: 'o-X' }));
    expect((await withOffloadedData(parseEnvelope(altered)!, altered, s3View())).data).toBeUndefined();
    const missing = JSON.stringify({ ...JSON.parse(await offload('event-3', { orderId: 'o-3' })), [CLAIM_CHECK_ATTRIBUTES.DATAREF]: payloadDataRef(BUCKET, 'event-data/none/none') });
    expect((await withOffloadedData(parseEnvelope(missing)!, missing, s3View())).data).toBeUndefined();
    const kept = await offload('event-4', { orderId: 'o-4' });
    expect((await withOffloadedData(parseEnvelope(kept)!, kept, undefined)).data).toBeUndefined();
  });
});
