/**
 * Which faults hit what, decided by a seed. A decision is a pure function of the seed and of what it is about (a
 * subscriber, a message, its receive count, the n-th request of an invocation), never of the order things happen in,
 * so a seed replays the same faults on the same messages even when timing differs.
 */
import { createHash } from 'node:crypto';

/** The fault rates of a run, each a probability in [0, 1]. */
export interface FaultRates {
  /** An SNS → SQS delivery arrives twice (a second SQS message), and a received message is also received by another
   * poller at once (the same SQS message, concurrently). Each is decided separately with this rate. */
  readonly duplicate: number;
  /** A DynamoDB write is applied, but its response never reaches the caller (the connection drops). */
  readonly lostResponse: number;
  /** A DynamoDB request is refused with a throttling error before it is applied. */
  readonly throttle: number;
  /** The consumer process dies at a DynamoDB request: half the time before sending it, half after DynamoDB applied it. */
  readonly crash: number;
  /**
   * An attempt of the outbox relay (the pipe) to publish a stream record to its topic fails with a transient target
   * error, so the pipe retries it under its retry policy (`MaximumRetryAttempts`, `MaximumRecordAgeInSeconds`) and
   * dead-letters it when the policy runs out. Decided per attempt. @default 0
   */
  readonly relayFailure?: number;
  /**
   * An attempt of SNS to deliver a message to a subscription's SQS queue fails, so SNS retries it under its delivery
   * policy for SQS endpoints and puts it on the subscription's dead-letter queue when the policy runs out. Decided per
   * attempt. @default 0
   */
  readonly snsDeliveryFailure?: number;
  /**
   * An object request of a function to S3 (the claim-check's PutObject and GetObject) is refused with `503 SlowDown`
   * before S3 sees it; the SDK retries it. Decided per attempt. A PutObject's reply is also lost (applied, the
   * connection dropped) with the `lostResponse` rate. @default 0
   */
  readonly s3Failure?: number;
  /** An object request's reply comes slowly, in small pieces (simulator/aws/s3-endpoint.ts). Decided per attempt. @default 0 */
  readonly s3Slow?: number;
  /**
   * An object is gone when it is first read after it was written (deleted by a hand other than the flow's): every read
   * of it fails with `NoSuchKey`. Decided once per object. @default 0
   */
  readonly s3ObjectMissing?: number;
  /**
   * An object is altered when it is first read after it was written (overwritten with one byte changed, the same size):
   * its digest no longer matches its envelope's. Decided once per object. @default 0
   */
  readonly s3ObjectAltered?: number;
}

/** The kinds of decision, named in the figures of a run. */
export type FaultKind =
  | 'duplicate-delivery'
  | 'concurrent-receive'
  | 'lost-delete'
  | 'lost-response'
  | 'throttle'
  | 'crash'
  | 'crash-after-commit'
  /** one failed attempt of the relay to publish a stream record */
  | 'relay-publish-failure'
  /** one failed attempt of SNS to deliver a message to a subscription's queue */
  | 'sns-delivery-failure'
  /** a write refused with a transaction conflict, steered to a subscriber that had met none (fault-steering.ts) */
  | 'transaction-conflict'
  /** an S3 object request refused with 503 SlowDown */
  | 's3-request-failure'
  /** an S3 object request answered slowly */
  | 's3-slow-reply'
  /** an S3 PutObject applied whose reply was lost */
  | 's3-lost-response'
  /** an object deleted before its first read */
  | 's3-object-missing'
  /** an object overwritten with one byte changed before its first read */
  | 's3-object-altered';

/** No faults at all. */
export const NO_FAULTS: Required<FaultRates> = {
  duplicate: 0,
  lostResponse: 0,
  throttle: 0,
  crash: 0,
  relayFailure: 0,
  snsDeliveryFailure: 0,
  s3Failure: 0,
  s3Slow: 0,
  s3ObjectMissing: 0,
  s3ObjectAltered: 0,
};

/** Seeded, order-independent fault decisions. */
export class FaultPlan {
  private currentRates: FaultRates;
  private faultsStopped = false;

  public constructor(
    public readonly seed: string,
    rates: FaultRates,
  ) {
    for (const [name, rate] of Object.entries(rates)) {
      if (!(typeof rate === 'number' && rate >= 0 && rate <= 1)) throw new RangeError(`fault rate '${name}' must be between 0 and 1, got ${String(rate)}`);
    }
    this.currentRates = rates;
  }

  /** The rates faults are decided with: the run's, or {@link NO_FAULTS} once {@link stopFaults} was called. */
  public get rates(): FaultRates {
    return this.currentRates;
  }

  /** Whether {@link stopFaults} was called. */
  public get stopped(): boolean {
    return this.faultsStopped;
  }

  /**
   * From now on no fault happens: every rate reads 0, so `happens` is false and `failedAttempts` 0. A served run's
   * functions go on consuming without the run's faults (`simulate --serve`: an operator's drill sees what the app does).
   */
  public stopFaults(): void {
    this.currentRates = NO_FAULTS;
    this.faultsStopped = true;
  }

  /** A number in [0, 1) that depends only on the seed and `key`. */
  public fraction(...key: readonly (string | number)[]): number {
    const digest = createHash('sha256').update(JSON.stringify([this.seed, ...key])).digest();
    return digest.readUIntBE(0, 6) / 2 ** 48;
  }

  /**
   * How many attempts in a row fail before one succeeds, when each attempt fails with probability `rate`
   * independently: a geometric draw from one fraction of the seed and `key` (so a thousand retries cost one hash).
   * 0 when `rate` is 0; `Infinity` when it is 1 (no attempt ever succeeds).
   */
  public failedAttempts(rate: number, kind: FaultKind, ...key: readonly (string | number)[]): number {
    if (rate <= 0) return 0;
    if (rate >= 1) return Number.POSITIVE_INFINITY;
    // P(failures >= n) = rate^n, so failures = floor(ln(u) / ln(rate)) for u uniform in (0, 1]
    const u = 1 - this.fraction(kind, ...key);
    return Math.floor(Math.log(u) / Math.log(rate));
  }

  /** Whether the fault happens: `fraction(kind, ...key) < rate`. */
  public happens(rate: number, kind: FaultKind, ...key: readonly (string | number)[]): boolean {
    return rate > 0 && this.fraction(kind, ...key) < rate;
  }
}
