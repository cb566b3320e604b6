/**
 * The cause of a lease or multi-step subscriber's dead letters when its lease outlasts the queue's visibility timeout:
 * a delivery that ended without finishing (it crashed, timed out, or its release failed) leaves its lease on the
 * processing record; SQS hands the message out again a visibility timeout later, and the runtime takes the lease over
 * only once it is over, clock-skew allowance included (lambda/processing/record-store.ts `isLeaseLive`). A lease longer
 * than the visibility timeout less that allowance makes every such redelivery fail with `MessageInProgressError`, each
 * spending a receive, until SQS moves the message to the dead-letter queue: the event is never applied. The construct
 * refuses such a `leaseDuration`; an override of `IEF_LEASE_DURATION_SECONDS` in the function's environment, or a
 * `leaseDurationSeconds` set in the handler's code (`createLeaseConsumer({ config })`), bypasses that check, and this
 * names it: the lease is read from what the runtime wrote on its processing records when the run saw one.
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
  /**
   * The longest lease the runtime wrote on a processing record in the run, in seconds (the lease set in code through
   * `config.leaseDurationSeconds` as well as the environment's). @default unknown: the environment's is read
   */
  readonly writtenLeaseSeconds?: number;
}

/** The setting named when the lease the runtime wrote is not the environment's: `createLeaseConsumer({ config })`'s. */
const CODE_LEASE_SETTING = 'leaseDurationSeconds';

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
  const environmentSeconds = Number(facts.environment[ENV.LEASE_DURATION_SECONDS]);
  // what the runtime wrote decides; the setting named is the environment's when it says so, else the code's config
  const leaseSeconds = facts.writtenLeaseSeconds ?? environmentSeconds;
  const setting = facts.writtenLeaseSeconds === undefined || facts.writtenLeaseSeconds === environmentSeconds ? ENV.LEASE_DURATION_SECONDS : CODE_LEASE_SETTING;
  // the longest lease a redelivery a visibility timeout later finds over (live until its expiry plus the allowance)
  const longest = facts.visibilityTimeoutSeconds - DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS;
  if (!Number.isFinite(leaseSeconds) || leaseSeconds <= longest) return undefined;
  return {
    kind: 'lease-outlasts-redelivery',
    subscriber: facts.subscriber,
    eventIds: [...eventIds],
    invocations: [],
    requests: [],
    setting: { name: setting, value: leaseSeconds, needed: longest },
    fix: fixFor('lease-outlasts-redelivery'),
  };
}
