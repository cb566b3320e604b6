/**
 * The cause of a lease or multi-step subscriber's dead letters when its lease outlasts the queue's visibility timeout:
 * a delivery that ended without finishing (it crashed, timed out, or its release failed) leaves its lease on the
 * processing record; SQS hands the message out again a visibility timeout later, and the runtime takes the lease over
 * only once it is over, clock-skew allowance included (lambda/processing/record-store.ts `isLeaseLive`). A lease longer
 * than the visibility timeout less that allowance makes every such redelivery fail with `MessageInProgressError`, each
 * spending a receive, until SQS moves the message to the dead-letter queue: the event is never applied. The construct
 * refuses such a `leaseDuration`; an override of `IEF_LEASE_DURATION_SECONDS` in the function's environment bypasses
 * that check, and this names it.
 */
import { DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS, ENV, PROCESSING_MODE } from '../../lambda/contract/environment';
import { fixFor, type ViolationCause } from './violation-cause';

/** What the cause reads of a subscriber: its consumer's environment and its queue's visibility timeout. */
export interface LeaseFacts {
  readonly subscriber: string;
  /** The consumer's environment, overrides included. */
  readonly environment: Readonly<Record<string, string>>;
  /** The visibility timeout of the queue its consumer reads. @default unknown: no cause is told */
  readonly visibilityTimeoutSeconds?: number;
}

/** The error a redelivery that found the lease live fails with (lambda/errors.ts). */
const IN_PROGRESS = 'MessageInProgressError';

/**
 * The cause of the dead letters of `eventIds`, sent away by `reason`, when that reason is a live lease and the
 * subscriber's lease outlasts its queue's visibility timeout; undefined otherwise.
 */
export function leaseOutlastsRedelivery(facts: LeaseFacts, eventIds: readonly string[], reason: string): ViolationCause | undefined {
  const mode = facts.environment[ENV.PROCESSING_MODE];
  if (mode !== PROCESSING_MODE.LEASE && mode !== PROCESSING_MODE.MULTI_STEP) return undefined;
  if (!reason.includes(IN_PROGRESS) || facts.visibilityTimeoutSeconds === undefined) return undefined;
  const leaseSeconds = Number(facts.environment[ENV.LEASE_DURATION_SECONDS]);
  // the longest lease a redelivery a visibility timeout later finds over (live until its expiry plus the allowance)
  const longest = facts.visibilityTimeoutSeconds - DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS;
  if (!Number.isFinite(leaseSeconds) || leaseSeconds <= longest) return undefined;
  return {
    kind: 'lease-outlasts-redelivery',
    subscriber: facts.subscriber,
    eventIds: [...eventIds],
    invocations: [],
    requests: [],
    setting: { name: ENV.LEASE_DURATION_SECONDS, value: leaseSeconds, needed: longest },
    fix: fixFor('lease-outlasts-redelivery'),
  };
}
