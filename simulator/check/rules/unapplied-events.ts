/** Rule: no event a subscriber's filter took ended only in its dead-letter queues (../unapplied-events.ts), a lease outlasting the redeliveries named as the cause. */
import type { ObservableRunFacts, ObservableSubscriberFacts, SubscriberCheck } from '../run-check';
import { checkUnappliedEvents } from '../unapplied-events';

export const unappliedEventsRule: SubscriberCheck<ObservableSubscriberFacts, ObservableRunFacts> = {
  name: 'unapplied-event',
  checks: "no event the filter took ended only in the subscriber's dead-letter queues, never applied",
  scope: 'subscriber',
  check: (subscriber, facts) =>
    checkUnappliedEvents(
      {
        name: subscriber.view.name,
        matched: subscriber.matched,
        applied: subscriber.applied,
        deadLetters: subscriber.deadLetters,
        operator: subscriber.operator,
        lease: {
          environment: subscriber.view.environment,
          ...(subscriber.view.queue.model.visibilityTimeoutSeconds === undefined ? {} : { visibilityTimeoutSeconds: subscriber.view.queue.model.visibilityTimeoutSeconds }),
        },
      },
      facts.isMalformed,
      (eventId) => facts.injectedObjectFault?.(eventId),
    ),
};
