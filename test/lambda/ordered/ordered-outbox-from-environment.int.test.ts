/**
 * OrderedOutbox.fromEnvironment: an ordered producer configured as the constructs configure it (the outbox table's
 * variables, and the flow's payload bucket's when the flow offloads large events), against DynamoDB Local and a local S3.
 */
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { ENV } from '../../../lambda/contract/environment';
import { CLAIM_CHECK_ENV, parseDataRef } from '../../../lambda/contract/claim-check';
import { EventTooLargeError } from '../../../lambda/errors';
import { OrderedOutbox } from '../../../lambda/ordered/ordered-outbox';
import { largeDocument, PAYLOAD_PREFIX, PAYLOAD_THRESHOLD, startClaimCheckBed, type ClaimCheckBed } from '../claim-check-kit';

let bed: ClaimCheckBed;

beforeAll(async () => {
  bed = await startClaimCheckBed();
});
afterAll(async () => {
  vi.unstubAllEnvs();
  await bed.stop();
});

/** The variables an ordered producer of the flow gets (test/constructs pin them), for this bed's outbox table. */
function stubProducerEnvironment(): void {
  vi.stubEnv(ENV.OUTBOX_TABLE_NAME, bed.outboxConfig.outboxTableName);
  vi.stubEnv(ENV.OUTBOX_PARTITION_KEY_NAME, bed.outboxConfig.partitionKeyName);
  vi.stubEnv(ENV.OUTBOX_SORT_KEY_NAME, bed.outboxConfig.sortKeyName ?? '');
  vi.stubEnv(ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME, bed.outboxConfig.timeToLiveAttributeName ?? '');
  vi.stubEnv(ENV.OUTBOX_EVENT_RETENTION_SECONDS, '3600');
  vi.stubEnv(ENV.EVENT_SOURCE, 'fulfilment-service');
}

describe('OrderedOutbox.fromEnvironment', () => {
  test('writes the ordered event to the table the environment names, with its source, as sequence 1', async () => {
    stubProducerEnvironment();
    try {
      const [written] = await OrderedOutbox.fromEnvironment(bed.client).transactWrite({ events: [{ aggregateId: `order-${crypto.randomUUID()}`, type: 'OrderPacked', data: { packed: true } }] });
      expect(written).toMatchObject({ source: 'fulfilment-service', sequence: '0000000000000001' });
    } finally {
      vi.unstubAllEnvs();
    }
  });

  test('without the payload bucket variables, an event over the size limit is refused (nothing offloads it)', async () => {
    stubProducerEnvironment();
    try {
      const outbox = OrderedOutbox.fromEnvironment(bed.client);
      await expect(outbox.transactWrite({ events: [{ aggregateId: `order-${crypto.randomUUID()}`, type: 'OrderDelivered', data: largeDocument(300_000) }] })).rejects.toThrow(EventTooLargeError);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  test("with the flow's payload bucket variables, a large event is offloaded to the bucket and its envelope stays small", async () => {
    stubProducerEnvironment();
    vi.stubEnv(CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME, bed.bucket);
    vi.stubEnv(CLAIM_CHECK_ENV.PAYLOAD_KEY_PREFIX, PAYLOAD_PREFIX);
    vi.stubEnv(CLAIM_CHECK_ENV.INLINE_THRESHOLD_BYTES, String(PAYLOAD_THRESHOLD));
    // the Lambda environment's S3 client: the local S3's endpoint, as the simulator sets AWS_ENDPOINT_URL_S3
    vi.stubEnv('AWS_ENDPOINT_URL_S3', bed.s3.endpoint);
    vi.stubEnv('AWS_REGION', 'us-east-1');
    vi.stubEnv('AWS_ACCESS_KEY_ID', 'test');
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'test');
    try {
      const data = largeDocument(300_000);
      const [written] = await OrderedOutbox.fromEnvironment(bed.client).transactWrite({ events: [{ aggregateId: `order-${crypto.randomUUID()}`, type: 'OrderDelivered', data }] });
      expect('data' in written!).toBe(false);
      const { bucketName, key } = parseDataRef(written!.dataref!)!;
      expect(bucketName).toBe(bed.bucket);
      expect(key.startsWith(PAYLOAD_PREFIX)).toBe(true);
      const object = await bed.s3.client.send(new GetObjectCommand({ Bucket: bucketName, Key: key }));
      expect(await object.Body!.transformToString('utf8')).toBe(JSON.stringify(data));
    } finally {
      vi.unstubAllEnvs();
    }
  });
});
