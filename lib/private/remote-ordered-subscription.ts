/**
 * The ordered path across accounts and Regions (docs/CROSS-ACCOUNT.md): an `OrderedSubscriber` whose stack is in
 * another account or Region than its `OrderedRelay`. Kept apart from lib/ordered/ordered-subscriber.ts, which calls
 * these at three points: where it picks its key, after it creates its queues, and where it writes its output.
 *
 * As on the standard path: a queue key of the subscriber's own that lets SNS deliver from the relay's FIFO topic;
 * the subscription created from the subscriber's stack in the topic's Region (no dead-letter queue across Regions);
 * in another account, the topic policy lets that account subscribe the subscriber's queue (`sns:Subscribe`,
 * `sns:Protocol` `sqs`, `sns:Endpoint` the queue's ARN, by the literal FIFO name the queue gets here); the subscriber's
 * stack deployed after the relay's.
 */
import { Stack, Stage, Token } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { nameQueue } from '../consumer/private/cross-stack-names';
import { createOwnQueueKey } from '../consumer/private/own-queue-key';
import { topicEnvironment } from '../consumer/private/flow-placement';
import { subscribeGrantSid } from './subscribe-grant-sid';
import { type AwsEnvironment, compareEnvironments, type EnvironmentCrossing, isCrossEnvironment } from './environments';

/** What the ordered subscriber reads of its relay. */
export interface OrderedRelayParts extends Construct {
  readonly topic: sns.ITopic;
  readonly encryptionKey: kms.IKey;
  /** Creates (once) the relay's alarm on the topic's failed deliveries. */
  _watchDeliveryFailures(): void;
}

/** Where an ordered subscriber stands to its relay. */
export interface OrderedPlacement extends EnvironmentCrossing {
  readonly relayEnvironment: AwsEnvironment;
  readonly subscriberEnvironment: AwsEnvironment;
  readonly crossEnvironment: boolean;
  /** The key of its queues and inbox: the relay's, or (in another environment) one of its own. */
  readonly key: kms.IKey;
  /** For the subscription: the topic's Region when it is another. */
  readonly subscriptionRegion?: string;
}

/** Compares environments (failing, naming both, when one is known and the other not) and picks the key. */
export function placeOrderedSubscriber(owner: string, subscriber: Construct, subscriberName: string, relay: OrderedRelayParts): OrderedPlacement {
  const stack = Stack.of(subscriber);
  const subscriberEnvironment = { account: stack.account, region: stack.region };
  const relayEnvironment = topicEnvironment(relay.topic);
  const crossing = compareEnvironments(owner, `the ordered relay ${relay.node.path}`, relayEnvironment, stack.stackName, subscriberEnvironment);
  const crossEnvironment = isCrossEnvironment(crossing);
  return {
    ...crossing,
    relayEnvironment,
    subscriberEnvironment,
    crossEnvironment,
    key: crossEnvironment ? createOwnQueueKey(subscriber, subscriberName, relay.topic) : relay.encryptionKey,
    subscriptionRegion: crossing.crossRegion ? relayEnvironment.region : undefined,
  };
}

/**
 * In another environment: names the queues (the topic grant names the queue's ARN), lets the subscriber's account
 * subscribe that queue (in another account), and deploys the subscriber's stack after the relay's when both are in one
 * Stage (across Stages that order is the pipeline's).
 */
export function admitOrderedSubscriber(subscriber: Construct, subscriberName: string, relay: OrderedRelayParts, queue: sqs.IQueue, deadLetterQueue: sqs.IQueue, placement: OrderedPlacement): void {
  if (!placement.crossEnvironment) return;
  // the names a subscriber in another stack than its flow gets (lib/consumer/private/cross-stack-names.ts)
  const queueName = nameQueue(queue);
  nameQueue(deadLetterQueue);
  const { account, region } = placement.subscriberEnvironment;
  if (placement.crossAccount) {
    const endpoint = Stack.of(relay).formatArn({ service: 'sqs', account, region, resource: queueName });
    relay.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: subscribeGrantSid(subscriberName, account),
        principals: [new iam.AccountPrincipal(account)],
        actions: ['sns:Subscribe'],
        resources: [relay.topic.topicArn],
        conditions: { StringEquals: { 'sns:Protocol': 'sqs', 'sns:Endpoint': endpoint } },
      }),
    );
  }
  // across Regions the subscription has no dead-letter queue: the relay's stack alarms the topic's failed deliveries
  if (placement.crossRegion) relay._watchDeliveryFailures();
  // Within one Stage (one cloud assembly) CDK deploys the relay's stack first; across Stages (CDK Pipelines, a stage
  // per account) it can not depend on it: the relay's pipeline stage must deploy first (docs/CROSS-ACCOUNT.md).
  if (Stage.of(Stack.of(subscriber)) === Stage.of(Stack.of(relay))) {
    Stack.of(subscriber).addStackDependency(Stack.of(relay), `ordered subscriber ${subscriberName} subscribes to the topic of ${relay.node.path}`);
  }
}

/** The subscription's dead-letter queue: none across Regions (SNS wants it in the subscription's account and Region). */
export function orderedSubscriptionDeadLetterQueue(deadLetterQueue: sqs.IQueue, placement: OrderedPlacement): sqs.IQueue | undefined {
  return placement.crossRegion ? undefined : deadLetterQueue;
}

/** The relay's outbox table name, when the output may name it: not from another environment (a token there). */
export function outboxNameForOutput(tableName: string, placement: OrderedPlacement): string | undefined {
  return placement.crossEnvironment && Token.isUnresolved(tableName) ? undefined : tableName;
}
