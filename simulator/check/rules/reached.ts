/** Rule: a subscriber whose effects the scenario probes was reached by some event (../unreached-subscribers.ts). */
import type { SubscriberCheck } from '../run-check';
import { checkProbedSubscriberReached } from '../unreached-subscribers';

export const reachedRule: SubscriberCheck = {
  name: 'nothing-reached',
  checks: 'a subscriber whose effects the scenario probes was reached by some event',
  scope: 'subscriber',
  check: (subscriber, facts) => {
    const { filterPolicy, filterPolicyScope } = subscriber.view.subscription;
    return checkProbedSubscriberReached({
      name: subscriber.view.name,
      matchedEvents: subscriber.matched.size,
      committedEvents: facts.committedEvents,
      eventsGivenUpByRelay: facts.ledger.relayGaveUp.reduce((sum, entry) => sum + entry.eventIds.length, 0),
      probed: subscriber.effectProbe !== undefined,
      filterPolicy,
      filterPolicyScope,
    });
  },
};
