/**
 * The scenario's producers make the events of a run, so every event is valid unless the scenario says it sends
 * malformed ones on purpose (its `malformed`). A permanent rejection (the runtime dead-lettered the message at once:
 * a `PermanentError`, a schema or envelope error) of any other event is a consumer refusing valid work, e.g. a `parse`
 * that refuses valid e-mail addresses: each such dead letter is "explained", yet the work is lost. One violation per
 * subscriber and error name, with the events and one reason in full. Configuration errors are the
 * `configuration-error` check's. An event whose claim-check object the run altered or deleted on purpose
 * (injected-object-faults.ts) is rejected rightly: not counted.
 */
import { configurationErrorIn } from './configuration-errors';
import type { DeadLetterFinding } from './dead-letters';
import type { Violation } from './invariants';

/** Event ids listed per violation. */
const MAX_EVENTS_LISTED = 5;

/**
 * A violation per error name among the subscriber's permanent rejections of events `isMalformed` does not mark.
 * A dead letter whose event is unknown counts as an event the scenario did not mark.
 */
export function checkRejectedEvents(
  subscriber: string,
  deadLetters: readonly DeadLetterFinding[],
  isMalformed: (eventId: string) => boolean,
  injectedObjectFault: (eventId: string) => unknown = () => undefined,
): Violation[] {
  const byError = new Map<string, { events: Set<string>; example: string }>();
  for (const finding of deadLetters) {
    if (finding.rejectedWith === undefined || configurationErrorIn(finding.explanation) !== undefined) continue;
    if (finding.eventId !== undefined && (isMalformed(finding.eventId) || injectedObjectFault(finding.eventId) !== undefined)) continue;
    const entry = byError.get(finding.rejectedWith) ?? { events: new Set<string>(), example: finding.explanation ?? finding.rejectedWith };
    entry.events.add(finding.eventId ?? `message ${finding.messageId}`);
    byError.set(finding.rejectedWith, entry);
  }
  return [...byError].map(([error, { events, example }]) => {
    const listed = [...events].slice(0, MAX_EVENTS_LISTED).join(', ') + (events.size > MAX_EVENTS_LISTED ? ', …' : '');
    return {
      kind: 'valid-event-rejected' as const,
      subscriber,
      detail:
        `${events.size} event(s) the scenario did not mark as malformed were rejected for good with ${error} (events ${listed}): ` +
        `the scenario's producer made them, so they are valid unless the scenario's 'malformed' says it sends them malformed on purpose; e.g. ${example}`,
    };
  });
}
