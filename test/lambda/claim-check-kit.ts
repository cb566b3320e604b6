/**
 * The test bed of the claim-check's integration tests (issue 42): DynamoDB Local behind the fault proxy, the local S3
 * (s3rver behind the simulator's S3 endpoint), a payload bucket, an outbox and a transactional inbox, and the claim-check
 * config with a 1 KiB inline threshold. Shared by claim-check.int and review-r7-claim-check.int (duplicates --change).
 * Not a test file.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import type { ClaimCheckConfig } from '../../lambda/claim-check/claim-check-config';
import { S3PayloadStore } from '../../lambda/claim-check/payload-store';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import type { FaultProxy } from '../support/fault-proxy';
import { createInbox, createOutbox } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';
import { startLocalS3, type LocalS3 } from '../support/s3-local';

/** The key prefix of the bed's objects. */
export const PAYLOAD_PREFIX = 'event-data/';
/** A threshold small enough that a 2 KB document is offloaded and a small event is not. */
export const PAYLOAD_THRESHOLD = 1024;

/** What {@link startClaimCheckBed} starts; `stop` ends the proxy and the local S3. */
export interface ClaimCheckBed {
  readonly client: DynamoDBClient;
  readonly proxy: FaultProxy;
  readonly s3: LocalS3;
  readonly store: S3PayloadStore;
  readonly bucket: string;
  readonly outboxConfig: ProducerConfig;
  readonly inboxConfig: ConsumerConfig;
  readonly claimCheck: ClaimCheckConfig;
  stop(): Promise<void>;
}

/** Starts the bed: the outbox (TTL attribute set), the inbox of subscriber `billing` (window 1 hour), the bucket. */
export async function startClaimCheckBed(): Promise<ClaimCheckBed> {
  const [{ client, proxy }, s3] = await Promise.all([startTestbed(), startLocalS3()]);
  const [bucket, outboxConfig, inboxConfig] = await Promise.all([
    s3.createBucket(),
    createOutbox(client, { eventSource: 'orders-service', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
    createInbox(client, { subscriberName: 'billing', deduplicationWindowSeconds: 3600 }),
  ]);
  return {
    client,
    proxy,
    s3,
    store: new S3PayloadStore(s3.client),
    bucket,
    outboxConfig,
    inboxConfig,
    claimCheck: { bucketName: bucket, keyPrefix: PAYLOAD_PREFIX, inlineThresholdBytes: PAYLOAD_THRESHOLD },
    stop: async () => void (await Promise.all([proxy.stop(), s3.stop()])),
  };
}

/** An order document of about `size` characters of `seed` (a new order id each call). */
export const largeDocument = (size: number, seed = 'x') => ({ orderId: `order-${crypto.randomUUID()}`, attachment: seed.repeat(size) });
