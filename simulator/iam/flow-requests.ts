/**
 * The requests each part of the flow makes in AWS, as the services document them, ready for {@link AccessControl}:
 * - a function's DynamoDB call: each action of the call on its table or index (./dynamodb-actions.ts) with DynamoDB's
 *   own condition keys filled from the request (./dynamodb-context.ts), and `kms:Decrypt`
 *   through DynamoDB when the table is under a customer-managed key (DynamoDB decrypts the table key with the caller's
 *   permissions; the encryption context names the table and, as `aws:dynamodb:subscriberId`, the account);
 * - an SQS send: `sqs:SendMessage`, and `kms:GenerateDataKey` + `kms:Decrypt` through SQS for an encrypted queue;
 * - an event source mapping polling its queue under the function's role: `sqs:ReceiveMessage`, `sqs:DeleteMessage`,
 *   `sqs:GetQueueAttributes` (Lambda Developer Guide, "Execution role permissions" for SQS) and `kms:Decrypt`;
 * - the pipe reading its stream (`dynamodb:DescribeStream`, `GetRecords`, `GetShardIterator`), with `kms:Decrypt`
 *   through DynamoDB when the table is under a customer-managed key, and publishing (`sns:Publish`, with `kms:GenerateDataKey` + `kms:Decrypt` through SNS for an encrypted topic);
 *   a pipe whose target is a queue (the ordered relay's FIFO queue) sends to it as any sender does (`sqs:SendMessage` + KMS);
 * - a function's own `sns:Publish` (the ordered fan-out's, through the simulator's SNS endpoint), with the KMS requests
 *   of an encrypted topic, as the pipe's; its `sns:ListSubscriptionsByTopic` on the topic (no key is used);
 * - SNS delivering to a queue: `sns.amazonaws.com` (`sns.<opt-in-region>.amazonaws.com` from a topic of an opt-in
 *   Region to another Region: ./sns-principal.ts) with the topic as `aws:SourceArn`, `sqs:SendMessage` under the
 *   queue's policy and the KMS actions under the queue key's policy;
 * - a function's object request to a bucket (the claim-check's): `s3:PutObject`, `s3:GetObject` (HeadObject too) or
 *   `s3:DeleteObject` on the object's ARN under the bucket policy, with, for an SSE-KMS bucket under a key of the app,
 *   the KMS request S3 makes with the caller's permissions: `kms:GenerateDataKey` for a put, `kms:Decrypt` for a get
 *   (S3 User Guide, "Using server-side encryption with AWS KMS keys", permissions), encryption context `aws:s3:arn` the
 *   object's ARN (the bucket's with S3 Bucket Keys). The request's `s3:x-amz-server-side-encryption` and
 *   `s3:x-amz-server-side-encryption-aws-kms-key-id` are its headers' (absent when it sends none, as in AWS); and
 *   `s3:ListBucket` on the bucket's ARN with `s3:prefix` (a ListObjectsV2's prefix, or the key of a missing object,
 *   whose 404 S3 gives only to a caller who may list: ../aws/s3-endpoint.ts); `s3:TlsVersion` is 1.2, the lowest TLS
 *   version AWS's endpoints accept (a policy demanding 1.3 is denied here though a client negotiating TLS 1.3 would
 *   pass it in AWS).
 */
import type { ResourceKey } from '../model/flow-model';
import type { AccessControl } from './access-control';
import type { AccessRequest, Caller } from './access-types';
import { dynamoDbAccesses } from './dynamodb-actions';
import { dynamoDbContext } from './dynamodb-context';
import { snsDeliveryPrincipal } from './sns-principal';

/** The actions an SQS event source mapping needs on its queue. */
export const EVENT_SOURCE_MAPPING_ACTIONS = ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'] as const;
/**
 * The requests the pipe makes to read a DynamoDB stream it knows by ARN: DescribeStream (its shards), GetShardIterator
 * and GetRecords. `dynamodb:ListStreams`, which the Pipes guide also lists, finds streams by table and is not needed to
 * read a known one; IAM authorizes it on `*` only (it takes no resource), so a grant scoped to the stream ARN does not
 * allow it. It is not requested here; docs/SIMULATOR.md says so.
 */
export const STREAM_READ_ACTIONS = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'] as const;
/** The S3 action each object operation is authorized as (HeadObject needs `s3:GetObject`). */
export const S3_OBJECT_ACTIONS: Readonly<Record<string, string>> = { PutObject: 's3:PutObject', GetObject: 's3:GetObject', HeadObject: 's3:GetObject', DeleteObject: 's3:DeleteObject' };
/**
 * `s3:TlsVersion` of a function's S3 request (the flow's bucket policy denies requests below TLS 1.2): the SDK's
 * HTTPS connection on Node.js, whose minimum is TLS 1.2; S3 may negotiate 1.3, which no "below 1.2" condition tells apart.
 */
const S3_TLS = { 's3:TlsVersion': '1.2' } as const;
/** The S3 condition keys the simulator fills from an object request's headers. */
const S3_HEADER_KEYS = ['x-amz-server-side-encryption', 'x-amz-server-side-encryption-aws-kms-key-id', 'if-none-match'] as const;
/** KMS actions of a sender to an encrypted queue or topic. */
const SEND_KMS_ACTIONS = ['kms:GenerateDataKey', 'kms:Decrypt'];

/** Builds the requests of the flow's parts for one run's access control. */
export class FlowRequests {
  /**
   * @param access the run's access control
   * @param tableByName the table of the templates each local table name is
   */
  public constructor(
    private readonly access: AccessControl,
    private readonly tableByName: ReadonlyMap<string, ResourceKey>,
  ) {}

  /** A function's DynamoDB call; undefined when it names no table of the templates (nothing to evaluate). */
  public dynamoDb(functionKey: ResourceKey, operation: string, body: Buffer | string): AccessRequest[] {
    const caller: Caller = { kind: 'role', via: functionKey };
    return dynamoDbAccesses(operation, body).flatMap((access) => {
      const table = this.tableByName.get(access.tableName);
      if (table === undefined) return [];
      const tableArn = this.access.arnOf(table);
      const { values, absent } = dynamoDbContext(access, this.access.tableKeysOf(table));
      const request: AccessRequest = {
        caller,
        action: access.action,
        resource: table,
        ...(access.indexName === undefined ? {} : { resourceArn: `${tableArn}/index/${access.indexName}` }),
        context: values,
        absent,
      };
      return this.access.withKey(request, ['kms:Decrypt'], 'dynamodb', this.tableEncryptionContext(access.tableName, table));
    });
  }

  /** The encryption context DynamoDB sets when it uses a table's customer-managed key (DynamoDB Developer Guide, "Encryption context"). */
  private tableEncryptionContext(tableName: string, table?: ResourceKey): Record<string, string> {
    return { 'aws:dynamodb:tableName': tableName, 'aws:dynamodb:subscriberId': table === undefined ? this.access.accountId : this.access.accountOf(table) };
  }

  /** `sqs:<action>` by `caller` on a queue, with the KMS requests of a send to an encrypted queue. */
  public sqs(caller: Caller, action: string, queue: ResourceKey): AccessRequest[] {
    const request: AccessRequest = { caller, action: `sqs:${action}`, resource: queue };
    const sends = action === 'SendMessage' || action === 'SendMessageBatch';
    return sends ? this.access.withKey(request, SEND_KMS_ACTIONS, 'sqs', { 'aws:sqs:arn': this.access.arnOf(queue) }) : [request];
  }

  /** An event source mapping polling its queue. */
  public consume(functionKey: ResourceKey, queue: ResourceKey): AccessRequest[] {
    const caller: Caller = { kind: 'role', via: functionKey };
    const requests = EVENT_SOURCE_MAPPING_ACTIONS.map((action): AccessRequest => ({ caller, action, resource: queue }));
    const [first, ...rest] = requests;
    return [...this.access.withKey(first!, ['kms:Decrypt'], 'sqs', { 'aws:sqs:arn': this.access.arnOf(queue) }), ...rest];
  }

  /** The pipe reading its source table's stream. */
  public readStream(pipe: ResourceKey, table: ResourceKey, streamArn: string): AccessRequest[] {
    const [first, ...rest] = STREAM_READ_ACTIONS.map((action): AccessRequest => ({ caller: { kind: 'role', via: pipe }, action, resource: table, resourceArn: streamArn }));
    const tableName = this.access.refOf(table);
    // the records of a table under a customer-managed key are decrypted with the reader's permissions, as its items are
    return [...this.access.withKey(first!, ['kms:Decrypt'], 'dynamodb', this.tableEncryptionContext(tableName, table)), ...rest];
  }

  /** A pipe or a function (under its role) publishing to a topic. */
  public publish(sender: ResourceKey, topic: ResourceKey): AccessRequest[] {
    return this.access.withKey({ caller: { kind: 'role', via: sender }, action: 'sns:Publish', resource: topic }, SEND_KMS_ACTIONS, 'sns', { 'aws:sns:topicArn': this.access.arnOf(topic) });
  }

  /** A function (under its role) calling `sns:<action>` on a topic that uses no key (ListSubscriptionsByTopic). */
  public topicAction(functionKey: ResourceKey, action: string, topic: ResourceKey): AccessRequest[] {
    return [{ caller: { kind: 'role', via: functionKey }, action: `sns:${action}`, resource: topic }];
  }

  /**
   * An object request on a bucket of the templates by `caller` (a function's key: under its role; see the module comment); `headers` are the request's,
   * lower-case. `bucketKeyEnabled`: S3 Bucket Keys, KMS then sees the bucket's ARN as encryption context.
   */
  public s3Object(caller: ResourceKey | Caller, operation: string, bucket: ResourceKey, objectKey: string, headers: Readonly<Record<string, string | undefined>>, bucketKeyEnabled: boolean): AccessRequest[] {
    const bucketArn = this.access.arnOf(bucket);
    const asker: Caller = typeof caller === 'string' ? { kind: 'role', via: caller } : caller;
    if (operation === 'ListBucket') {
      // a ListObjectsV2, or S3's choice between 404 and 403 for a missing key: `objectKey` is the s3:prefix
      return [{ caller: asker, action: 's3:ListBucket', resource: bucket, resourceArn: bucketArn, context: { 's3:prefix': objectKey, ...S3_TLS }, absent: [] }];
    }
    const action = S3_OBJECT_ACTIONS[operation];
    if (action === undefined) return [];
    const objectArn = `${bucketArn}/${objectKey}`;
    const context: Record<string, string> = { ...S3_TLS };
    const absent: string[] = [];
    for (const header of S3_HEADER_KEYS) {
      const value = headers[header];
      if (value === undefined) absent.push(`s3:${header}`);
      else context[`s3:${header}`] = value;
    }
    const request: AccessRequest = { caller: asker, action, resource: bucket, resourceArn: objectArn, context, absent };
    const kmsActions = operation === 'PutObject' ? ['kms:GenerateDataKey'] : operation === 'GetObject' ? ['kms:Decrypt'] : [];
    if (kmsActions.length === 0) return [request];
    return this.access.withKey(request, kmsActions, 's3', { 'aws:s3:arn': bucketKeyEnabled ? bucketArn : objectArn });
  }

  /** SNS delivering a message of `topic` to `queue` (a subscription's queue or its dead-letter queue). */
  public deliver(topic: ResourceKey, queue: ResourceKey): AccessRequest[] {
    const service = snsDeliveryPrincipal(this.access.regionOf(topic), this.access.regionOf(queue));
    return this.sqs({ kind: 'service', service, source: topic }, 'SendMessage', queue);
  }
}
