/**
 * The claim-check (issue 42) for a subscriber in another account or Region than its flow (issue 41,
 * docs/CROSS-ACCOUNT.md): it reads offloaded events' data from the flow's payload bucket, in the flow's account and
 * Region, with its consumer's role of its own account.
 *
 * What AWS needs (docs/LARGE-EVENTS.md, "Subscribers in other accounts and Regions"):
 * - **S3.** Across accounts the bucket policy AND the role's identity policy must both allow `s3:GetObject` on the
 *   object (and `s3:ListBucket`, for S3 to answer a missing key 404 rather than 403). The bucket policy names the
 *   subscriber's account as principal and pins the consumer's role with `aws:PrincipalArn`: the role is created after
 *   the flow's stack (its stack deploys second), and a resource policy naming a role ARN that does not exist yet is
 *   refused, while a condition on it is not.
 * - **KMS.** The objects are SSE-KMS under the flow's key; S3 decrypts with the caller's permissions, so across accounts
 *   the key policy AND the identity policy must both allow `kms:Decrypt`. The key policy's statement is conditioned on
 *   the role (`aws:PrincipalArn`), on S3 in the flow's Region (`kms:ViaService`) and on the bucket (encryption context
 *   `aws:s3:arn`: the bucket's ARN, the bucket using S3 Bucket Keys). The identity policy can not name the key's ARN
 *   (it is known only when the flow's stack is deployed, and CDK passes no token across environments): it names the
 *   keys of the flow's account and Region, with the same two conditions.
 * - **Region.** The consumer's S3 client must call the bucket's Region: across Regions it gets
 *   `IEF_PAYLOAD_BUCKET_REGION`.
 * - **Names.** The bucket gets a physical name (`ief-payload-<hash of its path>-<account>-<Region>`: globally unique
 *   as S3 requires, since the account is in it) and the consumer's role one derived from its construct path, so each
 *   side names the other with a literal (CDK passes no token between environments).
 */
import { Aws, Names, Stack, Token, Validations } from 'aws-cdk-lib';
import { createHash } from 'node:crypto';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { CLAIM_CHECK_ENV } from '../../lambda/contract/claim-check';
import type { FlowPlacement } from '../consumer/private/flow-placement';
import { markLibraryStatement } from './library-statements';
import { PAYLOAD_KEY_PREFIX } from './payload-bucket';
import { validationError } from './validation-error';

/** IAM role names: up to 64 of `A-Z a-z 0-9 + = , . @ _ -`. */
const ROLE_NAME_MAX_LENGTH = 64;

/** The statement ids, on the flow's side, of one remote reader (`Sid`s allow A-Z a-z 0-9 only). */
export function remoteReaderSids(subscriberName: string, account: string): { readonly get: string; readonly list: string; readonly decrypt: string } {
  const name = subscriberName.replace(/[^A-Za-z0-9]/g, '');
  return { get: `PayloadGetBy${name}From${account}`, list: `PayloadListBy${name}From${account}`, decrypt: `PayloadDecryptBy${name}From${account}` };
}

/**
 * The bucket's physical name, set once: `ief-payload-<8 hex of sha256(construct path)>-<account>-<Region>` (at most 49
 * characters, lower case: a valid S3 bucket name, unique across AWS as long as the account's app keeps one bucket per
 * path).
 */
export function namePayloadBucket(bucket: s3.IBucket): string {
  const cfn = bucket.node.defaultChild as s3.CfnBucket;
  const stack = Stack.of(bucket);
  const given = stack.resolve(cfn.bucketName) as unknown;
  if (typeof given === 'string') return given;
  const hash = createHash('sha256').update(bucket.node.path).digest('hex').slice(0, 8);
  const name = `ief-payload-${hash}-${stack.account}-${stack.region}`;
  cfn.bucketName = name;
  return name;
}

/**
 * Gives `fn`'s role a name (once) and returns its ARN, a literal but for the partition. The name is derived from the
 * construct path and ends with the role's Region (`<path>-<hash>-<Region>`, at most 64 characters): IAM role names are
 * global to an account, so the same subscriber stack deployed to two Regions of one account gets two names.
 */
function namedRoleArn(fn: lambda.IFunction, account: string): { readonly role: iam.Role; readonly arn: string } {
  const role = fn.role;
  if (!(role instanceof iam.Role)) throw validationError(`the consumer function ${fn.node.path} has no role of this app to name`);
  const cfn = role.node.defaultChild as iam.CfnRole;
  const stack = Stack.of(role);
  const resolved = stack.resolve(cfn.roleName) as unknown;
  // a stack without a literal Region is not placed apart from its flow's; its name stays the path's alone
  const regionSuffix = Token.isUnresolved(stack.region) ? '' : `-${stack.region}`;
  const roleName =
    typeof resolved === 'string'
      ? resolved
      : `${Names.uniqueResourceName(role, { maxLength: ROLE_NAME_MAX_LENGTH - regionSuffix.length, separator: '-', allowedSpecialCharacters: '-_' })}${regionSuffix}`;
  cfn.roleName = roleName;
  return { role, arn: `arn:${Aws.PARTITION}:iam::${account}:role/${roleName}` };
}

/**
 * Lets a subscriber of another account or Region (`placement`) read the flow's payload bucket: its consumer's
 * variables and identity policy, and, across accounts, the bucket policy's and the key policy's statements for its
 * role (see the module comment). `owner` starts the messages of the refusals.
 */
export function letRemoteSubscriberReadPayloads(
  owner: string,
  subscriber: { readonly subscriberName: string; readonly node: { readonly path: string } },
  fn: lambda.IFunction,
  bucket: s3.IBucket,
  key: kms.IKey,
  placement: FlowPlacement,
): void {
  const flow = placement.flowEnvironment;
  const remote = placement.subscriberEnvironment;
  const { role, arn: roleArn } = namedRoleArn(fn, remote.account);
  // in the subscriber's stack the bucket is named by literals; the key's ARN is not known there
  const bucketName = namePayloadBucket(bucket);
  const remoteBucketArn = `arn:${Aws.PARTITION}:s3:::${bucketName}`;
  const remoteObjects = `${remoteBucketArn}/${PAYLOAD_KEY_PREFIX}*`;
  const variables = { [CLAIM_CHECK_ENV.PAYLOAD_BUCKET_NAME]: bucketName, [CLAIM_CHECK_ENV.PAYLOAD_KEY_PREFIX]: PAYLOAD_KEY_PREFIX, ...(placement.crossRegion ? { [CLAIM_CHECK_ENV.PAYLOAD_BUCKET_REGION]: flow.region } : {}) };
  for (const [name, value] of Object.entries(variables)) (fn as lambda.Function).addEnvironment(name, value);
  const objects = bucket.arnForObjects(`${PAYLOAD_KEY_PREFIX}*`);
  const viaS3 = `s3.${flow.region}.amazonaws.com`;
  const keysOfFlow = `arn:${Aws.PARTITION}:kms:${flow.region}:${flow.account}:key/*`;
  const statements = [
    new iam.PolicyStatement({ actions: ['s3:GetObject'], resources: [remoteObjects] }),
    new iam.PolicyStatement({ actions: ['s3:ListBucket'], resources: [remoteBucketArn], conditions: { StringLike: { 's3:prefix': `${PAYLOAD_KEY_PREFIX}*` } } }),
    new iam.PolicyStatement({
      actions: ['kms:Decrypt'],
      resources: [keysOfFlow],
      conditions: { StringEquals: { 'kms:ViaService': viaS3, 'kms:EncryptionContext:aws:s3:arn': remoteBucketArn } },
    }),
  ];
  for (const statement of statements) {
    role.addToPrincipalPolicy(statement);
    markLibraryStatement('Subscriber', role, statement);
  }
  Validations.of(role).acknowledge(
    {
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:kms:${flow.region}:${flow.account}:key/*]`,
      reason:
        `kms:Decrypt of the flow's payload bucket key, in ${flow.account}/${flow.region}: its ARN is known only once the flow's stack is deployed ` +
        '(CDK passes no token across environments). Conditioned on kms:ViaService (S3 in that Region) and the bucket as encryption context, ' +
        "so only S3 reads of the flow's payload bucket can use it; the key policy names this role too.",
    },
    {
      id: `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${bucketName}/${PAYLOAD_KEY_PREFIX}*]`,
      reason:
        "s3:GetObject on the objects of offloaded events under the flow's payload prefix: their keys are derived from each event id and data digest, " +
        'so they are not known at deploy time; one bucket, one prefix, one action.',
    },
  );
  if (!placement.crossAccount) return; // one account: the flow's key policy leaves it to IAM, and the bucket has no Allow to add
  const principal = new iam.AccountPrincipal(remote.account);
  const onlyRole = { ArnEquals: { 'aws:PrincipalArn': roleArn } };
  const sids = remoteReaderSids(subscriber.subscriberName, remote.account);
  bucket.addToResourcePolicy(new iam.PolicyStatement({ sid: sids.get, principals: [principal], actions: ['s3:GetObject'], resources: [objects], conditions: onlyRole }));
  bucket.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: sids.list,
      principals: [principal],
      actions: ['s3:ListBucket'],
      resources: [bucket.bucketArn],
      conditions: { ...onlyRole, StringLike: { 's3:prefix': `${PAYLOAD_KEY_PREFIX}*` } },
    }),
  );
  const added = key.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: sids.decrypt,
      principals: [principal],
      actions: ['kms:Decrypt'],
      resources: ['*'],
      // the bucket's ARN as a literal: a reference (GetAtt) would make the key depend on the bucket, which depends on the key
      conditions: { ...onlyRole, StringEquals: { 'kms:ViaService': viaS3, 'kms:EncryptionContext:aws:s3:arn': remoteBucketArn } },
    }),
  );
  if (!added.statementAdded) {
    throw validationError(
      `${owner}: the subscriber ${subscriber.node.path} is in account ${remote.account} and offloadLargeEvents is true, but the flow's encryptionKey ` +
        `${key.node.path} is not a key of this app, so its key policy can not let that account's consumer role decrypt the payload bucket's objects; ` +
        'pass a kms.Key of this app as encryptionKey, or deploy the subscriber in the flow\'s account',
    );
  }
}
