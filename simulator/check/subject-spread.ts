/**
 * A producer of the ordered path that orders nothing (issue 38 item 8): it draws a fresh aggregate id per event (a
 * random UUID, the event id), so every aggregate holds one event, each event is sequence 1 of its own aggregate, and the
 * subscribers apply the events of one business entity in any order, while every other check passes. What the simulator
 * can see: each committed ordered event's CloudEvents `subject` (what the event is about, e.g. the order) and its
 * aggregate (`partitionkey`). The rule: a subject whose ordered events lie in at least
 * {@link MIN_SPREAD_AGGREGATES} distinct aggregates, each of which holds exactly one event in the whole run, is spread:
 * its events share an entity and none of them is ordered after another.
 *
 * Correct apps do not trip it. An app whose aggregate is the subject's entity has one aggregate per subject. An app
 * whose subject is coarser than its aggregate (subject: the customer, aggregate: the order) trips it only when three or
 * more of one customer's orders each got a single event in the run and none more; the example (`npm run demo`: 25
 * orders of three steps each, subject and aggregate the order) has one three-event aggregate per subject.
 */
import type { SimulatedEvent } from '../observation/run-facts';
import type { Violation } from './invariants';

/** The fewest one-event aggregates one subject must spread over to be reported (two can be chance: a retried command). */
export const MIN_SPREAD_AGGREGATES = 3;
/** Subjects named per violation. */
const MAX_LISTED = 3;

/** A subject spread over one-event aggregates, and a few of them. */
export interface SpreadSubject {
  readonly subject: string;
  readonly aggregates: readonly string[];
}

/** The subjects of `events` (committed, ordered ones count) spread over {@link MIN_SPREAD_AGGREGATES} or more one-event aggregates. */
export function spreadSubjects(events: Iterable<SimulatedEvent>): SpreadSubject[] {
  const eventsPerAggregate = new Map<string, number>();
  const aggregatesPerSubject = new Map<string, Set<string>>();
  for (const event of events) {
    if (event.ordering === undefined) continue;
    const { aggregateId } = event.ordering;
    eventsPerAggregate.set(aggregateId, (eventsPerAggregate.get(aggregateId) ?? 0) + 1);
    if (event.subject === undefined) continue;
    const aggregates = aggregatesPerSubject.get(event.subject) ?? new Set<string>();
    aggregates.add(aggregateId);
    aggregatesPerSubject.set(event.subject, aggregates);
  }
  const spread: SpreadSubject[] = [];
  for (const [subject, aggregates] of [...aggregatesPerSubject].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (aggregates.size < MIN_SPREAD_AGGREGATES) continue;
    if ([...aggregates].every((aggregateId) => eventsPerAggregate.get(aggregateId) === 1)) spread.push({ subject, aggregates: [...aggregates].sort() });
  }
  return spread;
}

/** One `subject-spread` violation naming the spread subjects (a few) and what to change; none when there are none. */
export function checkSubjectSpread(events: Iterable<SimulatedEvent>): Violation[] {
  const spread = spreadSubjects(events);
  if (spread.length === 0) return [];
  const named = spread
    .slice(0, MAX_LISTED)
    .map(({ subject, aggregates }) => `'${subject}' in ${aggregates.length} aggregates (${aggregates.slice(0, 3).join(', ')}${aggregates.length > 3 ? ', …' : ''})`)
    .join('; ');
  return [
    {
      kind: 'subject-spread',
      detail:
        `${spread.length} subject(s) of ordered events are spread over ${MIN_SPREAD_AGGREGATES} or more aggregates of one event each, so nothing orders ` +
        `their events: ${named}${spread.length > MAX_LISTED ? `; and ${spread.length - MAX_LISTED} more` : ''}. ` +
        "The producer draws a new aggregate id per event: give OrderedOutbox's aggregateId the id of the entity the events are about " +
        '(the one the subject names, e.g. the order id), the same for every event of it',
    },
  ];
}
