/**
 * The cause of a subscriber's dead letters when its queue retries too few times: a `maxReceiveCount` below the 5 AWS
 * recommends for a queue Lambda reads (lambda/contract/receive-count.ts), and every failed receive of the event's
 * messages failed at a fault the run injected (a crash, which fails the whole batch; a throttle or a transaction
 * conflict the runtime's retries could not outlast: simulator/observation/injected-receives.ts), none at the app's own
 * error. Transient failures do that in AWS too, so the dead letter stays a violation (the event is never applied); the
 * cause says it lies in the setting, not in the app's code, and names the fix. The constructs warn of the same setting
 * at synth (`idempotent-event-flow:fewReceives`).
 */
import { RECEIVE_COUNT_SOURCE, RECOMMENDED_MIN_RECEIVE_COUNT } from '../../lambda/contract/receive-count';
import { MOVED_BY_SQS } from './dead-letters';
import { fixFor, type ViolationCause } from './violation-cause';

/** What the cause reads of a subscriber: its queue's `maxReceiveCount`, and how each event's receives failed. */
export interface FewReceivesFacts {
  readonly subscriber: string;
  /** The `maxReceiveCount` of its queue's redrive policy. */
  readonly maxReceiveCount: number;
  /** Whether the event's messages failed receives at the subscriber, every one at a fault the run injected. */
  readonly injectedOnly: (eventId: string) => boolean;
}

/** The name of the setting, as the constructs' props and the redrive policy spell it. */
const SETTING = 'maxReceiveCount';

/**
 * The cause of the dead letters of `eventIds`, sent away by `reason`: told when SQS moved them, the queue's
 * `maxReceiveCount` is below {@link RECOMMENDED_MIN_RECEIVE_COUNT}, and some of the events failed their receives at
 * injected faults only (those are the cause's events); undefined otherwise.
 */
export function fewReceivesCause(facts: FewReceivesFacts, eventIds: readonly string[], reason: string): ViolationCause | undefined {
  if (facts.maxReceiveCount >= RECOMMENDED_MIN_RECEIVE_COUNT || !reason.startsWith(MOVED_BY_SQS)) return undefined;
  const events = eventIds.filter((eventId) => facts.injectedOnly(eventId));
  if (events.length === 0) return undefined;
  return {
    kind: 'few-receives',
    subscriber: facts.subscriber,
    eventIds: events,
    invocations: [],
    requests: [],
    setting: { name: SETTING, value: facts.maxReceiveCount, least: RECOMMENDED_MIN_RECEIVE_COUNT },
    fix: fixFor('few-receives'),
  };
}

/**
 * The cause in words, as the violation's detail ends with it; `eventsOfViolation` is how many events the violation
 * names (the cause names its own when they are fewer).
 */
export function fewReceivesText(cause: ViolationCause, eventsOfViolation: number): string {
  const which = cause.eventIds.length === eventsOfViolation ? 'these events' : `${cause.eventIds.length} of them (${cause.eventIds.slice(0, 5).join(', ')}${cause.eventIds.length > 5 ? ', ...' : ''})`;
  return (
    `${SETTING} ${String(cause.setting?.value)} is below ${RECOMMENDED_MIN_RECEIVE_COUNT}, the least AWS recommends for a queue Lambda reads (${RECEIVE_COUNT_SOURCE}): ` +
    `every receive of ${which} failed at a fault the run injected, as transient failures can in AWS: ${cause.fix}`
  );
}
