/**
 * The per-subscriber checks that keep a broken consumer from ending in an OK: its dead letters are not configuration
 * errors, its batch responses acknowledged nothing the runtime logged as failed, and it acknowledged something.
 */
import type { SubscriberView } from '../observation/run-facts';
import type { RunLedger } from '../observation/ledger';
import { checkAcknowledgedFailures } from './acknowledged-failures';
import { checkConfigurationErrors } from './configuration-dead-letters';
import type { DeadLetterFinding } from './dead-letters';
import type { Violation } from './invariants';
import { checkSomethingAcknowledged } from './nothing-acknowledged';

/** Runs the three checks on one subscriber, from its dead letters and the run's ledger. */
export function checkSubscriberHealth(subscriber: SubscriberView, deadLetters: readonly DeadLetterFinding[], ledger: RunLedger): Violation[] {
  const { name, subscription, mapping } = subscriber;
  // what reached its queue: an event SNS could not deliver is the delivery's failure (dead-lettered or lost, and
  // reported as such), not the consumer's
  const delivered = ledger.deliveredEvents.get(subscription.key)?.size ?? 0;
  const acknowledged = ledger.acknowledgedEvents.get(subscription.key)?.size ?? 0;
  return [
    ...checkConfigurationErrors(name, deadLetters),
    ...checkAcknowledgedFailures(name, mapping === undefined ? [] : (ledger.loggedRetries.get(mapping.key) ?? [])),
    ...checkSomethingAcknowledged(name, { delivered, acknowledged, deadLettered: deadLetters.length }),
  ];
}
