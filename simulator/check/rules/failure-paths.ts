/** Rule: each subscriber met every failure path the run's fault rates steer to it (../failure-paths.ts). */
import { checkFailurePaths, requiredFailurePaths } from '../failure-paths';
import type { SubscriberCheck } from '../run-check';

export const failurePathsRule: SubscriberCheck = {
  name: 'not-exercised',
  checks: "each subscriber met every failure path the run's fault rates steer to it",
  scope: 'subscriber',
  check: (subscriber, facts) =>
    checkFailurePaths(
      subscriber.view.name, subscriber.failurePaths, requiredFailurePaths(facts.rates), facts.ledger.deliveredEvents.get(subscriber.view.subscription.key)?.size ?? 0,
      subscriber.view.queue.model.redrive?.maxReceiveCount,
    ),
};
