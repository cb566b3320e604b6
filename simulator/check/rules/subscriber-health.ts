/** Rule: no configuration-error dead letters, no acknowledged failures, no acknowledged event left uncommitted, something acknowledged (../subscriber-health.ts). */
import type { SubscriberCheck } from '../run-check';
import { checkSubscriberHealth } from '../subscriber-health';
import { probeAcknowledged } from '../last-receive-probes';

export const subscriberHealthRule: SubscriberCheck = {
  name: 'subscriber-health',
  checks: 'no dead letter is a configuration error, no batch response acknowledged a failed record, no transactional consumer acknowledged an event it never committed, and something was acknowledged',
  scope: 'subscriber',
  check: (subscriber, facts) => {
    // the last-receive probe's acknowledged event has its own violation (../last-receive-probes.ts), naming its receive
    const probed = probeAcknowledged(facts.lastReceiveProbes ?? [], subscriber.view.name);
    return checkSubscriberHealth(subscriber.view, subscriber.deadLetters, facts.ledger, (eventId) => eventId === probed || facts.isMalformed(eventId) || facts.injectedObjectFault?.(eventId) !== undefined);
  },
};
