/**
 * What AWS does with a subscription of a run whose stacks span accounts or Regions (../model/subscription-placement.ts,
 * docs/CROSS-ACCOUNT.md), checked so that such a run never ends `OK` where AWS would not deploy or deliver:
 * - `deploy-refused`: the subscription is created in another Region than its topic's (no `Region` property naming the
 *   topic's), which SNS refuses ("Invalid parameter: TopicArn"); or its dead-letter queue is outside the subscription's
 *   account and Region, where SNS takes none.
 * - `unconfirmed-subscription`: the topic's account subscribes another account's queue; SNS holds it pending
 *   confirmation and delivers nothing through it (the simulator delivers nothing either: ../run/build-flow.ts).
 */
import type { ModelledResource, QueueModel, SubscriptionModel, TopicModel } from '../model/flow-model';
import { isDeadLetterQueueMisplaced, isInAnotherRegionThanItsTopic, isPendingConfirmation, placeSubscription } from '../model/subscription-placement';
import type { StackEnvironment, StackEnvironments } from '../model/stack-environments';
import type { Violation } from './invariants';

/** What the rules read. */
export interface SubscriptionRulesModel {
  readonly subscriptions: readonly SubscriptionModel[];
  readonly topics: readonly TopicModel[];
  readonly queues: readonly QueueModel[];
  readonly environments?: StackEnvironments;
}

function named(resource: ModelledResource | undefined, key: string): string {
  return resource?.constructPath ?? key;
}

function where(environment: StackEnvironment): string {
  return `aws://${environment.account}/${environment.region}`;
}

/** A violation per subscription AWS would not create, not confirm, or not give its dead-letter queue. */
export function checkSubscriptionRules(model: SubscriptionRulesModel): Violation[] {
  const violations: Violation[] = [];
  for (const subscription of model.subscriptions) {
    const placement = placeSubscription(model.environments, subscription);
    if (placement === undefined) continue;
    const name = named(subscription, subscription.key);
    const topic = named(model.topics.find((candidate) => candidate.key === subscription.topic), subscription.topic);
    const queue = named(model.queues.find((candidate) => candidate.key === subscription.queue), subscription.queue);
    if (isInAnotherRegionThanItsTopic(placement)) {
      const created = placement.regionFromProperty ? `its Region property names ${placement.subscription.region}` : `it has no Region property, so CloudFormation creates it in its stack's Region, ${placement.subscription.region}`;
      violations.push({
        kind: 'deploy-refused',
        detail:
          `AWS refuses the subscription ${name} at deploy: ${created}, and its topic ${topic} is in ${placement.topic.region} ` +
          `(SNS: "Invalid parameter: TopicArn"; a subscription is created in its topic's Region): set its Region to ${placement.topic.region} ` +
          "(new Subscriber(stack, id, { flow }) does; SNS developer guide, sns-cross-region-delivery.html)",
      });
    }
    if (isDeadLetterQueueMisplaced(placement)) {
      const deadLetterQueue = named(model.queues.find((candidate) => candidate.key === subscription.deadLetterQueue), subscription.deadLetterQueue!);
      violations.push({
        kind: 'deploy-refused',
        detail:
          `the dead-letter queue ${deadLetterQueue} of subscription ${name} is in ${where(placement.deadLetterQueue!)}, and the subscription in ${where(placement.subscription)}: ` +
          "SNS takes a subscription's dead-letter queue only in the subscription's account and Region (SNS developer guide, sns-dead-letter-queues.html); " +
          `give it a dead-letter queue in ${where(placement.subscription)}, or none (a cross-Region subscriber of the constructs has none)`,
      });
    }
    if (isPendingConfirmation(placement)) {
      violations.push({
        kind: 'unconfirmed-subscription',
        detail:
          `the subscription ${name} of queue ${queue} (account ${placement.queue.account}) is created by the topic's account ${placement.topic.account}: ` +
          "SNS holds it pending confirmation, sends the queue a SubscriptionConfirmation and delivers nothing until the queue's owner confirms it, so nothing was delivered through it; " +
          `create the subscription in the queue's account ${placement.queue.account} (new Subscriber(stack, id, { flow }) in the queue's stack does: its subscription needs no confirmation; ` +
          'SNS developer guide, sns-send-message-to-sqs-cross-account.html)',
      });
    }
  }
  return violations;
}
