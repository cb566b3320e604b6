/**
 * The per-subscriber checks that keep a broken consumer from ending in an OK: its dead letters are not configuration
 * errors, its batch responses acknowledged nothing the runtime logged as failed, and it acknowledged something.
 */
import type { SubscriberView } from '../run/build-flow';
import type { RunLedger } from '../run/ledger';
import { checkAcknowledgedFailures } from './acknowledged-failures';
import { checkConfigurationErrors } from './configuration-dead-letters';
import type { DeadLetterFinding } from './dead-letters';
import type { Violation } from './invariants';
import { checkSomethingAcknowledged } from './nothing-acknowledged';

/** Runs the three checks on one subscriber, from its dead letters and the run's ledger. */
export function checkSubscriberHealth(subscriber: SubscriberView, deadLetters: readonly DeadLetterFinding[], ledger: RunLedger): Violation[] {
  const { name, subscription, mapping } = subscriber;
  const matched = ledger.matchedEvents.get(subscription.key)?.size ?? 0;
  const acknowledged = ledger.acknowledgedEvents.get(subscription.key)?.size ?? 0;
  return [
    ...checkConfigurationErrors(name, deadLetters),
    ...checkAcknowledgedFailures(name, mapping === undefined ? [] : (ledger.loggedRetries.get(mapping.key) ?? [])),
    ...checkSomethingAcknowledged(name, { matched, acknowledged, deadLettered: deadLetters.length }),
  ];
}
