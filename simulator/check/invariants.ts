/**
 * The invariants a run must end with. Each violation names the subscriber, the event and what is wrong:
 * - every event committed to an outbox (and passing the pipe's filter) was relayed to the topic;
 * - every event that matched a subscription's filter policy was either acknowledged by its consumer or is in one of its
 *   dead-letter queues, and nothing is left on a consumer queue;
 * - every dead letter is explained (the runtime's reason, or the failures that made SQS move it);
 * - no message outlived its queue's retention;
 * - effects, where the scenario counts them: an acknowledged event's effect applied exactly once, a dead-lettered
 *   event's at most once (a message blocked for an operator may or may not have had its effect: never twice).
 */
import type { SubscriberView } from '../run/build-flow';
import type { RunLedger } from '../run/ledger';
import type { EffectTally } from '../run/scenario';
import type { DeadLetterFinding } from './dead-letters';

/** What kind of invariant a violation breaks. */
export type ViolationKind = 'not-relayed' | 'lost' | 'not-drained' | 'unexplained-dead-letter' | 'effect-count' | 'probe-failed';

/** A broken invariant. */
export interface Violation {
  readonly kind: ViolationKind;
  /** The subscriber it concerns, when it concerns one. */
  readonly subscriber?: string;
  readonly detail: string;
}

/** Events committed to the outboxes: per relay key, the event ids that pass its filter. */
export type CommittedEvents = ReadonlyMap<string, readonly string[]>;

/** Every committed event reached the topic. */
export function checkRelayed(committed: CommittedEvents, ledger: RunLedger): Violation[] {
  const violations: Violation[] = [];
  for (const [relay, eventIds] of committed) {
    const published = ledger.published.get(relay);
    for (const eventId of eventIds) {
      if (!published?.has(eventId)) violations.push({ kind: 'not-relayed', detail: `event ${eventId} is in the outbox but relay ${relay} never published it` });
    }
  }
  return violations;
}

/** Every matched event was acknowledged or dead-lettered with a reason; queues are drained; nothing expired. */
export function checkDeliveries(subscriber: SubscriberView, deadLetters: readonly DeadLetterFinding[], ledger: RunLedger): Violation[] {
  const violations: Violation[] = [];
  const name = subscriber.name;
  const { total } = subscriber.queue.counts();
  if (total > 0) violations.push({ kind: 'not-drained', subscriber: name, detail: `${total} message(s) still on queue ${subscriber.queue.address.name} when the run ended` });
  const deadLettered = new Set(deadLetters.map((finding) => finding.eventId).filter((id): id is string => id !== undefined));
  const acknowledged = ledger.acknowledgedEvents.get(subscriber.subscription.key) ?? new Set<string>();
  for (const eventId of ledger.matchedEvents.get(subscriber.subscription.key) ?? []) {
    if (!acknowledged.has(eventId) && !deadLettered.has(eventId) && total === 0) {
      violations.push({ kind: 'lost', subscriber: name, detail: `event ${eventId} matched the filter policy but was neither acknowledged nor dead-lettered` });
    }
  }
  for (const finding of deadLetters) {
    if (finding.explanation === undefined) {
      violations.push({ kind: 'unexplained-dead-letter', subscriber: name, detail: `message ${finding.messageId} (event ${finding.eventId ?? 'unknown'}) is in ${finding.queueName} with no reason` });
    }
  }
  for (const expired of ledger.expired) {
    if (expired.queue === subscriber.queue.model.key) {
      violations.push({ kind: 'lost', subscriber: name, detail: `message ${expired.messageId} (event ${expired.eventId ?? 'unknown'}) outlived the queue's retention period` });
    }
  }
  return violations;
}

/** The effect count a tally must have: [min, max]. */
export function expectedApplications(tally: EffectTally, acknowledged: ReadonlySet<string>, deadLettered: ReadonlySet<string>): { readonly min: number; readonly max: number } {
  let min = 0;
  let max = 0;
  for (const eventId of tally.eventIds) {
    if (deadLettered.has(eventId)) max += 1;
    else if (acknowledged.has(eventId)) {
      min += 1;
      max += 1;
    }
  }
  return { min, max };
}

/** Each tally is within what exactly-once allows. */
export function checkEffects(subscriber: SubscriberView, tallies: readonly EffectTally[], deadLetters: readonly DeadLetterFinding[], ledger: RunLedger): Violation[] {
  const acknowledged = ledger.acknowledgedEvents.get(subscriber.subscription.key) ?? new Set<string>();
  const deadLettered = new Set(deadLetters.map((finding) => finding.eventId).filter((id): id is string => id !== undefined));
  return tallies.flatMap((tally): Violation[] => {
    const { min, max } = expectedApplications(tally, acknowledged, deadLettered);
    if (tally.applied >= min && tally.applied <= max) return [];
    const expected = min === max ? `exactly ${min}` : `${min} to ${max}`;
    return [{ kind: 'effect-count', subscriber: subscriber.name, detail: `${tally.subject}: applied ${tally.applied} time(s), expected ${expected} (events ${tally.eventIds.join(', ')})` }];
  });
}
