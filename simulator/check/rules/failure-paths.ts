/**
 * Rule: each subscriber met every failure path the run's fault rates steer to it (../failure-paths.ts): below the
 * steerable `maxReceiveCount`, the paths the run cannot steer there are not required.
 */
import { checkFailurePaths, requiredFailurePaths } from '../failure-paths';
import type { SubscriberCheck } from '../run-check';

export const failurePathsRule: SubscriberCheck = {
  name: 'not-exercised',
  checks: "each subscriber met every failure path the run's fault rates steer to it",
  scope: 'subscriber',
  check: (subscriber, facts) =>
    checkFailurePaths(
      subscriber.view.name,
      subscriber.failurePaths,
      requiredFailurePaths(facts.rates, subscriber.view.queue.model.redrive?.maxReceiveCount),
      facts.ledger.deliveredEvents.get(subscriber.view.subscription.key)?.size ?? 0,
    ),
};
