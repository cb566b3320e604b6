/**
 * The claim-check's payload bucket of a flow (issue 42, docs/LARGE-EVENTS.md): where producers put the data of an event
 * too large to travel inline, and consumers read it back. Its settings, its one lifecycle rule (checked at synth against
 * the longest time an offloaded event can still be read), and the grants of producers and consumers, scoped to the key
 * prefix. The runtime reads the bucket from the variables of `CLAIM_CHECK_ENV` (lambda/contract/claim-check.ts).
 */
import { type CfnElement, Duration, Lazy, type RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CLAIM_CHECK_ENV, DEFAULT_PAYLOAD_KEY_PREFIX } from '../../lambda/contract/claim-check';
import { grantKeyViaService } from './kms-actions';
import { libraryGrant, libraryGrantOrResource } from './library-statements';
import { acknowledgeInRegulatoryPacks } from './regulatory-acknowledgements';

/** The construct id of a flow's payload bucket. */
export const PAYLOAD_BUCKET_ID = 'PayloadBucket';

/** The prefix every object of the flow is written under (the runtime's default; the lifecycle rule and grants use it). */
export const PAYLOAD_KEY_PREFIX = DEFAULT_PAYLOAD_KEY_PREFIX;

/** One term of the window an offloaded event must stay readable: where it comes from and how long it is. */
export interface WindowTerm {
  /** e.g. `the outbox's eventRetention`, `subscriber Billing's deduplicationWindow` */
  readonly what: string;
  readonly duration: Duration;
}

/** The longest time an offloaded event can still be read, and the terms it adds up. */
export interface ReadableWindow {
  readonly days: number;
  readonly terms: readonly WindowTerm[];
}

/** Whole days of `duration`, rounded up (S3 expires objects in whole days). */
export function wholeDays(duration: Duration): number {
  return Math.ceil(duration.toSeconds() / 86_400);
}

/**
 * How long `queue` keeps a message (its `MessageRetentionPeriod`); SQS's default of 4 days when the queue does not set
 * one. The flow's and the relay's queues always set it.
 */
export function queueRetention(queue: sqs.IQueue): Duration {
  const seconds = (queue.node.defaultChild as sqs.CfnQueue | undefined)?.messageRetentionPeriod;
  return typeof seconds === 'number' ? Duration.seconds(seconds) : Duration.days(4);
}

/** `7 days (the outbox's eventRetention) + 30 days (subscriber Billing's deduplicationWindow)` */
export function describeWindow(window: ReadableWindow): string {
  return window.terms.map((term) => `${term.duration.toHumanString()} (${term.what})`).join(' + ');
}

/** Creates the bucket: SSE-KMS with `key`, public access blocked, TLS only, unversioned, one expiring lifecycle rule. */
export function createPayloadBucket(scope: Construct, key: kms.IKey, removalPolicy: RemovalPolicy, expirationDays: () => number): s3.Bucket {
  const bucket = new s3.Bucket(scope, PAYLOAD_BUCKET_ID, {
    encryption: s3.BucketEncryption.KMS,
    encryptionKey: key,
    // one KMS request per bucket key and period rather than per object: the cost of SSE-KMS at volume
    bucketKeyEnabled: true,
    blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
    enforceSSL: true,
    minimumTLSVersion: 1.2,
    objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
    // Unversioned: every object is written once (PutObject If-None-Match: *, under a key of the event id and the data's
    // digest), so there is no version to keep; a changed or deleted object is caught by its digest and dead-letters its
    // event with the reason. Versioning would keep nothing the flow reads, and noncurrent versions would need a rule of
    // their own to ever expire.
    versioned: false,
    removalPolicy,
    lifecycleRules: [
      {
        id: 'ExpireOffloadedEventData',
        prefix: PAYLOAD_KEY_PREFIX,
        expiration: Duration.days(Lazy.number({ produce: expirationDays })),
        abortIncompleteMultipartUploadAfter: Duration.days(1),
      },
    ],
  });
  // Nobody deletes an event's data: it expires. A deleted object would dead-letter its event at every reader left.
  bucket.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'DenyDeletingEventData',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['s3:DeleteObject', 's3:DeleteObjectVersion'],
      resources: [bucket.arnForObjects(`${PAYLOAD_KEY_PREFIX}*`)],
    }),
  );
  // Nor is it replaced: the bucket keeps no versions, so a PutObject without If-None-Match over an event's object would
  // be the loss of its only copy. The runtime always writes with If-None-Match: * (S3 conditional writes; the condition
  // key s3:if-none-match, "Enforce conditional writes on Amazon S3 buckets"); multipart uploads, which cannot carry it,
  // are refused too (the runtime never uses them: an object is at most 64 MiB, one PutObject).
  bucket.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'DenyOverwritingEventData',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['s3:PutObject'],
      resources: [bucket.arnForObjects(`${PAYLOAD_KEY_PREFIX}*`)],
      conditions: { Null: { 's3:if-none-match': 'true' } },
    }),
  );
  const noAccessLogs =
    'The payload bucket holds event data written once and read by the flow\'s own functions, whose every read is in their ' +
    'logs (event id, dataref); S3 server access logs would need a second bucket per flow. Enable CloudTrail data events ' +
    'on it if your policy requires per-object logs.';
  Validations.of(bucket).acknowledge({ id: 'AwsSolutions-S1', reason: noAccessLogs });
  acknowledgeInRegulatoryPacks(bucket, 'S3BucketLoggingEnabled', noAccessLogs);
  const noReplication =
    'Event data is kept only for the window in which an event can still be read (the lifecycle rule); the outbox is the ' +
    'record of the event and a restored flow re-offloads on replay. Replication would double storage for nothing the flow reads.';
  acknowledgeInRegulatoryPacks(bucket, 'S3BucketReplicationEnabled', noReplication);
  acknowledgeInRegulatoryPacks(
    bucket,
    'S3BucketVersioningEnabled',
    'Objects are written once under a key of the event id and the data digest (conditional PutObject), and deletion is ' +
      'denied by the bucket policy: there is no earlier version to keep. A changed object fails its digest check and ' +
      'dead-letters its event with the reason.',
  );
  acknowledgeInRegulatoryPacks(bucket, 'S3DefaultEncryptionKMS', 'The bucket is encrypted with SSE-KMS under the flow\'s customer-managed key (BucketEncryption.KMS).');
  return bucket;
}

/** The variables a reader of the bucket needs (consumers, operator tools). */
export function payloadReaderEnvironment(bucket: s3.IBucket): Record<string, string> {
  return { [CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME]: bucket.bucketName, [CLAIM_CHECK_ENV.PAYLOAD_KEY_PREFIX]: PAYLOAD_KEY_PREFIX };
}

/** The variables a producer needs: the reader's, and the inline threshold when one is set. */
export function payloadProducerEnvironment(bucket: s3.IBucket, inlineThresholdBytes: number | undefined): Record<string, string> {
  return {
    ...payloadReaderEnvironment(bucket),
    ...(inlineThresholdBytes === undefined ? {} : { [CLAIM_CHECK_ENV.INLINE_THRESHOLD_BYTES]: String(inlineThresholdBytes) }),
  };
}

/**
 * Lets `grantee` write event data: `s3:PutObject` on objects under the prefix (nothing else: no read, no delete, no
 * ACL), and `kms:GenerateDataKey` on the bucket's key through S3 only, which S3 asks for on an SSE-KMS PutObject.
 */
export function grantWritePayloads(origin: string, bucket: s3.IBucket, grantee: iam.IGrantable): iam.Grant {
  acknowledgePrefixWildcard(bucket, grantee);
  const put = libraryGrant(origin, { grantee, actions: ['s3:PutObject'], resourceArns: [bucket.arnForObjects(`${PAYLOAD_KEY_PREFIX}*`)] });
  const key = grantKeyViaService(origin, bucket.encryptionKey, grantee, 's3', ['kms:GenerateDataKey']);
  return key === undefined ? put : put.combine(key);
}

/**
 * Lets `grantee` read event data: `s3:GetObject` under the prefix, `s3:ListBucket` on the bucket conditioned on
 * `s3:prefix` under it (without it S3 answers a missing key `403 AccessDenied`, which a reader must retry, instead of
 * `404 NoSuchKey`, which dead-letters its event with the reason), and `kms:Decrypt` on the key through S3 only.
 */
export function grantReadPayloads(origin: string, bucket: s3.IBucket, grantee: iam.IGrantable): iam.Grant {
  acknowledgePrefixWildcard(bucket, grantee);
  const get = libraryGrantOrResource(origin, { grantee, actions: ['s3:GetObject'], resourceArns: [bucket.arnForObjects(`${PAYLOAD_KEY_PREFIX}*`)], resource: bucket });
  const list = libraryGrant(origin, {
    grantee,
    actions: ['s3:ListBucket'],
    resourceArns: [bucket.bucketArn],
    conditions: { StringLike: { 's3:prefix': `${PAYLOAD_KEY_PREFIX}*` } },
  });
  const key = grantKeyViaService(origin, bucket.encryptionKey, grantee, 's3', ['kms:Decrypt']);
  return key === undefined ? get.combine(list) : get.combine(list).combine(key);
}

/**
 * Answers cdk-nag's `AwsSolutions-IAM5` for the one wildcard of the grants, the objects under the prefix (the keys are
 * `<prefix><sha256(event id)>/<sha256(data)>`, not known before the events are), on the grantee's principal.
 */
function acknowledgePrefixWildcard(bucket: s3.IBucket, grantee: iam.IGrantable): void {
  const principal = grantee.grantPrincipal;
  if (!Construct.isConstruct(principal) || !Construct.isConstruct(bucket.node.defaultChild)) return;
  const logicalId = Stack.of(bucket).resolve(Stack.of(bucket).getLogicalId(bucket.node.defaultChild as CfnElement)) as string;
  Validations.of(principal).acknowledge({
    id: `AwsSolutions-IAM5[Resource::<${logicalId}.Arn>/${PAYLOAD_KEY_PREFIX}*]`,
    reason:
      'The objects of offloaded events under the payload prefix: their keys are derived from each event id and data digest, ' +
      'so they are not known at deploy time; the grant is one bucket, one prefix and one action (PutObject or GetObject).',
  });
}
