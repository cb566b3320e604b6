/** What every topic of this library gets: TLS only for every SNS action, and its key usable by SNS for deliveries from it. */
import { Annotations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';

/** Denies every SNS action on `topic` without TLS (the Topic's own `enforceSSL` denies only `sns:Publish`). */
export function denyTopicAccessWithoutTls(topic: sns.Topic): void {
  topic.addToResourcePolicy(
    new iam.PolicyStatement({
      sid: 'DenyEveryActionWithoutTls',
      effect: iam.Effect.DENY,
      principals: [new iam.AnyPrincipal()],
      actions: ['sns:*'],
      resources: [topic.topicArn],
      conditions: { Bool: { 'aws:SecureTransport': 'false' } },
    }),
  );
}

/**
 * Lets SNS use `key` for deliveries from the topic `topicArn` only (SNS encrypts each delivery to an SSE-KMS queue with
 * the queue's key). A key whose policy can not be changed here (imported) gets a warning saying what to add, under
 * `warningId`.
 *
 * @param principal the principal SNS delivers as (../private/sns-delivery-principal.ts) @default sns.amazonaws.com
 */
export function allowSnsDeliveriesWithKey(scope: Construct, key: kms.IKey, topicArn: string, sid: string, warningId: string, principal = 'sns.amazonaws.com'): void {
  const statement = new iam.PolicyStatement({
    sid,
    principals: [new iam.ServicePrincipal(principal)],
    actions: ['kms:GenerateDataKey*', 'kms:Decrypt'],
    resources: ['*'],
    conditions: { ArnEquals: { 'aws:SourceArn': topicArn } },
  });
  if (!key.addToResourcePolicy(statement, true).statementAdded) {
    Annotations.of(scope).addWarningV2(
      warningId,
      `The key policy of the imported encryptionKey can not be changed here. Allow principal ${principal} ` +
        `kms:GenerateDataKey* and kms:Decrypt with condition aws:SourceArn = ${topicArn}, or SNS can not deliver ` +
        'to subscriber queues encrypted with this key.',
    );
  }
}
