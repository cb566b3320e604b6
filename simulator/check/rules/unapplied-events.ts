/**
 * Rule: no event a subscriber's filter took ended only in its dead-letter queues (../unapplied-events.ts), a lease
 * outlasting the redeliveries named as the cause: the lease the runtime wrote on its processing records when the run
 * heard them (`simulate`; a lease set in code too), else its function's environment's (`verify`); or a
 * `maxReceiveCount` below 5 when every failed receive of the events was a fault the run injected (`simulate`).
 */
import type { ObservableRunFacts, ObservableSubscriberFacts, SubscriberCheck } from '../run-check';
import { checkUnappliedEvents } from '../unapplied-events';
import { probeDeadLetterRefused } from '../last-receive-probes';

export const unappliedEventsRule: SubscriberCheck<ObservableSubscriberFacts, ObservableRunFacts> = {
  name: 'unapplied-event',
  checks: "no event the filter took ended only in the subscriber's dead-letter queues, never applied",
  scope: 'subscriber',
  check: (subscriber, facts) => {
    const functionKey = subscriber.view.function?.key;
    const writtenLeaseSeconds = functionKey === undefined ? undefined : facts.ledger.leaseSecondsWritten.get(functionKey);
    const maxReceiveCount = subscriber.view.queue.model.redrive?.maxReceiveCount;
    // the last-receive probe's dead letter dlq redrive's rules refused is the run's own, not the app's
    const probeRefused = probeDeadLetterRefused(facts.lastReceiveProbes ?? [], subscriber.view.name);
    return checkUnappliedEvents(
      {
        name: subscriber.view.name,
        matched: subscriber.matched,
        applied: subscriber.applied,
        deadLetters: subscriber.deadLetters,
        operator: subscriber.operator,
        lease: {
          environment: subscriber.view.environment,
          ...(subscriber.view.queue.model.visibilityTimeoutSeconds === undefined ? {} : { visibilityTimeoutSeconds: subscriber.view.queue.model.visibilityTimeoutSeconds }),
          ...(writtenLeaseSeconds === undefined ? {} : { writtenLeaseSeconds }),
        },
        ...(probeRefused === undefined ? {} : { probeRefused }),
        ...(maxReceiveCount === undefined ? {} : { fewReceives: { maxReceiveCount, injectedOnly: (eventId: string) => facts.ledger.receiveFailures.onlyInjected(subscriber.view.subscription.key, eventId) } }),
      },
      facts.isMalformed,
      (eventId) => facts.injectedObjectFault?.(eventId),
    );
  },
};
