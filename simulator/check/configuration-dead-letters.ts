/**
 * No dead letter may be there for a configuration or deployment error (configuration-errors.ts): such a run proves
 * nothing about the events, every one of them would fail the same way in AWS. One violation per subscriber and error
 * name, with the count and one reason in full, rather than one line per message.
 */
import { configurationErrorIn } from './configuration-errors';
import type { DeadLetterFinding } from './dead-letters';
import type { Violation } from './invariants';

/** Event ids listed per violation. */
const MAX_EVENTS_LISTED = 3;

/** A violation per configuration error among a subscriber's dead letters. */
export function checkConfigurationErrors(subscriber: string, deadLetters: readonly DeadLetterFinding[]): Violation[] {
  const byError = new Map<string, { messages: number; events: string[]; example: string }>();
  for (const finding of deadLetters) {
    const error = configurationErrorIn(finding.explanation);
    if (error === undefined) continue;
    const entry = byError.get(error) ?? { messages: 0, events: [], example: finding.explanation ?? '' };
    entry.messages += 1;
    if (finding.eventId !== undefined) entry.events.push(finding.eventId);
    byError.set(error, entry);
  }
  return [...byError].map(([error, { messages, events, example }]) => {
    const listed = events.length === 0 ? '' : ` (events ${events.slice(0, MAX_EVENTS_LISTED).join(', ')}${events.length > MAX_EVENTS_LISTED ? ', …' : ''})`;
    return {
      kind: 'configuration-error' as const,
      subscriber,
      detail: `${messages} dead letter(s) failed with ${error}, a configuration or deployment error, not a problem of the events${listed}; e.g. ${example}`,
    };
  });
}
