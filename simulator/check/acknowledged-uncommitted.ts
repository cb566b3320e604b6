/**
 * An acknowledgement is not an application: a transactional subscriber has applied an event only when the run saw its
 * inbox record committed (written in the same transaction as the business writes: ../observation/inbox-commits.ts).
 * An event whose message its consumer acknowledged (deleted from the queue after a handling, not after the runtime
 * dead-lettered it) with no commit of its inbox record anywhere in the run is lost: the queue forgot it and its effect
 * never happened. The usual cause is the handler's wrapper acknowledging a record the runtime failed (e.g. one that
 * answers `{ batchItemFailures: [] }` whatever the runtime reported), which this check names from the commits alone, so
 * it holds whatever the function's log level lets the runtime write.
 *
 * Only a transactional subscriber on a standard queue is checked: its runtime writes one inbox record per applied
 * event. The processing records of lease and multi-step subscribers, an aggregate's applied markers and an ordered
 * subscriber's fences are not read here. A malformed event (the scenario's) and one whose claim-check object the run
 * altered are not required to be applied.
 */
import type { Finding } from './invariants';
import { fixFor, type ViolationCause } from './violation-cause';

/** Event ids listed per violation. */
const MAX_EVENTS_LISTED = 5;

/** The words the violation's detail starts its reason with (tests build their expectation from it). */
export const ACKNOWLEDGED_UNCOMMITTED_TEXT = 'acknowledged by its consumer (deleted from its queue) with no commit of their inbox record in the run';

/** The fix the violation's cause names. */
const ACKNOWLEDGED_UNCOMMITTED_FIX = fixFor('acknowledged-uncommitted');

/** What the check reads of one subscriber. */
export interface AcknowledgedUncommittedInput {
  readonly subscriber: string;
  /** The events its consumer acknowledged or answered as handled. */
  readonly acknowledged: ReadonlySet<string>;
  /** The events whose inbox record its function committed. */
  readonly committed: ReadonlySet<string>;
  /** Whether an event is not required to be applied (malformed on purpose, its claim-check object altered). @default none is */
  readonly exempt?: (eventId: string) => boolean;
}

/** One `lost` violation listing the events a transactional subscriber acknowledged without committing their inbox record. */
export function checkAcknowledgedUncommitted(input: AcknowledgedUncommittedInput): Finding[] {
  const exempt = input.exempt ?? (() => false);
  const lost = [...input.acknowledged].filter((eventId) => !input.committed.has(eventId) && !exempt(eventId)).sort();
  if (lost.length === 0) return [];
  const listed = lost.slice(0, MAX_EVENTS_LISTED).join(', ') + (lost.length > MAX_EVENTS_LISTED ? `, and ${lost.length - MAX_EVENTS_LISTED} more` : '');
  const cause: ViolationCause = { kind: 'acknowledged-uncommitted', subscriber: input.subscriber, eventIds: lost, invocations: [], requests: [], fix: ACKNOWLEDGED_UNCOMMITTED_FIX };
  return [
    {
      kind: 'lost',
      subscriber: input.subscriber,
      detail:
        `${lost.length} event(s) ${ACKNOWLEDGED_UNCOMMITTED_TEXT} (events ${listed}): acknowledged, never applied; ` +
        `the handler acknowledged records the runtime did not commit (e.g. a wrapper swallowing the runtime's failure): ${ACKNOWLEDGED_UNCOMMITTED_FIX}`,
      causes: [cause],
    },
  ];
}
