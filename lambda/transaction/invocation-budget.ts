/**
 * The invocation's time, shared by its batch: which record may still start, and which contention retry may still run
 * (docs/PROCESSING-MODES.md, "Contention"). Pure: no AWS SDK, no clock of its own (it reads the Lambda context).
 *
 * A record's work is cut into stretches: from its start, or from the start of a retry, to the next back-off wait or to
 * its end. `E` is the longest stretch of the invocation so far, `M` the margin kept back for the response, `U` the number
 * of the batch's records not started yet. The rule:
 * - a record starts only while the remaining time is at least `M + U × E` (`U` counting it);
 * - a retry runs (checked after its wait and after anything waited with it) only while it is at least `M + E + U × E`.
 * So no stretch starts with less than `M + E` left: as long as no stretch takes longer than the longest before it, the
 * invocation ends with at least `M` left. And a contended record stops retrying while the records behind it still
 * have `E` each, one after another: it cannot take their time. A record refused its start is returned untouched.
 */

/** The remaining time of an invocation, from its Lambda context; undefined when the context cannot say it. */
export function remainingMillisecondsOf(lambdaContext: unknown): (() => number) | undefined {
  const remaining = (lambdaContext as { getRemainingTimeInMillis?: unknown } | undefined)?.getRemainingTimeInMillis;
  return typeof remaining === 'function' ? () => Number(remaining.call(lambdaContext)) : undefined;
}

/** One record's clock in an {@link InvocationBudget}: its stretches of work between waits. */
export class RecordClock {
  private stretchStartedAt: number | undefined;
  /** The last stretch: where it started, and what was left when it ended (for {@link RecordClock.endAfterScope}). */
  private lastStretch: { startedAt: number; endedAt: number } | undefined;

  /** @internal made by {@link InvocationBudget.startRecord} and {@link InvocationBudget.clockOfRunning} */
  public constructor(private readonly budget: InvocationBudget) {
    this.stretchStartedAt = budget.remaining();
  }

  /** True when the invocation's remaining time is known. */
  public get bounded(): boolean {
    return this.budget.bounded;
  }

  /** Starts a stretch whatever the time left (the record goes on to its end after a retry was refused). */
  public resume(): void {
    this.stretchStartedAt = this.budget.remaining();
  }

  /** Ends the stretch under way (before a wait, or at the record's end). */
  public pause(): void {
    const now = this.budget.remaining();
    if (this.stretchStartedAt !== undefined && now !== undefined) {
      this.budget.observeStretch(this.stretchStartedAt - now);
      this.lastStretch = { startedAt: this.stretchStartedAt, endedAt: now };
    }
    this.stretchStartedAt = undefined;
  }

  /**
   * Whether a retry may run now, after its wait: the remaining time covers one more stretch, the un-started records'
   * stretches and the margin. When it may, a new stretch starts.
   */
  public mayRetry(): boolean {
    const now = this.budget.remaining();
    if (now === undefined) return true;
    if (now < this.budget.retryNeeds()) return false;
    this.stretchStartedAt = now;
    return true;
  }

  /** Whether a retry could still run after waiting `milliseconds` (checked before the wait, to spare a useless one). */
  public mayRetryAfter(milliseconds: number): boolean {
    const now = this.budget.remaining();
    return now === undefined || now - milliseconds >= this.budget.retryNeeds();
  }

  /** The record is done: its last stretch is counted. */
  public end(): void {
    this.pause();
  }

  /**
   * The record's scope (the consumer's `recordScope`) has returned: the time it spent after the record (a flush, a
   * subsegment's close) extends the record's last stretch. Read where the scope's caller reads the invocation's time;
   * a reading that shows no time spent since the record's end changes nothing.
   */
  public endAfterScope(): void {
    const now = this.budget.remaining();
    if (this.lastStretch === undefined || now === undefined || !(now < this.lastStretch.endedAt)) return;
    this.budget.observeStretch(this.lastStretch.startedAt - now);
  }
}

/** One invocation's time: made per invocation (several run at once in one environment on Lambda Managed Instances). */
export class InvocationBudget {
  private longestStretch = 0;
  private notStarted: number;
  private readonly remainingOf: (() => number) | undefined;

  /**
   * @param lambdaContext the invocation's context; without `getRemainingTimeInMillis` the time is unbounded here
   * @param records how many records the batch has (none started yet)
   * @param marginMilliseconds kept back for the response
   */
  public constructor(
    lambdaContext: unknown,
    records: number,
    public readonly marginMilliseconds: number,
  ) {
    this.remainingOf = remainingMillisecondsOf(lambdaContext);
    this.notStarted = records;
  }

  /** True when the invocation's remaining time is known (a Lambda context that says it). */
  public get bounded(): boolean {
    return this.remainingOf !== undefined;
  }

  /** The remaining time, or undefined when unknown. */
  public remaining(): number | undefined {
    return this.remainingOf?.();
  }

  /** The longest stretch of work seen in this invocation so far (`E`). */
  public get longestStretchMilliseconds(): number {
    return this.longestStretch;
  }

  /** The batch's records not started yet (`U`). */
  public get recordsNotStarted(): number {
    return this.notStarted;
  }

  /**
   * Starts a record when the remaining time is at least `M + U × E` (`U` counting this record); undefined when not: the
   * record is then returned untouched. Each record is counted as started once, whether it starts or not.
   */
  public startRecord(): RecordClock | undefined {
    const now = this.remaining();
    const units = this.notStarted;
    this.notStarted = Math.max(0, this.notStarted - 1);
    if (now !== undefined && now < this.marginMilliseconds + units * this.longestStretch) return undefined;
    return new RecordClock(this);
  }

  /**
   * Whether {@link InvocationBudget.startRecord} would start the next record now, without counting it: checked before
   * a record's scope is entered, since a scope that is entered spends its own time even on a record it cannot start.
   */
  public mayStartRecord(): boolean {
    const now = this.remaining();
    return now === undefined || now >= this.marginMilliseconds + this.notStarted * this.longestStretch;
  }

  /** Counts a record as started without starting it (a FIFO record skipped after its group failed): no clock. */
  public skipRecord(): undefined {
    this.notStarted = Math.max(0, this.notStarted - 1);
    return undefined;
  }

  /** A clock for work already running outside the batch's starts (a retry called on its own): no start check. */
  public clockOfRunning(): RecordClock {
    return new RecordClock(this);
  }

  /** What a retry needs left after its wait: `M + E + U × E`. */
  public retryNeeds(): number {
    return this.marginMilliseconds + (1 + this.notStarted) * this.longestStretch;
  }

  /** @internal a record's stretch ended after `milliseconds` */
  public observeStretch(milliseconds: number): void {
    if (Number.isFinite(milliseconds) && milliseconds > this.longestStretch) this.longestStretch = milliseconds;
  }
}
