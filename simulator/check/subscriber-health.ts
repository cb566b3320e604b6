/**
 * The per-subscriber checks that keep a broken consumer from ending in an OK: its dead letters are not configuration
 * errors, its batch responses acknowledged nothing the runtime logged as failed, a transactional consumer acknowledged
 * no event whose inbox record it never committed, and it acknowledged something.
 */
import type { SubscriberView } from '../observation/run-facts';
import type { RunLedger } from '../observation/ledger';
import { checkAcknowledgedFailures } from './acknowledged-failures';
import { checkAcknowledgedUncommitted } from './acknowledged-uncommitted';
import { checkConfigurationErrors } from './configuration-dead-letters';
import type { DeadLetterFinding } from './dead-letters';
import type { Finding } from './invariants';
import { checkSomethingAcknowledged } from './nothing-acknowledged';
import { ENV, PROCESSING_MODE } from '../../lambda/contract/environment';

/**
 * Runs the four checks on one subscriber, from its dead letters and the run's ledger; `exempt` tells the events it need
 * not apply (malformed on purpose, their claim-check object altered). @default none is exempt
 */
export function checkSubscriberHealth(subscriber: SubscriberView, deadLetters: readonly DeadLetterFinding[], ledger: RunLedger, exempt: (eventId: string) => boolean = () => false): Finding[] {
  const { name, subscription, mapping } = subscriber;
  // what reached its queue: an event SNS could not deliver is the delivery's failure (dead-lettered or lost, and
  // reported as such), not the consumer's
  const delivered = ledger.deliveredEvents.get(subscription.key)?.size ?? 0;
  const acknowledged = ledger.acknowledgedEvents.get(subscription.key)?.size ?? 0;
  return [
    ...checkConfigurationErrors(name, deadLetters),
    ...checkAcknowledgedFailures(name, mapping === undefined ? [] : (ledger.loggedRetries.get(mapping.key) ?? [])),
    ...acknowledgedUncommitted(subscriber, ledger, exempt),
    ...checkSomethingAcknowledged(name, { delivered, acknowledged, deadLettered: deadLetters.length }),
  ];
}

/** The events a transactional subscriber on a standard queue acknowledged without committing their inbox record (./acknowledged-uncommitted.ts). */
function acknowledgedUncommitted(subscriber: SubscriberView, ledger: RunLedger, exempt: (eventId: string) => boolean): Finding[] {
  const functionKey = subscriber.function?.key;
  if (functionKey === undefined || subscriber.queue.model.fifo || subscriber.environment[ENV.PROCESSING_MODE] !== PROCESSING_MODE.TRANSACTIONAL) return [];
  const key = subscriber.subscription.key;
  const acknowledged = new Set([...(ledger.acknowledgedEvents.get(key) ?? []), ...(ledger.handledEvents.get(key) ?? [])]);
  return checkAcknowledgedUncommitted({ subscriber: subscriber.name, acknowledged, committed: new Set(ledger.inboxCommits.get(functionKey)?.keys() ?? []), exempt });
}
