/**
 * What the `aggregate-order` check (./aggregate-order.ts) covered for one ordered subscriber: how many aggregates and
 * how many of their events it found applied, so the report can say what order was checked on, not only that no
 * violation was found (an ordered subscriber that applied nothing would pass the check vacuously).
 */
import type { SimulatedEvent } from '../observation/run-facts';

/** An aggregate the subscriber stopped applying before its last event: where it stands, and what it waits for. */
export interface HeldAggregate {
  readonly aggregateId: string;
  /** The highest sequence applied in order from 1 (0: none). */
  readonly appliedUpTo: number;
  /** The sequence it waits for, and its event. */
  readonly waitsFor: { readonly sequence: number; readonly eventId: string };
  /** Why that event was not applied: it is in a dead-letter queue, or not (still on its way, or lost). */
  readonly cause: 'dead-lettered' | 'not applied';
}

/** The aggregates and events of a subscriber whose order the check read. */
export interface AggregateOrderCoverage {
  /** Aggregates with at least one event applied. */
  readonly aggregates: number;
  /** Ordered events applied (each once, however often acknowledged). */
  readonly events: number;
  /**
   * The aggregates held: an event it was given never applied, at the first such sequence, and none after it applied
   * (not an order violation: the events behind it wait; one applied over it is a gap, which the check reports). Only
   * when the events the subscriber was given are known.
   * @default none held (or not known)
   */
  readonly held?: readonly HeldAggregate[];
}

/** The events a subscriber was given (its filter matched them), and those in its dead-letter queues. */
export interface GivenEvents {
  readonly matched: Iterable<string>;
  readonly deadLettered: ReadonlySet<string>;
}

/**
 * Counts the ordered events among what a subscriber acknowledged (as `checkAggregateOrder` reads it: event ids, or the
 * event ids one invocation acknowledged together), each once, and their aggregates; with `given`, the aggregates held,
 * in aggregate order.
 */
export function aggregateOrderCoverage(acknowledged: Iterable<string | readonly string[]>, eventsById: ReadonlyMap<string, SimulatedEvent>, given?: GivenEvents): AggregateOrderCoverage {
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
  if (given === undefined) return { aggregates: aggregates.size, events: events.size };
  const held = heldAggregates(events, eventsById, given);
  return { aggregates: aggregates.size, events: events.size, ...(held.length === 0 ? {} : { held }) };
}

function heldAggregates(applied: ReadonlySet<string>, eventsById: ReadonlyMap<string, SimulatedEvent>, given: GivenEvents): HeldAggregate[] {
  // aggregate -> its given events by sequence
  const byAggregate = new Map<string, Map<number, string>>();
  for (const eventId of given.matched) {
    const ordering = eventsById.get(eventId)?.ordering;
    if (ordering === undefined) continue;
    const sequences = byAggregate.get(ordering.aggregateId) ?? new Map<number, string>();
    sequences.set(ordering.sequence, eventId);
    byAggregate.set(ordering.aggregateId, sequences);
  }
  const held: HeldAggregate[] = [];
  for (const aggregateId of [...byAggregate.keys()].sort()) {
    const sequences = byAggregate.get(aggregateId)!;
    const waiting = [...sequences.entries()].sort(([a], [b]) => a - b).find(([, eventId]) => !applied.has(eventId));
    if (waiting === undefined) continue;
    const [sequence, eventId] = waiting;
    // a later sequence applied over it is a gap, which the order check reports: not held
    if ([...sequences.entries()].some(([later, laterId]) => later > sequence && applied.has(laterId))) continue;
    let appliedUpTo = 0;
    while (sequences.has(appliedUpTo + 1) && applied.has(sequences.get(appliedUpTo + 1)!)) appliedUpTo += 1;
    held.push({ aggregateId, appliedUpTo, waitsFor: { sequence, eventId }, cause: given.deadLettered.has(eventId) ? 'dead-lettered' : 'not applied' });
  }
  return held;
}
