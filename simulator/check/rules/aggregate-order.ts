/** Rule: each ordered (FIFO) subscriber applied every aggregate's events in sequence order, with no gap (../aggregate-order.ts). */
import { checkAggregateOrder } from '../aggregate-order';
import type { ObservableRunFacts, RunWideCheck } from '../run-check';

export const aggregateOrderRule: RunWideCheck<ObservableRunFacts> = {
  name: 'aggregate-order',
  checks: "each ordered subscriber applied every aggregate's events in sequence order, with no gap",
  scope: 'run',
  check: (facts) =>
    facts.subscribers
      .filter(({ view }) => view.queue.model.fifo)
      .flatMap(({ view }) => {
        const commits = view.function === undefined ? undefined : facts.ledger.inboxCommits.get(view.function.key);
        return checkAggregateOrder(view.name, facts.ledger.answeredTogether.get(view.subscription.key) ?? [], facts.committed.eventsById, commits);
      }),
};
