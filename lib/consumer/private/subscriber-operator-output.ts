/**
 * The value of a subscriber's `Operator` stack output: a {@link SubscriberDeployment} (JSON), everything the operator
 * commands need to act on the subscriber without the operator typing it. One place, for every subscriber wherever it
 * is created.
 */
import { Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { SUBSCRIBER_DEPLOYMENT_FORMAT, type SubscriberDeployment } from '../../../lambda/contract/subscriber-deployment';
import type { Subscriber } from '../subscriber';
import type { ConsumerFunction } from '../consumer-function';
import type { IInboxTable } from '../inbox-table';

/**
 * What the output of an ordered subscriber reads of it (lib/ordered/ordered-subscriber.ts passes itself): named here
 * rather than imported, so this file and the construct do not import each other.
 */
export interface OrderedSubscriberParts extends IConstruct {
  readonly subscriberName: string;
  readonly inboxTable: IInboxTable;
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly consumerFunction: ConsumerFunction;
  /** The ordered relay's outbox table, whose history items `replay` reads. */
  readonly relay: { readonly outboxTable: { readonly table: dynamodb.ITable; readonly timeToLiveAttributeName?: string } };
  /** Its subscription to the relay's FIFO topic (whose ARN the output names). */
  readonly subscription: sns.Subscription;
}

/**
 * The output's JSON value (tokens resolved at deploy time), in the stack of `subscriber`.
 *
 * @param outboxTimeToLiveAttribute the attribute the flow's outbox TTL reads (a literal, so named even where the table is not)
 */
export function subscriberOperatorOutputValue(subscriber: Subscriber, outboxTable: dynamodb.ITable | undefined, outboxTimeToLiveAttribute: string | undefined): string {
  const subscription = subscriber.subscription.node.defaultChild as sns.CfnSubscription;
  const deployment: { [field in keyof SubscriberDeployment]: unknown } = {
    format: SUBSCRIBER_DEPLOYMENT_FORMAT,
    subscriberName: subscriber.subscriberName,
    processingMode: subscriber.processingMode,
    deduplicationWindowSeconds: subscriber.deduplicationWindow?.toSeconds(),
    keepBlockedMessageBody: subscriber.keepsBlockedMessageBody,
    filterPolicy: subscription.filterPolicy,
    filterPolicyScope: subscription.filterPolicyScope,
    outboxTable: outboxTable?.tableName,
    outboxTimeToLiveAttribute,
    inboxTable: subscriber.inboxTable?.tableName,
    queueUrl: subscriber.queue.queueUrl,
    deadLetterQueueUrl: subscriber.deadLetterQueue.queueUrl,
    // in another Region than the topic the subscription has no dead-letter queue (flow-placement.ts)
    subscriptionDeadLetterQueueUrl: subscriber.subscriptionDeadLetterQueue?.queueUrl,
    consumerFunctionName: subscriber.consumerFunction.lambdaFunction.functionName,
    // literal across environments (the topic's deterministic name): the flow's account and Region for replay
    topicArn: subscription.topicArn,
  };
  return Stack.of(subscriber).toJsonString(deployment);
}

/**
 * The output's JSON value of an ordered subscriber (`ordered: true`): transactional, its FIFO queues (its dead-letter
 * queue is also its subscription's: what SNS could not deliver), its inbox table with the sequence fences, and the
 * ordered relay's outbox table, whose history items `replay` reads.
 *
 * @param across for a subscriber in another environment than its relay: the outbox table's name when it is a literal
 * (none otherwise), and whether the subscription is in another Region (then it has no dead-letter queue)
 */
export function orderedSubscriberOperatorOutputValue(
  subscriber: OrderedSubscriberParts,
  deduplicationWindowSeconds: number,
  across: { readonly outboxTableName?: string; readonly crossRegion: boolean } = { outboxTableName: subscriber.relay.outboxTable.table.tableName, crossRegion: false },
): string {
  const deployment: { [field in keyof SubscriberDeployment]: unknown } = {
    format: SUBSCRIBER_DEPLOYMENT_FORMAT,
    subscriberName: subscriber.subscriberName,
    processingMode: 'transactional',
    ordered: true,
    deduplicationWindowSeconds,
    keepBlockedMessageBody: undefined,
    filterPolicy: undefined,
    filterPolicyScope: undefined,
    // none from another environment (lib/private/remote-ordered-subscription.ts)
    outboxTable: across.outboxTableName,
    outboxTimeToLiveAttribute: subscriber.relay.outboxTable.timeToLiveAttributeName,
    inboxTable: subscriber.inboxTable.tableName,
    queueUrl: subscriber.queue.queueUrl,
    deadLetterQueueUrl: subscriber.deadLetterQueue.queueUrl,
    subscriptionDeadLetterQueueUrl: across.crossRegion ? undefined : subscriber.deadLetterQueue.queueUrl,
    consumerFunctionName: subscriber.consumerFunction.lambdaFunction.functionName,
    topicArn: (subscriber.subscription.node.defaultChild as sns.CfnSubscription).topicArn,
  };
  return Stack.of(subscriber).toJsonString(deployment);
}
