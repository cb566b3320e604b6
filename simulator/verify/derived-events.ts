/**
 * A verify run's events, told apart. The run's own ids are those its commands derive: every id field of a command
 * carries the run id (./run-ids.ts), and so does the id of the event the producer commits for it. An event a
 * subscriber emits while processing one of them (`tx.emit` without an id) has the runtime's derived id,
 * `derivedEventId(subscriber, consumedEventId, index)` (lambda/fingerprint.ts): a hash, unique to the run because the
 * consumed event's id is, but without the run id in it. Such an event belongs to the run by its derivation (observe.ts finds it by computing
 * the derived ids of the run's events, transitively) or by its data, and is listed
 * apart with the event, the subscriber and the index it derives from (found by computing the derived ids of what each
 * subscriber took). An event of the run whose id is neither (a handler chose it) is listed apart without a source.
 */
import { derivedEventId } from '../../lambda/fingerprint';
import type { SimulatedEvent } from '../observation/run-facts';

/** At most this many events are emitted in one transaction (DynamoDB TransactWriteItems takes 100 actions). */
const MAX_EMITTED_PER_EVENT = 100;

/** An event of the run whose id is not one of the run's (it carries the run id in its data only). */
export interface DerivedRunEvent {
  readonly id: string;
  readonly type: string;
  /** The event, subscriber and index its id derives from. @default absent: not a runtime-derived id (its handler chose it) */
  readonly from?: { readonly eventId: string; readonly subscriber: string; readonly index: number };
}

/** The run's events told apart: its own ids (sorted), and the derived ones (sorted by id). */
export interface ClassifiedRunEvents {
  readonly eventIds: readonly string[];
  readonly derivedEvents: readonly DerivedRunEvent[];
}

/**
 * Tells the run's events apart (see the module comment). `takenBy`: per subscriber, the run events its filter took
 * (a derived event comes from one of those).
 */
export function classifyRunEvents(
  events: ReadonlyMap<string, { readonly event: SimulatedEvent }>,
  runId: string,
  takenBy: ReadonlyMap<string, ReadonlySet<string>>,
): ClassifiedRunEvents {
  const eventIds = [...events.keys()].filter((id) => id.includes(runId)).sort();
  const unexplained = new Set([...events.keys()].filter((id) => !id.includes(runId)));
  const sources = new Map<string, NonNullable<DerivedRunEvent['from']>>();
  // index by index, so the common case (one emitted event per consumed one) hashes each pair once
  for (let index = 0; index < MAX_EMITTED_PER_EVENT && unexplained.size > 0; index += 1) {
    for (const [subscriber, taken] of takenBy) {
      for (const eventId of taken) {
        const id = derivedEventId(subscriber, eventId, index);
        if (!unexplained.has(id)) continue;
        sources.set(id, { eventId, subscriber, index });
        unexplained.delete(id);
      }
    }
  }
  const derivedEvents = [...events.keys()]
    .filter((id) => !id.includes(runId))
    .sort()
    .map((id) => {
      const from = sources.get(id);
      return { id, type: events.get(id)!.event.type, ...(from === undefined ? {} : { from }) };
    });
  return { eventIds, derivedEvents };
}
