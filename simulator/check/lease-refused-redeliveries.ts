/**
 * A lease or multi-step subscriber whose lease outlasts its queue's visibility timeout (an override of
 * `IEF_LEASE_DURATION_SECONDS`, or `leaseDurationSeconds` set in code: the lease the runtime wrote decides), and whose redeliveries the run saw refused because that lease was still live: a
 * configuration defect, whether or not the scenario's operator later moved the dead-lettered messages back. Deployed,
 * every crash or timeout of its consumer leaves a lease each redelivery finds live; each spends a receive until SQS
 * moves the message to the dead-letter queue, and the event waits there, its effect not done, until a human redrives
 * it. The simulator's operator pass redrives by the rules of `dlq redrive`, so the run's end state can be whole while
 * production's would need that human: the violation stands on what the run observed (deliveries refused with
 * `MessageInProgressError`), not on the end state. The events the subscriber never applied are `unapplied-event`'s
 * too (unapplied-events.ts names the same cause there).
 */
import { ENV } from '../../lambda/contract/environment';
import type { LoggedRetry } from '../observation/ledger';
import type { DeadLetterFinding } from './dead-letters';
import type { Finding } from './invariants';
import { leaseOutlastsRedelivery, type LeaseFacts } from './lease-outlasts-redelivery';

/** Event ids listed in the violation. */
const MAX_EVENTS_LISTED = 5;

/** The error a delivery that found the lease live fails with (lambda/errors.ts). */
const IN_PROGRESS = 'MessageInProgressError';

/**
 * A violation when `facts`' lease outlasts its queue's visibility timeout and the run saw deliveries refused because
 * the lease was live: records logged as failed with `MessageInProgressError`, or dead letters sent away for it.
 */
export function checkLeaseRefusedRedeliveries(facts: LeaseFacts, retries: readonly LoggedRetry[], deadLetters: readonly DeadLetterFinding[]): Finding[] {
  const refused = retries.filter((retry) => retry.logged.includes(IN_PROGRESS));
  const deadLettered = deadLetters.filter((finding) => (finding.explanation ?? '').includes(IN_PROGRESS));
  if (refused.length === 0 && deadLettered.length === 0) return [];
  const events = [...new Set([...refused, ...deadLettered].flatMap(({ eventId }) => (eventId === undefined ? [] : [eventId])))].sort();
  const cause = leaseOutlastsRedelivery(facts, events, IN_PROGRESS);
  if (cause === undefined) return [];
  const listed = events.slice(0, MAX_EVENTS_LISTED).join(', ') + (events.length > MAX_EVENTS_LISTED ? `, and ${events.length - MAX_EVENTS_LISTED} more` : '');
  return [
    {
      kind: 'lease-outlasts-redelivery',
      subscriber: facts.subscriber,
      detail:
        `${refused.length} delivery(ies) refused and ${deadLettered.length} dead letter(s) left with ${IN_PROGRESS} (events ${listed || 'unknown'}): ` +
        `its lease (${cause.setting?.value ?? facts.environment[ENV.LEASE_DURATION_SECONDS]} s) outlasts the queue's visibility timeout (${facts.visibilityTimeoutSeconds} s), so a redelivery after a crash finds it live, ` +
        'spends a receive and, at maxReceiveCount, SQS moves the message to the dead-letter queue; deployed, those events wait there for a human to redrive them, ' +
        "whether or not this run's operator moved them back",
      causes: [cause],
    },
  ];
}
