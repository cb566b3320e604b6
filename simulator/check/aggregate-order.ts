/**
 * Per-aggregate order of the ordered subscribers (docs/ORDERED-DELIVERY.md): each aggregate's events are applied in
 * sequence order, 1, 2, 3, ..., each once. Read from the order in which the subscriber acknowledged the events (the
 * event source mapping deleted their messages after a successful handling; a redelivery of an applied event that the
 * consumer answers as a duplicate is acknowledged too, and on a FIFO queue only after the event itself). An event
 * stands applied at its first acknowledgement. Two violations, one per subscriber and aggregate:
 * - an event applied before an earlier sequence of its aggregate (out of order, or an earlier one applied later);
 * - a gap never filled: a sequence never applied while a later one of its aggregate was.
 * An aggregate's unapplied tail (its last events never applied at all) is not an order violation; the delivery and
 * effect checks report those events. Not seen: an order broken inside one batch (its records are acknowledged together,
 * in the batch's order), unless the runtime's per-record lines are logged (`DEBUG`; ./history.ts).
 */
import type { SimulatedEvent } from '../observation/run-facts';
import type { Violation } from './invariants';

/** Checks the order of each aggregate of `subscriber`, given the event ids in the order it applied them; `eventsById` gives their ordering. */
export function checkAggregateOrder(subscriber: string, appliedInOrder: Iterable<string>, eventsById: ReadonlyMap<string, SimulatedEvent>): Violation[] {
  // aggregate → the events in the order they were first applied
  const applied = new Map<string, { readonly sequence: number; readonly eventId: string }[]>();
  const seen = new Set<string>();
  for (const eventId of appliedInOrder) {
    const ordering = eventsById.get(eventId)?.ordering;
    if (ordering === undefined || seen.has(eventId)) continue;
    seen.add(eventId);
    applied.set(ordering.aggregateId, [...(applied.get(ordering.aggregateId) ?? []), { sequence: ordering.sequence, eventId }]);
  }
  const violations: Violation[] = [];
  for (const [aggregateId, events] of applied) {
    const order = `applied order: ${events.map((item) => item.sequence).join(', ')}`;
    const index = events.findIndex((item, at) => events.slice(at + 1).some((later) => later.sequence < item.sequence));
    if (index >= 0) {
      const early = events[index]!;
      const earlier = Math.min(...events.slice(index + 1).map((item) => item.sequence));
      violations.push({
        kind: 'aggregate-order',
        subscriber,
        detail: `aggregate ${aggregateId}: event ${early.eventId} (sequence ${early.sequence}) was applied before sequence ${earlier} of its aggregate (${order})`,
      });
      continue;
    }
    const highest = Math.max(...events.map((item) => item.sequence));
    const present = new Set(events.map((item) => item.sequence));
    const missing = Array.from({ length: highest }, (_, at) => at + 1).filter((sequence) => !present.has(sequence));
    if (missing.length > 0) {
      violations.push({
        kind: 'aggregate-order',
        subscriber,
        detail: `aggregate ${aggregateId}: ${missing.length === 1 ? 'sequence' : 'sequences'} ${missing.join(', ')} ${missing.length === 1 ? 'was' : 'were'} never applied, but ${highest} was (a gap never filled; ${order})`,
      });
    }
  }
  return violations;
}
