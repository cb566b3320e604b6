/**
 * A dead letter is not a success: every event the run's producers made (or `--events` gave), that the scenario did
 * not mark as malformed on purpose and that a subscriber's filter policy took, must have been applied by that
 * subscriber by the end of the run, after the scenario's operator acted. An event whose only messages sit in the
 * subscriber's dead-letter queues (SQS moved them after `maxReceiveCount` failed receives, SNS could not deliver them,
 * the runtime blocked them for an operator nobody played) fails the run, naming the events, the subscriber and the
 * error that sent them away. Deployed, those events would wait in a dead-letter queue, their effect never done. When
 * the error was a lease still live at every redelivery and the subscriber's lease outlasts its queue's visibility
 * timeout, the violation names that setting as its cause (./lease-outlasts-redelivery.ts); when SQS moved them after
 * receives that all failed at faults the run injected and the queue's `maxReceiveCount` is below 5, that setting
 * (./few-receives.ts).
 *
 * The dead letters other checks already fail (a permanent rejection of a valid event: rejected-events.ts; a
 * configuration error: configuration-dead-letters.ts) are theirs; events neither acknowledged nor dead-lettered are
 * `lost` or `not-drained` (invariants.ts). An event whose claim-check object the run altered or deleted on purpose
 * (injected-object-faults.ts) cannot be applied: its dead letter is the right outcome, not counted. Nor is the
 * last-receive probe's dead letter (the run failed its event at every receive) when `dlq redrive`'s rules refused to
 * redrive it (./last-receive-probes.ts).
 */
import { configurationErrorIn } from './configuration-errors';
import { MOVED_BY_SQS, type DeadLetterFinding } from './dead-letters';
import type { Finding } from './invariants';
import { leaseOutlastsRedelivery, type LeaseFacts } from './lease-outlasts-redelivery';
import { fewReceivesCause, fewReceivesText, type FewReceivesFacts } from './few-receives';

/** Event ids listed per violation. */
const MAX_EVENTS_LISTED = 5;

/** What the check reads of one subscriber. */
export interface SubscriberOutcome {
  readonly name: string;
  /** The events its filter policy took. */
  readonly matched: ReadonlySet<string>;
  /**
   * The events it applied: acknowledged (one of their messages handled and deleted), or logged by the runtime as
   * `processed` or `duplicate` (handled, though a lost delete left the message to be moved by SQS).
   */
  readonly applied: ReadonlySet<string>;
  /** What is in its dead-letter queues at the end. */
  readonly deadLetters: readonly DeadLetterFinding[];
  /**
   * The scenario's operator for it (who resolves its blocked messages and redrives its dead letters): `acted`, `off`
   * (the run was told not to play it), or `none` (the scenario has none for it).
   */
  readonly operator: 'acted' | 'off' | 'none';
  /** Its consumer's environment and its queue's visibility timeout, for the lease's cause. @default unknown: no cause told */
  readonly lease?: Omit<LeaseFacts, 'subscriber'>;
  /** Its queue's `maxReceiveCount` and how its events' receives failed, for the setting's cause. @default unknown: no cause told */
  readonly fewReceives?: Omit<FewReceivesFacts, 'subscriber'>;
  /**
   * The last-receive probe's event whose dead letter `dlq redrive`'s rules refused (./last-receive-probes.ts): the run
   * failed it at every receive, so SQS's move of it is the run's doing, not counted; a dead letter of it the runtime
   * sent (the app's own) still is. @default none
   */
  readonly probeRefused?: string;
}

/**
 * The reason a dead letter names, with what differs per delivery taken out (the receive count, the event's id, a lease's
 * owner token and its expiry time), so the letters of one mistake group together.
 */
function reasonOf(finding: DeadLetterFinding): string {
  return (finding.explanation ?? 'no reason recorded')
    .replace(/^moved by SQS after \d+ receives; /, 'moved by SQS after maxReceiveCount receives; ')
    .replace(/\bevent '[^']*'/g, 'event <event>')
    .replace(/\bowner '[^']*'/g, 'owner <owner>')
    .replace(/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z/g, '<time>');
}

/** A violation per subscriber and reason for the events it never applied whose messages sit in its dead-letter queues. */
export function checkUnappliedEvents(subscriber: SubscriberOutcome, isMalformed: (eventId: string) => boolean, injectedObjectFault: (eventId: string) => unknown = () => undefined): Finding[] {
  const causesOf = (events: readonly string[], reason: string) => ({
    lease: subscriber.lease === undefined ? undefined : leaseOutlastsRedelivery({ subscriber: subscriber.name, ...subscriber.lease }, events, reason),
    few: subscriber.fewReceives === undefined ? undefined : fewReceivesCause({ subscriber: subscriber.name, ...subscriber.fewReceives }, events, reason),
  });
  const reasonsByEvent = new Map<string, string[]>();
  for (const finding of subscriber.deadLetters) {
    const { eventId } = finding;
    if (eventId === undefined || !subscriber.matched.has(eventId) || subscriber.applied.has(eventId) || isMalformed(eventId) || injectedObjectFault(eventId) !== undefined) continue;
    if (finding.rejectedWith !== undefined || configurationErrorIn(finding.explanation) !== undefined) continue;
    if (eventId === subscriber.probeRefused && finding.explanation?.startsWith(MOVED_BY_SQS) === true) continue;
    const reasons = reasonsByEvent.get(eventId) ?? [];
    if (!reasons.includes(reasonOf(finding))) reasons.push(reasonOf(finding));
    reasonsByEvent.set(eventId, reasons);
  }
  // an event with several dead letters (copies of its message, each with its own last failure) is counted once: under
  // the reason whose cause the run can tell (a copy's last receive may have met a crash, another's the lease it left)
  const byReason = new Map<string, Set<string>>();
  for (const [eventId, reasons] of reasonsByEvent) {
    const told = reasons.find((candidate) => Object.values(causesOf([eventId], candidate)).some((cause) => cause !== undefined));
    const reason = told ?? reasons[0]!;
    byReason.set(reason, (byReason.get(reason) ?? new Set()).add(eventId));
  }
  const blockedHint = {
    acted: " (still blocked after the scenario's operator acted)",
    off: ' (blocked for an operator, and the operator was off in this run)',
    none: ` (blocked for an operator, and the scenario has none for ${subscriber.name}: give one in its 'operator', or the blocked messages stay unapplied)`,
  }[subscriber.operator];
  return [...byReason].map(([reason, events]) => {
    const listed = [...events].slice(0, MAX_EVENTS_LISTED).join(', ') + (events.size > MAX_EVENTS_LISTED ? `, and ${events.size - MAX_EVENTS_LISTED} more` : '');
    const { lease: cause, few } = causesOf([...events], reason);
    const causes = [cause, few].filter((told) => told !== undefined);
    return {
      kind: 'unapplied-event' as const,
      subscriber: subscriber.name,
      detail:
        `${events.size} event(s) its filter policy took were never acknowledged by it, their messages left in its dead-letter queue (events ${listed}): ` +
        'their effect is not done, or not known to be done; ' +
        `sent away by: ${reason}${reason.startsWith('MessageBlockedError') ? blockedHint : ''}${few === undefined ? '' : `; ${fewReceivesText(few, events.size)}`}`,
      ...(causes.length === 0 ? {} : { causes }),
    };
  });
}
