/** Rule: every event a subscriber's filter took was acknowledged or dead-lettered, explained, within retention (../invariants.ts). */
import { checkDeliveries } from '../invariants';
import { probeExpired } from '../last-receive-probes';
import type { ObservableRunFacts, ObservableSubscriberFacts, SubscriberCheck } from '../run-check';

export const deliveriesRule: SubscriberCheck<ObservableSubscriberFacts, ObservableRunFacts> = {
  name: 'lost',
  checks: 'every event the filter took was acknowledged or is dead-lettered with an explanation; nothing outlived retention or was left on the queue',
  scope: 'subscriber',
  // the last-receive probe's event SQS dropped by retention is the run's doing (../last-receive-probes.ts)
  check: (subscriber, facts) => checkDeliveries(subscriber.view, subscriber.deadLetters, facts.ledger, probeExpired(facts.lastReceiveProbes ?? [], subscriber.view.name)),
};
