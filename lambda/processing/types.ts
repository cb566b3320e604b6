/** The public types of lease and multi-step processing. Types only. */
import type { LeaseConsumerConfig } from '../config';
import type { ConsumerOptions } from '../consumer/create-consumer';
import type { HandlerContext } from '../consumer/process-message';
import type { EventEnvelope } from '../envelope';

/** What a lease-mode handler gets besides the envelope. */
export interface LeaseHandlerContext extends HandlerContext {
  /**
   * A key that is the same on every delivery of this message, `<subscriber>#<eventId>` (multi-step:
   * `<subscriber>#<eventId>#<step>`). Pass it to the remote side as its idempotency key where it takes one.
   */
  readonly idempotencyKey: string;
  /** When this delivery's lease ends, in epoch milliseconds. Finish (or give up) before then. */
  readonly leaseExpiresAtEpochMilliseconds: number;
  /** How often the effect (or step) was started, this start included: 1 the first time. */
  readonly attempt: number;
}

/** What a step gets besides the envelope. */
export interface StepContext extends LeaseHandlerContext {
  /** The step's name. */
  readonly step: string;
  /** What earlier steps stored (their outputs, merged), e.g. `{ createdInvoiceId: 'abc' }`. */
  readonly stepContext: Readonly<Record<string, unknown>>;
}

/** What a step stores for later steps: a plain JSON object merged into the context, or nothing. */
export type StepOutput = Record<string, unknown> | void;

/** One step of a multi-step consumer. */
export interface ProcessingStep<TData> {
  /**
   * Unique among the steps, 1 to 64 of `A-Z a-z 0-9 _ . -`, and not a name of `Object.prototype` (`__proto__`,
   * `constructor`, `toString`, ...). Persisted: a message in flight keeps the step list it was claimed with, so
   * renaming (or removing) a step blocks the messages in flight that still have to run it, for an operator.
   */
  readonly name: string;
  /**
   * The step's effect. Return what later steps need (merged into `context.stepContext`). Throw `RetryableError` when
   * it failed without taking effect, `PermanentError` when retrying cannot help; any other throw means "outcome
   * unknown" and blocks the message for an operator. Each run gets a fresh event, parsed again from the message: a
   * change a step makes to its event in place does not reach the next step (a redelivery that resumes at the next step
   * would not see it either); pass what later steps need through the returned context.
   */
  readonly run: (envelope: EventEnvelope<TData>, context: StepContext) => Promise<StepOutput> | StepOutput;
}

/**
 * What to do when a delivery finds a record whose holder's lease expired in the middle of a step (the holder crashed
 * or stalled, so the step may or may not have taken effect):
 * - `block`: block the message for an operator (the step is never run twice blindly);
 * - `retry`: take over and run the step again. Only for effects that are idempotent on the remote side, e.g. a call
 *   that passes `context.idempotencyKey` to an API that deduplicates on it.
 */
export type ExpiredLeasePolicy = 'block' | 'retry';

/**
 * How a failed effect is treated:
 * - `retry`: it did not take effect; the step becomes TRY_AGAIN, the lease is released and the message retried;
 * - `permanent`: it did not take effect and retrying cannot help; released as for `retry`, then dead-lettered;
 * - `unknown`: it may have taken effect; the message is blocked for an operator.
 */
export type ErrorClassification = 'retry' | 'unknown' | 'permanent';

/** Classifies an effect's error. */
export type ErrorClassifier = (error: unknown) => ErrorClassification;

/** Options shared by {@link LeaseConsumerOptions} and {@link MultiStepConsumerOptions}. */
export interface LeaseProcessingOptions<TData> extends ConsumerOptions<TData> {
  /** @default read from the environment once, at creation (`loadLeaseConsumerConfig`); throws `ConfigurationError` if incomplete */
  readonly config?: LeaseConsumerConfig;
  /** @default 'block': a step whose holder's lease expired mid-step blocks the message for an operator */
  readonly onExpiredLease?: ExpiredLeasePolicy;
  /** @default `RetryableError` → retry; the `PermanentError` family → permanent; anything else → unknown */
  readonly classifyError?: ErrorClassifier;
  /**
   * How far apart, in whole seconds, the clocks of two Lambda instances may be. A lease counts as live until its expiry
   * plus this allowance, so a delivery on an instance whose clock is ahead neither takes over (`onExpiredLease:
   * 'retry'`) nor blocks (`'block'`) a record whose holder is still within its lease; the takeover's and the block's
   * DynamoDB condition carry the same check. A larger allowance delays the takeover of a crashed holder's record by as
   * much (the message is retried meanwhile).
   *
   * @default 5 seconds (`DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS`)
   */
  readonly clockSkewAllowanceSeconds?: number;
  /** Creates the random token that identifies a delivery as the record's owner. @default `crypto.randomUUID()` */
  readonly newOwnerToken?: () => string;
  /**
   * Read the processing records of the batch's event ids in one BatchGetItem (eventually consistent) before any claim,
   * so a redelivery of a COMPLETED message is acknowledged without a write. Without it the claim itself recognises the
   * redelivery (its conditional Put fails and returns the COMPLETED record): the effect does not run again either way.
   * The read costs one more round trip on every batch and half a read unit per record (AWS charges a key with no item
   * too); it saves the failed claim's write unit per redelivery, so it pays only when redeliveries are frequent (above
   * about 1 record in 10 at on-demand prices) and latency matters less than write units.
   *
   * @default false - the claim answers redeliveries
   */
  readonly batchRead?: boolean;
}

/** Options of `createLeaseConsumer`. */
export interface LeaseConsumerOptions<TData> extends LeaseProcessingOptions<TData> {
  /**
   * The effect (one call outside DynamoDB: HTTP, email). Runs under a lease, at most once per message unless its
   * outcome was unknown (then the message is blocked instead of run again), or it threw `RetryableError` (then the next
   * delivery runs it again). It gets a fresh event, parsed from the message.
   */
  readonly handle: (envelope: EventEnvelope<TData>, context: LeaseHandlerContext) => Promise<void> | void;
}

/** Options of `createMultiStepConsumer`. */
export interface MultiStepConsumerOptions<TData> extends LeaseProcessingOptions<TData> {
  /** The steps, run in this order; a redelivery skips the ones that succeeded. 1 to 20 steps. */
  readonly steps: readonly ProcessingStep<TData>[];
}
