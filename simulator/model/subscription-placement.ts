/**
 * Where a subscription of a run whose stacks span environments is created, and where its topic, queue and dead-letter
 * queue are (issue 41, docs/CROSS-ACCOUNT.md): what decides whether AWS creates it, confirms it and delivers through it.
 * - CloudFormation creates an `AWS::SNS::Subscription` in its stack's account, and in its `Region` property's Region or
 *   else its stack's; SNS creates a subscription only in the topic's Region (SNS developer guide, "Sending Amazon SNS
 *   messages to an Amazon SQS queue or AWS Lambda function in a different Region", sns-cross-region-delivery.html).
 * - A subscription of another account's queue created by the topic's account is pending confirmation: SNS sends the
 *   queue a SubscriptionConfirmation and delivers nothing until the queue's owner confirms it; one created by the
 *   queue's account needs none (SNS developer guide, "Sending Amazon SNS messages to an Amazon SQS queue in a different
 *   account", sns-send-message-to-sqs-cross-account.html).
 * - A subscription's dead-letter queue must be in the subscription's account and Region (SNS developer guide, "Amazon
 *   SNS dead-letter queues", sns-dead-letter-queues.html).
 */
import type { SubscriptionModel } from './flow-model';
import { stackOfKey, type StackEnvironment, type StackEnvironments } from './stack-environments';

/** The environments of a subscription and of what it links. */
export interface SubscriptionPlacement {
  /** Where CloudFormation creates the subscription: its stack's account, its `Region` or else its stack's Region. */
  readonly subscription: StackEnvironment;
  /** Whether the subscription's Region is its `Region` property's (else its stack's). */
  readonly regionFromProperty: boolean;
  readonly topic: StackEnvironment;
  readonly queue: StackEnvironment;
  /** The environment of its dead-letter queue, if it has one. */
  readonly deadLetterQueue?: StackEnvironment;
}

/**
 * The placement of `subscription`; undefined in a run of one environment (everything is in the run's account and
 * Region) or when a stack's environment is not known.
 */
export function placeSubscription(environments: StackEnvironments | undefined, subscription: SubscriptionModel): SubscriptionPlacement | undefined {
  if (environments === undefined) return undefined;
  const own = environments.get(stackOfKey(subscription.key));
  const topic = environments.get(stackOfKey(subscription.topic));
  const queue = environments.get(stackOfKey(subscription.queue));
  if (own === undefined || topic === undefined || queue === undefined) return undefined;
  const deadLetterQueue = subscription.deadLetterQueue === undefined ? undefined : environments.get(stackOfKey(subscription.deadLetterQueue));
  return {
    subscription: { account: own.account, region: subscription.region ?? own.region },
    regionFromProperty: subscription.region !== undefined,
    topic,
    queue,
    ...(deadLetterQueue === undefined ? {} : { deadLetterQueue }),
  };
}

/** Whether SNS would not create the subscription: it is created in another Region than its topic's. */
export function isInAnotherRegionThanItsTopic(placement: SubscriptionPlacement): boolean {
  return placement.subscription.region !== placement.topic.region;
}

/** Whether the subscription waits for a confirmation from the queue's account: the topic's account created it for another account's queue. */
export function isPendingConfirmation(placement: SubscriptionPlacement): boolean {
  return placement.subscription.account === placement.topic.account && placement.queue.account !== placement.topic.account;
}

/** Whether its dead-letter queue is outside the subscription's account and Region, where SNS takes none. */
export function isDeadLetterQueueMisplaced(placement: SubscriptionPlacement): boolean {
  const deadLetterQueue = placement.deadLetterQueue;
  return deadLetterQueue !== undefined && (deadLetterQueue.account !== placement.subscription.account || deadLetterQueue.region !== placement.subscription.region);
}
