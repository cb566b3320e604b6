/**
 * When a batch reads its known records first (the batch read, known-records.ts): always, never, or decided per batch
 * from the redeliveries this execution environment has seen. The read is one round trip before any transaction and
 * half a read unit per record; it pays back a redelivery's handler run and its cancelled transaction (2 write units per
 * item), so it is worth its round trip only while redeliveries are common. Whatever is decided, the conditional write
 * stays the arbiter: a skipped read never makes a message count as applied, it only leaves a redelivery to its write.
 */

/**
 * How a consumer decides on the batch read: `true` every batch, `false` never, `'adaptive'` per batch, from the share of
 * redeliveries among its recent records (an {@link AdaptiveBatchRead} with the default weight and threshold), or a
 * policy object of one's own (one per consumer: it keeps what the consumer has seen).
 */
export type BatchReadSetting = boolean | 'adaptive' | BatchReadPolicy;

/**
 * The share of records that are redeliveries above which the adaptive batch read reads: 1 in 40. At on-demand prices
 * ($0.25 per million read and $1.25 per million write request units) the read's 0.5 RCU per record costs what 1 in 40
 * records' cancelled transactions of 2 items cost (4 WCU each); below that share it costs more than it saves, and a
 * round trip per batch on top.
 */
export const ADAPTIVE_READ_THRESHOLD = 1 / 40;

/**
 * How much one record weighs in the estimate: each record moves it by 2 % towards 1 (a redelivery) or 0, so the
 * estimate follows the last hundred or so records, and one redelivery alone among them does not turn the read on.
 */
export const ADAPTIVE_READ_RECORD_WEIGHT = 0.02;

/** What a batch handler asks of a batch read policy (see {@link AdaptiveBatchRead}). */
export interface BatchReadPolicy {
  /** Whether the batch about to run reads first. */
  shouldRead(): boolean;
  /**
   * Tells the policy about a finished batch: how many records it had, and how many of them were redeliveries a batch
   * read would have answered (recognised as applied by the read or by their own write; a copy of an event recognised
   * from an earlier record of the same batch does not count: the read cannot know it).
   */
  observe(records: number, redeliveries: number): void;
  /**
   * Whether a batch that reads waits for the read before any record starts (`batchRead: true`: every redelivery
   * answered by the read, one round trip before the first commit), rather than sending it beside the first commits
   * for the records behind another in their lane only (create-consumer.ts). @default false - beside the first commits
   */
  readonly readsBeforeRecords?: boolean;
}

/** Options of {@link AdaptiveBatchRead}. */
export interface AdaptiveBatchReadOptions {
  /**
   * How much one record moves the estimate, above 0 and below 1: a larger weight follows fewer recent records.
   * @default {@link ADAPTIVE_READ_RECORD_WEIGHT} (0.02: about the last hundred records)
   */
  readonly recordWeight?: number;
  /**
   * The share of redeliveries among recent records above which a batch reads, from 0 to 1.
   * @default {@link ADAPTIVE_READ_THRESHOLD} (1 in 40)
   */
  readonly threshold?: number;
}

/**
 * The adaptive batch read: an estimate of the share of redeliveries among the records this environment processed
 * recently (exponentially weighted, {@link ADAPTIVE_READ_RECORD_WEIGHT} per record), and a read whenever it is above
 * {@link ADAPTIVE_READ_THRESHOLD}. It starts at 0 (a new environment does not read until it has seen redeliveries), and
 * it learns from redeliveries whether or not the batch read found them: a skipped read leaves a redelivery to its
 * write, whose cancelled condition counts it as well. One per consumer (execution environment), shared by its
 * invocations.
 */
export class AdaptiveBatchRead implements BatchReadPolicy {
  private estimate = 0;
  private readonly recordWeight: number;
  private readonly threshold: number;

  /** @throws RangeError for a weight or threshold out of its range */
  public constructor(options: AdaptiveBatchReadOptions = {}) {
    this.recordWeight = options.recordWeight ?? ADAPTIVE_READ_RECORD_WEIGHT;
    this.threshold = options.threshold ?? ADAPTIVE_READ_THRESHOLD;
    if (!(this.recordWeight > 0 && this.recordWeight < 1)) throw new RangeError(`recordWeight must be above 0 and below 1, but was ${this.recordWeight}`);
    if (!(this.threshold >= 0 && this.threshold <= 1)) throw new RangeError(`threshold must be from 0 to 1, but was ${this.threshold}`);
  }

  /** The estimated share of redeliveries among recent records, 0 to 1. */
  public get redeliveryShare(): number {
    return this.estimate;
  }

  public shouldRead(): boolean {
    return this.estimate > this.threshold;
  }

  public observe(records: number, redeliveries: number): void {
    if (records <= 0) return;
    const kept = (1 - this.recordWeight) ** records;
    this.estimate = this.estimate * kept + (Math.min(redeliveries, records) / records) * (1 - kept);
  }
}

/** Every batch reads (`batchRead: true`); `false` has no policy: the consumer then has nothing to read from. */
class FixedBatchRead implements BatchReadPolicy {
  public readonly readsBeforeRecords = true;

  public constructor(private readonly read: boolean) {}

  public shouldRead(): boolean {
    return this.read;
  }

  public observe(): void {}
}

/** The policy of a setting: a new {@link AdaptiveBatchRead} for `'adaptive'`, a fixed one for `true`, the object given. */
export function batchReadPolicy(setting: Exclude<BatchReadSetting, false>): BatchReadPolicy {
  if (setting === 'adaptive') return new AdaptiveBatchRead();
  return setting === true ? new FixedBatchRead(true) : setting;
}
