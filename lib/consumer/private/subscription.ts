/**
 * The subscription of a subscriber's queue to the topic, and the subscription's own dead-letter queue: what
 * `SqsSubscription` would build, with construct ids of our choosing and no statement on the topic's key.
 */
import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { snsDeliveryPrincipal } from '../../private/sns-delivery-principal';

/** The queue SNS moves what it can not deliver to: encrypted as the subscriber's queues, TLS-only, construct id `SubscriptionDeadLetterQueue`. */
export function createSubscriptionDeadLetterQueue(scope: Construct, encryptionKey: kms.IKey | undefined, retentionPeriod: Duration, removalPolicy: RemovalPolicy): sqs.IQueue {
  const queue = new sqs.Queue(scope, 'SubscriptionDeadLetterQueue', {
    encryption: encryptionKey ? sqs.QueueEncryption.KMS : sqs.QueueEncryption.SQS_MANAGED,
    encryptionMasterKey: encryptionKey,
    enforceSSL: true,
    retentionPeriod,
    removalPolicy,
  });
  Validations.of(queue).acknowledge(
    {
      id: 'AwsSolutions-SQS3',
      reason:
        'This queue is itself a dead-letter queue: the redrive policy (RedrivePolicy) of the SNS subscription points ' +
        'at it. cdk-nag only recognises dead-letter queues of SQS queues and Lambda functions.',
    },
    {
      id: 'Serverless-SQSRedrivePolicy',
      reason:
        'This queue is the SNS subscription\'s dead-letter queue, the end of its redrive chain; messages here wait for ' +
        'inspection and a manual re-publish. A further dead-letter queue would only move the problem.',
    },
  );
  return queue;
}

/**
 * Subscribes `queue` to `topic` (raw delivery, construct id `Subscription`), letting only that topic send to it: as
 * `sns.amazonaws.com`, or `sns.<topic Region>.amazonaws.com` when the topic is in an opt-in Region and the queue in
 * another (../../private/sns-delivery-principal.ts).
 *
 * @param deadLetterQueue the subscription's dead-letter queue; none for a queue in another Region than the topic (SNS
 * requires it in the subscription's account and Region, and the subscription is the topic's Region's)
 * @param region the topic's Region when the queue is in another one: the subscription is created there, by the queue's
 * account (so it needs no confirmation)
 */
export function subscribeQueue(
  scope: Construct,
  topic: sns.ITopic,
  queue: sqs.IQueue,
  deadLetterQueue: sqs.IQueue | undefined,
  filterPolicyWithMessageBody: { [attribute: string]: sns.FilterOrPolicy } | undefined,
  region?: string,
): sns.Subscription {
  const snsPrincipal = new iam.ServicePrincipal(snsDeliveryPrincipal(region, Stack.of(scope).region));
  const fromThisTopic = { ArnEquals: { 'aws:SourceArn': topic.topicArn } };

  // What SqsSubscription does, with a construct id of our choosing: let this topic (only) send to the queue.
  // Unlike SqsSubscription we leave the key policy alone: it is the topic's key, whose owner (EventTopic) lets SNS
  // use it for this topic; a statement naming the topic's ARN here would make the key and the topic depend on
  // each other when they share a stack.
  const queuePolicy = queue.addToResourcePolicy(
    new iam.PolicyStatement({
      actions: ['sqs:SendMessage'],
      principals: [snsPrincipal],
      resources: [queue.queueArn],
      conditions: fromThisTopic,
    }),
  );
  // sns.Subscription adds the dead-letter queue's policy for this topic itself.
  const subscription = new sns.Subscription(scope, 'Subscription', {
    topic,
    protocol: sns.SubscriptionProtocol.SQS,
    endpoint: queue.queueArn,
    rawMessageDelivery: true,
    filterPolicyWithMessageBody,
    deadLetterQueue,
    region,
  });
  if (deadLetterQueue === undefined) {
    Validations.of(subscription).acknowledge({
      id: 'Serverless-SNSRedrivePolicy',
      reason:
        'The queue is in another Region than the topic, so the subscription is created in the topic\'s Region, and SNS ' +
        'accepts a subscription dead-letter queue only in the subscription\'s account and Region (SNS developer guide, ' +
        '"Amazon SNS dead-letter queues"). SNS retries server-side delivery errors (SQS unavailable) for days, but ' +
        'discards at once what fails on a client-side error (a changed queue or key policy, a deleted queue): the ' +
        'flow\'s DeliveryFailed alarm watches the topic\'s NumberOfNotificationsFailed, and replay re-sends a lost event ' +
        'from the outbox (docs/CROSS-ACCOUNT.md).',
    });
  }
  if (queuePolicy.policyDependable) {
    // SNS must be allowed to send before the subscription starts delivering.
    subscription.node.addDependency(queuePolicy.policyDependable);
  }
  return subscription;
}
