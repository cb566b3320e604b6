import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { libraryGrantOrResource } from './library-statements';

/**
 * Exact KMS actions a sender needs to put a message on an SSE-KMS encrypted SNS topic or SQS queue: generate a data
 * key and decrypt a cached one (SNS and SQS developer guides, encryption at rest). Named exactly (no
 * `GenerateDataKey*`) so grants hold no wildcard actions and cdk-nag IAM5 has nothing to flag.
 */
export const KMS_SEND_MESSAGE_ACTIONS: readonly string[] = ['kms:Decrypt', 'kms:GenerateDataKey'];

/** The AWS services that use a key of the library on a principal's behalf. */
export type KeyUsingService = 'sqs' | 'sns' | 'dynamodb' | 's3';

/**
 * Grants `actions` on `key` to `grantee` only through `service` in the key's region (`kms:ViaService`
 * `<service>.<region>.amazonaws.com`): the role can use the key for the queue, topic or table it works with, never
 * directly (e.g. `kms:Decrypt` of a ciphertext it obtained elsewhere). Like `key.grant`, the statement goes to the
 * principal's policy, or also to the key policy when the principal is in another account. The principal's statement is
 * marked as the library's, from `origin` (./library-statements.ts).
 *
 * @returns undefined when there is no key (AWS-managed or service-managed encryption needs no grant)
 */
export function grantKeyViaService(
  origin: string,
  key: kms.IKey | undefined,
  grantee: iam.IGrantable,
  service: KeyUsingService,
  actions: readonly string[],
): iam.Grant | undefined {
  if (key === undefined) return undefined;
  return libraryGrantOrResource(origin, {
    grantee,
    actions: [...actions],
    resourceArns: [key.keyArn],
    resource: key,
    conditions: { StringEquals: { 'kms:ViaService': `${service}.${key.env.region}.amazonaws.com` } },
  });
}
