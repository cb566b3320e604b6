/**
 * A subscriber the scenario means to check (it has an effect probe) must have been reached by an event: when none
 * matched its filter policy, its probe counted nothing, and an OK would claim effects nobody checked (e.g. a body
 * filter on `eventType` where the envelope says `type`). The violation names the filter policy's keys that are not
 * envelope attributes, the usual cause.
 */
import { ENVELOPE_ATTRIBUTE_NAMES, keysOutsideEnvelope } from '../../lambda/contract/envelope-attributes';
import type { Violation } from './invariants';

/** What {@link checkProbedSubscriberReached} looks at. */
export interface ReachedFigures {
  readonly name: string;
  /** Events that matched its filter policy. */
  readonly matchedEvents: number;
  /** Events committed to the outboxes in the run. */
  readonly committedEvents: number;
  /**
   * Of those, events the relay gave up on (dead-lettered or lost) before they reached the topic: they could reach no
   * subscriber, and the relay's own verdict says where they are. @default 0
   */
  readonly eventsGivenUpByRelay?: number;
  /** Whether the scenario has an effect probe for it. */
  readonly probed: boolean;
  /** Its subscription's filter policy. @default none */
  readonly filterPolicy?: Readonly<Record<string, unknown>>;
  readonly filterPolicyScope: 'MessageAttributes' | 'MessageBody';
}

/** Why no event matched, when the filter policy shows it; '' otherwise. */
function filterCause(figures: ReachedFigures): string {
  if (figures.filterPolicy === undefined) return '';
  const keys = Object.keys(figures.filterPolicy);
  if (figures.filterPolicyScope === 'MessageAttributes') {
    return `; its filter policy matches message attributes (${keys.join(', ')}), and the relay publishes the envelope as the body with no attributes: use filterPolicyWithMessageBody`;
  }
  const outside = keysOutsideEnvelope(keys);
  if (outside.length === 0) return `; its filter policy: ${JSON.stringify(figures.filterPolicy)}`;
  const named = outside.map((key) => `'${key}'`).join(', ');
  return (
    `; its filter policy's key${outside.length > 1 ? 's' : ''} ${named} ${outside.length > 1 ? 'are' : 'is'} not ${outside.length > 1 ? 'attributes' : 'an attribute'} of the event envelope ` +
    `(${ENVELOPE_ATTRIBUTE_NAMES.join(', ')}); a field of the event's data is matched under 'data'`
  );
}

/** A violation when the scenario probes the subscriber and no event matched its filter policy. */
export function checkProbedSubscriberReached(figures: ReachedFigures): Violation[] {
  if (!figures.probed || figures.matchedEvents > 0) return [];
  // no event reached the topic: nothing could reach this subscriber, whatever its filter
  if (figures.committedEvents - (figures.eventsGivenUpByRelay ?? 0) <= 0) return [];
  return [
    {
      kind: 'nothing-reached',
      subscriber: figures.name,
      detail: `the scenario has an effect probe for ${figures.name}, but none of the ${figures.committedEvents} committed event(s) reached it: nothing was checked for it${filterCause(figures)}`,
    },
  ];
}
