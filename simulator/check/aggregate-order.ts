/**
 * Per-aggregate order of the ordered subscribers (docs/ORDERED-DELIVERY.md): each aggregate's events are applied in
 * sequence order, 1, 2, 3, ..., each once. Read from the order in which the subscriber acknowledged the events (the
 * event source mapping deleted their messages after a successful handling; a redelivery of an applied event that the
 * consumer answers as a duplicate is acknowledged too, and on a FIFO queue only after the event itself). An event
 * stands applied at its first acknowledgement; the events one invocation acknowledged together are not ordered among
 * themselves by their acknowledgement (a batch applied in order, whose invocation crashed after its commits, is answered
 * as duplicates by its redelivery, and the deletions of a batch follow no order of application); inside a group they
 * are ordered by the commits of their inbox records, when the consumer's commits are known (the runtime writes an
 * event's inbox record in the transaction of its business writes: ../observation/inbox-commits.ts), so an order broken
 * inside one batch is seen. Two violations, one per subscriber and aggregate:
 * - an event applied before an earlier sequence of its aggregate (out of order, or an earlier one applied later);
 * - a gap never filled: a sequence never applied while a later one of its aggregate was.
 * An aggregate's unapplied tail (its last events never applied at all) is not an order violation; the delivery and
 * effect checks report those events. Not seen: an order broken inside one batch by a consumer that writes no inbox
 * record of the runtime (its events of one invocation stay unordered among themselves).
 */
import type { SimulatedEvent } from '../observation/run-facts';
import type { Violation } from './invariants';

/**
 * Checks the order of each aggregate of `subscriber`, given what it acknowledged, in order: an event id, or the event
 * ids one invocation acknowledged together (the messages of one batch: their deletions say nothing of the order in
 * which the batch applied them, so they are not ordered among themselves, but by `commits`, when given). `eventsById`
 * gives their ordering; `commits` the position of each event's first inbox commit by the subscriber's function.
 */
export function checkAggregateOrder(
  subscriber: string,
  acknowledged: Iterable<string | readonly string[]>,
  eventsById: ReadonlyMap<string, SimulatedEvent>,
  commits?: ReadonlyMap<string, number>,
): Violation[] {
  // aggregate → the events in the order they were first applied, each with the rank of its acknowledgement (events of
  // one group whose commits are known get ranks of their own, in commit order)
  const applied = new Map<string, { readonly sequence: number; readonly eventId: string; readonly rank: number }[]>();
  const seen = new Set<string>();
  let rank = 0;
  for (const entry of acknowledged) {
    const group = typeof entry === 'string' ? [entry] : entry;
    const fresh = group.flatMap((eventId) => {
      const ordering = eventsById.get(eventId)?.ordering;
      return ordering === undefined || seen.has(eventId) ? [] : [{ eventId, ...ordering, commit: commits?.get(eventId) }];
    });
    const committed = fresh.filter((item) => item.commit !== undefined).sort((a, b) => a.commit! - b.commit!);
    const uncommitted = fresh.filter((item) => item.commit === undefined).sort((a, b) => a.sequence - b.sequence);
    rank += 1;
    for (const { eventId, aggregateId, sequence } of uncommitted) applied.set(aggregateId, [...(applied.get(aggregateId) ?? []), { sequence, eventId, rank }]);
    for (const { eventId, aggregateId, sequence } of committed) {
      rank += 1;
      applied.set(aggregateId, [...(applied.get(aggregateId) ?? []), { sequence, eventId, rank }]);
    }
    for (const { eventId } of fresh) seen.add(eventId);
  }
  const violations: Violation[] = [];
  for (const [aggregateId, events] of applied) {
    const order = `applied order: ${events.map((item) => item.sequence).join(', ')}`;
    // an inversion: an event acknowledged in an earlier invocation than an event of a lower sequence
    const index = events.findIndex((item, at) => events.slice(at + 1).some((later) => later.sequence < item.sequence && later.rank > item.rank));
    if (index >= 0) {
      const early = events[index]!;
      const earlier = Math.min(...events.slice(index + 1).filter((later) => later.rank > early.rank).map((item) => item.sequence));
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
