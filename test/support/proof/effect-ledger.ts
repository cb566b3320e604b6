/**
 * The external effect of the lease and multi-step proofs (an email, a payment: anything outside DynamoDB), with the
 * failures that make its outcome unknown. Not a test file.
 */
import { RetryableError } from '../../../lambda/errors';
import { CrashInjector, SimulatedCrash } from './crash-injector';

/** How often an effect fails, as thresholds of one seeded roll per call: a roll below `rejected` is rejected, and so on. */
export interface EffectFailureRates {
  /** Rejected before it took effect, with a RetryableError: a known outcome. */
  readonly rejected: number;
  /** Failed before the request left, with an error of unknown outcome: not applied. */
  readonly failedBefore: number;
  /** Failed after it was applied, with an error of unknown outcome: applied. */
  readonly failedAfter: number;
}

/**
 * A ledger of how often each effect was applied (the truth a proof and its operator check against), and the effect
 * itself: {@link apply} records it, unless the invocation crashed, between seeded failures and crashes. A crash plan
 * at `in-effect` makes the applied effect throw; at `after-effect` the invocation dies once the effect returned.
 */
export class EffectLedger {
  private readonly applied = new Map<string, number>();
  private failing = true;

  public constructor(
    private readonly injector: CrashInjector,
    private readonly random: () => number,
    private readonly rates: EffectFailureRates,
  ) {}

  /** Applies effect `key` (e.g. an event id, or `<eventId>#<step>`), or fails or crashes trying. */
  public apply(key: string): void {
    this.injector.throwIfCrashed();
    const roll = this.failing ? this.random() : 1;
    if (roll < this.rates.rejected) throw new RetryableError('rejected before it took effect');
    if (roll < this.rates.failedBefore) throw new Error('timed out before the request left');
    this.applied.set(key, this.count(key) + 1);
    if (roll < this.rates.failedAfter) throw new Error('timed out after the request was sent');
    if (this.injector.reach('in-effect')) throw new SimulatedCrash();
    this.injector.reach('after-effect');
  }

  /** How often effect `key` was applied. */
  public count(key: string): number {
    return this.applied.get(key) ?? 0;
  }

  /** From now on the effect never fails (the operator's redrive runs in a healthy world). */
  public heal(): void {
    this.failing = false;
  }
}
