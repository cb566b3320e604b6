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
import { InvocationBudget, type RecordClock } from './invocation-budget';

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
 * Time kept back from the invocation's remaining time for the response: a record starts, and a retry runs, only while
 * at least this much is left besides the work still to do (see invocation-budget.ts).
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
  /** Time kept back for the response, besides the work still to do (see invocation-budget.ts). @default {@link CONTENTION_SAFETY_MARGIN_MILLISECONDS} (1000 ms) */
  readonly safetyMarginMilliseconds?: number;
  /** Attempts in all when the remaining time is unknown. @default {@link CONTENTION_ATTEMPTS_WITHOUT_DEADLINE} (8) */
  readonly attemptsWithoutDeadline?: number;
  /** The jitter's random source: a number from 0 (inclusive) to 1 (exclusive) at each call, else a RangeError. @default `Math.random`, read at each draw (the simulator seeds it) */
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
  /**
   * The record's clock in its invocation's budget ({@link ContentionRetry.budget}), shared with the batch: the retry then
   * also leaves the records not started yet their time. @default a budget of this call alone, from `lambdaContext`
   */
  readonly clock?: RecordClock;
  /**
   * Waited for together with the back-off before each retry (e.g. the batch's commits under way); the time check is made
   * after both. @default nothing
   */
  readonly beforeRetry?: () => Promise<void>;
  /** Which errors are retried. @default {@link isContention} */
  readonly retryable?: (error: unknown) => boolean;
  /** A bound on the attempts besides the time. @default none */
  readonly maxAttempts?: number;
  /** Told of each retry before its wait. @default nothing */
  readonly onRetry?: (attempt: number, error: unknown, waitMilliseconds: number) => void;
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

  /** One invocation's budget of time, shared by its batch of `records` (see invocation-budget.ts). */
  public budget(lambdaContext: unknown, records: number): InvocationBudget {
    return new InvocationBudget(lambdaContext, records, this.margin);
  }

  /**
   * The wait before retry `attempt` + 1: full jitter over min(cap, base * 2^(attempt-1)).
   * @throws RangeError when `random` returned something other than a number from 0 (inclusive) to 1 (exclusive)
   */
  public delayAfter(attempt: number): number {
    const ceiling = Math.min(this.cap, this.base * 2 ** Math.min(attempt - 1, 30));
    const draw = (this.options.random ?? Math.random)();
    if (!(typeof draw === 'number' && draw >= 0 && draw < 1)) {
      throw new RangeError(`contentionRetry.random must return a number from 0 (inclusive) to 1 (exclusive), but returned ${String(draw)}`);
    }
    return draw * ceiling;
  }

  /**
   * Runs `attempt` until it returns, throws something {@link ContentionRetryCall.retryable} does not accept, or time (or
   * the attempts bound) runs out; then the last error is thrown. Returns the value and the number of attempts.
   */
  public async run<T>(attempt: () => Promise<T>, call: ContentionRetryCall = {}): Promise<{ readonly value: T; readonly attempts: number }> {
    const clock = call.clock ?? this.budget(call.lambdaContext, 0).clockOfRunning();
    const retryable = call.retryable ?? isContention;
    const sleep = this.options.sleep ?? timer;
    for (let attempts = 1; ; attempts++) {
      try {
        return { value: await attempt(), attempts };
      } catch (error) {
        if (this.options.disabled === true || !retryable(error)) throw error;
        if (call.maxAttempts !== undefined && attempts >= call.maxAttempts) throw error;
        const wait = this.delayAfter(attempts);
        clock.pause(); // the stretch of work ends here: the budget learns its length
        // after the wait there must be time for one more stretch, the records not started yet, and the margin
        if (clock.bounded ? !clock.mayRetryAfter(wait) : attempts >= this.attemptsWithoutDeadline) {
          clock.resume();
          throw error;
        }
        call.onRetry?.(attempts, error, wait);
        await Promise.all([sleep(wait), call.beforeRetry?.()]);
        // checked again after the wait and what was waited with it (the batch's commits under way may take long)
        if (!clock.mayRetry()) {
          clock.resume();
          throw error;
        }
      }
    }
  }
}
