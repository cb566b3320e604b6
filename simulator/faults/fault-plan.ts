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
}

/** The kinds of decision, named in the figures of a run. */
export type FaultKind = 'duplicate-delivery' | 'concurrent-receive' | 'lost-delete' | 'lost-response' | 'throttle' | 'crash' | 'crash-after-commit';

/** No faults at all. */
export const NO_FAULTS: FaultRates = { duplicate: 0, lostResponse: 0, throttle: 0, crash: 0 };

/** Seeded, order-independent fault decisions. */
export class FaultPlan {
  public constructor(
    public readonly seed: string,
    public readonly rates: FaultRates,
  ) {
    for (const [name, rate] of Object.entries(rates)) {
      if (!(typeof rate === 'number' && rate >= 0 && rate <= 1)) throw new RangeError(`fault rate '${name}' must be between 0 and 1, got ${String(rate)}`);
    }
  }

  /** A number in [0, 1) that depends only on the seed and `key`. */
  public fraction(...key: readonly (string | number)[]): number {
    const digest = createHash('sha256').update(JSON.stringify([this.seed, ...key])).digest();
    return digest.readUIntBE(0, 6) / 2 ** 48;
  }

  /** Whether the fault happens: `fraction(kind, ...key) < rate`. */
  public happens(rate: number, kind: FaultKind, ...key: readonly (string | number)[]): boolean {
    return rate > 0 && this.fraction(kind, ...key) < rate;
  }
}
