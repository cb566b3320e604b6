/**
 * The queue key of a subscriber whose flow is in another account or Region, or was imported: a key in the subscriber's
 * own account and Region (SQS and KMS keys are regional; the flow's key policy is the flow account's), which lets SNS
 * encrypt deliveries from the flow's topic only.
 */
import { RemovalPolicy, Stack } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { snsDeliveryPrincipal } from '../../private/sns-delivery-principal';
import { allowSnsDeliveriesWithKey } from '../../private/topic-security';

/**
 * Creates the key (construct id `QueueKey`, rotation on, always retained: retained queues and inbox records encrypted
 * with it would be unreadable without it) with the statement that lets `sns.amazonaws.com` (`sns.<topic Region>.amazonaws.com`
 * from a topic of an opt-in Region) use `kms:GenerateDataKey*` and `kms:Decrypt` for deliveries from `topic` (`aws:SourceArn`).
 */
export function createOwnQueueKey(scope: Construct, subscriberName: string, topic: sns.ITopic): kms.Key {
  const key = new kms.Key(scope, 'QueueKey', {
    description: `Encrypts the queues and inbox of subscriber ${subscriberName}, delivered to by the topic ${topic.topicArn}`,
    enableKeyRotation: true,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  allowSnsDeliveriesWithKey(scope, key, topic.topicArn, 'AllowFlowTopicToDeliverToQueuesEncryptedWithThisKey', 'idempotent-event-flow:subscriberKeyPolicy', snsDeliveryPrincipal(topic.env.region, Stack.of(scope).region));
  return key;
}
