/**
 * The one retry every processing mode uses for contention: a write refused only because another transaction held one
 * of its items at that moment (`TransactionConflict`), or because DynamoDB throttled it, is not the message's fault.
 * Nothing was written, and the same write a moment later may well succeed; so it is retried inside the invocation, with
 * full-jitter exponential back-off, while the invocation's remaining time allows, and only then left to SQS. Spending
 * receives on contention alone would send a valid event to the dead-letter queue once `maxReceiveCount` is reached.
 *
 * Jitter draws from an injectable random source (`ContentionRetryOptions.random`; by default `Math.random`, read at
 * each draw, which the simulator seeds per execution environment), so a seeded run decides every wait.
 */
import { NO_FAILURE, TRANSACTION_CONFLICT } from './cancellation';

/** Cancellation reason codes that mean contention, not the message: another transaction, or throttling. */
export const CONTENTION_REASON_CODES: ReadonlySet<string> = new Set([TRANSACTION_CONFLICT, 'ThrottlingError', 'ProvisionedThroughputExceeded', 'RequestLimitExceeded']);

/**
 * Error names of a single request refused for contention: a single write on an item a transaction holds
 * (`TransactionConflictException`), and DynamoDB's throttling errors, as the SDK throws them once its own retries are
 * spent.
 */
export const CONTENTION_ERROR_NAMES: ReadonlySet<string> = new Set([
  'TransactionConflictException',
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
]);

/** The base of the back-off ceiling, in milliseconds: the n-th wait is drawn from 0 to min(cap, base * 2^(n-1)). */
export const CONTENTION_BACKOFF_BASE_MILLISECONDS = 25;
/** The cap of the back-off ceiling, in milliseconds. */
export const CONTENTION_BACKOFF_CAP_MILLISECONDS = 1000;
/**
 * Time kept back from the invocation's remaining time for the rest of the batch and the response: a retry is only
 * started when, after its wait, at least this much plus the longest attempt of the delivery so far is left.
 */
export const CONTENTION_SAFETY_MARGIN_MILLISECONDS = 1000;
/**
 * How many attempts in all when the invocation's remaining time is unknown (no Lambda context with
 * `getRemainingTimeInMillis`, e.g. a handler called directly in a test).
 */
export const CONTENTION_ATTEMPTS_WITHOUT_DEADLINE = 8;

/** True when `error` is contention alone: every failed action of a cancelled transaction, or the single request. */
export function isContention(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  if (CONTENTION_ERROR_NAMES.has(error.name)) return true;
  let codes: readonly string[] | undefined;
  if (error.name === 'TransactionCancelledError') codes = (error as { cancellationReasonCodes?: readonly string[] }).cancellationReasonCodes;
  else if (error.name === 'TransactionCanceledException') {
    codes = ((error as { CancellationReasons?: ReadonlyArray<{ Code?: string }> }).CancellationReasons ?? []).map((reason) => reason.Code ?? NO_FAILURE);
  }
  const failures = (codes ?? []).filter((code) => code !== NO_FAILURE);
  return failures.length > 0 && failures.every((code) => CONTENTION_REASON_CODES.has(code));
}

/** Options of {@link ContentionRetry} (a consumer's `contentionRetry`). */
export interface ContentionRetryOptions {
  /** The base of the back-off ceiling. @default {@link CONTENTION_BACKOFF_BASE_MILLISECONDS} (25 ms) */
  readonly baseDelayMilliseconds?: number;
  /** The cap of the back-off ceiling. @default {@link CONTENTION_BACKOFF_CAP_MILLISECONDS} (1000 ms) */
  readonly maxDelayMilliseconds?: number;
  /** Time kept back for the rest of the batch and the response. @default {@link CONTENTION_SAFETY_MARGIN_MILLISECONDS} (1000 ms) */
  readonly safetyMarginMilliseconds?: number;
  /** Attempts in all when the remaining time is unknown. @default {@link CONTENTION_ATTEMPTS_WITHOUT_DEADLINE} (8) */
  readonly attemptsWithoutDeadline?: number;
  /** The jitter's random source, from 0 (inclusive) to 1. @default `Math.random`, read at each draw (the simulator seeds it) */
  readonly random?: () => number;
  /** How a wait is waited. @default a timer */
  readonly sleep?: (milliseconds: number) => Promise<void>;
  /** Turns the retry off (one attempt): for measurements and the planted mutants only. @default false */
  readonly disabled?: boolean;
}

/** What one delivery's retry is told besides the attempt. */
export interface ContentionRetryCall {
  /** The Lambda context; its `getRemainingTimeInMillis()` bounds the retries. @default none: {@link ContentionRetryOptions.attemptsWithoutDeadline} */
  readonly lambdaContext?: unknown;
  /** Waited for together with the back-off before each retry (e.g. the batch's commits under way). @default nothing */
  readonly beforeRetry?: () => Promise<void>;
  /** Which errors are retried. @default {@link isContention} */
  readonly retryable?: (error: unknown) => boolean;
  /** A bound on the attempts besides the time. @default none */
  readonly maxAttempts?: number;
  /** Told of each retry before its wait. @default nothing */
  readonly onRetry?: (attempt: number, error: unknown, waitMilliseconds: number) => void;
}

/** The invocation's remaining time, when the Lambda context can say it. */
export function remainingMillisecondsOf(lambdaContext: unknown): (() => number) | undefined {
  const remaining = (lambdaContext as { getRemainingTimeInMillis?: unknown } | undefined)?.getRemainingTimeInMillis;
  return typeof remaining === 'function' ? () => Number(remaining.call(lambdaContext)) : undefined;
}

const timer = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

function nonNegative(name: string, value: number): number {
  if (!(Number.isFinite(value) && value >= 0)) throw new RangeError(`contentionRetry.${name} must be a finite number of at least 0, but was ${value}`);
  return value;
}

/** The policy: one per consumer, shared by its invocations (it keeps no state of its own). */
export class ContentionRetry {
  private readonly base: number;
  private readonly cap: number;
  private readonly margin: number;
  private readonly attemptsWithoutDeadline: number;

  /** @throws RangeError for a negative or non-finite duration, or fewer than 1 attempt */
  public constructor(private readonly options: ContentionRetryOptions = {}) {
    this.base = nonNegative('baseDelayMilliseconds', options.baseDelayMilliseconds ?? CONTENTION_BACKOFF_BASE_MILLISECONDS);
    this.cap = nonNegative('maxDelayMilliseconds', options.maxDelayMilliseconds ?? CONTENTION_BACKOFF_CAP_MILLISECONDS);
    this.margin = nonNegative('safetyMarginMilliseconds', options.safetyMarginMilliseconds ?? CONTENTION_SAFETY_MARGIN_MILLISECONDS);
    this.attemptsWithoutDeadline = options.attemptsWithoutDeadline ?? CONTENTION_ATTEMPTS_WITHOUT_DEADLINE;
    if (!(Number.isInteger(this.attemptsWithoutDeadline) && this.attemptsWithoutDeadline >= 1)) {
      throw new RangeError(`contentionRetry.attemptsWithoutDeadline must be a whole number of at least 1, but was ${this.attemptsWithoutDeadline}`);
    }
  }

  /** The wait before retry `attempt` + 1: full jitter over min(cap, base * 2^(attempt-1)). */
  public delayAfter(attempt: number): number {
    const ceiling = Math.min(this.cap, this.base * 2 ** Math.min(attempt - 1, 30));
    const draw = (this.options.random ?? Math.random)();
    return Math.max(0, Math.min(1, draw)) * ceiling;
  }

  /**
   * Runs `attempt` until it returns, throws something {@link ContentionRetryCall.retryable} does not accept, or time (or
   * the attempts bound) runs out; then the last error is thrown. Returns the value and the number of attempts.
   */
  public async run<T>(attempt: () => Promise<T>, call: ContentionRetryCall = {}): Promise<{ readonly value: T; readonly attempts: number }> {
    const remaining = remainingMillisecondsOf(call.lambdaContext);
    const retryable = call.retryable ?? isContention;
    const sleep = this.options.sleep ?? timer;
    let longestAttempt = 0;
    for (let attempts = 1; ; attempts++) {
      const before = remaining?.();
      try {
        return { value: await attempt(), attempts };
      } catch (error) {
        const after = remaining?.();
        if (before !== undefined && after !== undefined) longestAttempt = Math.max(longestAttempt, before - after);
        if (this.options.disabled === true || !retryable(error)) throw error;
        if (call.maxAttempts !== undefined && attempts >= call.maxAttempts) throw error;
        const wait = this.delayAfter(attempts);
        // time left after the wait must cover another attempt as long as the longest so far, and the margin
        if (after !== undefined ? after - wait < this.margin + longestAttempt : attempts >= this.attemptsWithoutDeadline) throw error;
        call.onRetry?.(attempts, error, wait);
        await Promise.all([sleep(wait), call.beforeRetry?.()]);
      }
    }
  }
}
