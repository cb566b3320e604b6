/**
 * What the `aggregate-order` check (./aggregate-order.ts) covered for one ordered subscriber: how many aggregates and
 * how many of their events it found applied, so the report can say what order was checked on, not only that no
 * violation was found (an ordered subscriber that applied nothing would pass the check vacuously).
 */
import type { SimulatedEvent } from '../observation/run-facts';

/** The aggregates and events of a subscriber whose order the check read. */
export interface AggregateOrderCoverage {
  /** Aggregates with at least one event applied. */
  readonly aggregates: number;
  /** Ordered events applied (each once, however often acknowledged). */
  readonly events: number;
}

/**
 * Counts the ordered events among what a subscriber acknowledged (as `checkAggregateOrder` reads it: event ids, or the
 * event ids one invocation acknowledged together), each once, and their aggregates.
 */
export function aggregateOrderCoverage(acknowledged: Iterable<string | readonly string[]>, eventsById: ReadonlyMap<string, SimulatedEvent>): AggregateOrderCoverage {
  const events = new Set<string>();
  const aggregates = new Set<string>();
  for (const entry of acknowledged) {
    for (const eventId of typeof entry === 'string' ? [entry] : entry) {
      const ordering = eventsById.get(eventId)?.ordering;
      if (ordering === undefined) continue;
      events.add(eventId);
      aggregates.add(ordering.aggregateId);
    }
  }
  return { aggregates: aggregates.size, events: events.size };
}
