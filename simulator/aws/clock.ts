/**
 * The simulation's clock. It only moves forward, and the simulator moves it to make waits pass at once (a 180-second
 * visibility timeout, a 30-second lease) instead of sleeping through them. Two kinds:
 * - running: real time plus an offset (what a component tested alone usually wants);
 * - frozen ({@link VirtualClock.frozen}): the time it was frozen at plus the offset, so time moves ONLY when the
 *   simulator moves it. A run uses this: what is visible when, and what a lease or a TTL compares, then depends on
 *   the run's own steps and not on how fast this machine is, which makes a seeded run replayable.
 *
 * The state lives in a `SharedArrayBuffer` (`[offset ms, frozen-at ms or 0]`), so the Lambda workers read the same
 * time: their `Date` is replaced by one that computes {@link VirtualClock.now} the same way before the function's code
 * loads (see simulator/lambda/worker-bootstrap.ts).
 */
export class VirtualClock {
  /** Reads the clock of a buffer made by another thread's {@link VirtualClock}. */
  public static fromBuffer(buffer: SharedArrayBuffer, realNow: () => number = Date.now): VirtualClock {
    return new VirtualClock(buffer, realNow);
  }

  /** A clock standing still at `at` (default: now) until it is advanced. */
  public static frozen(at: number = Date.now()): VirtualClock {
    const clock = new VirtualClock();
    Atomics.store(clock.state, FROZEN_AT, BigInt(Math.floor(at)));
    return clock;
  }

  /** Share this with workers (it is transferable as is). */
  public readonly buffer: SharedArrayBuffer;
  private readonly state: BigInt64Array;

  public constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(CLOCK_BUFFER_BYTES), private readonly realNow: () => number = Date.now) {
    if (buffer.byteLength < CLOCK_BUFFER_BYTES) throw new RangeError(`a clock buffer needs ${CLOCK_BUFFER_BYTES} bytes, got ${buffer.byteLength}`);
    this.buffer = buffer;
    this.state = new BigInt64Array(buffer);
  }

  /** Milliseconds since the epoch, simulated. */
  public now(): number {
    const frozenAt = Number(Atomics.load(this.state, FROZEN_AT));
    return (frozenAt === 0 ? this.realNow() : frozenAt) + Number(Atomics.load(this.state, OFFSET));
  }

  /** How far the clock has been moved forward, in milliseconds. */
  public offsetMs(): number {
    return Number(Atomics.load(this.state, OFFSET));
  }

  /** Moves the clock forward by `ms` (negative or non-finite values are refused: time never goes back). */
  public advanceBy(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`the clock only moves forward: advanceBy(${ms})`);
    Atomics.add(this.state, OFFSET, BigInt(Math.ceil(ms)));
  }

  /**
   * From now on the clock moves with real time, from where it stands (a frozen clock is no longer frozen; a running one
   * is unchanged). For after a run, when its services serve an operator: a message hidden for 120 s reappears 120 s
   * later, and a message move task moves its messages as time passes.
   */
  public runWithRealTime(): void {
    const now = this.now();
    Atomics.store(this.state, FROZEN_AT, 0n);
    Atomics.store(this.state, OFFSET, BigInt(Math.ceil(now - this.realNow())));
  }

  /** Moves the clock forward to `epochMs`, if it is not already there. */
  public advanceTo(epochMs: number): void {
    const ahead = epochMs - this.now();
    if (ahead > 0) this.advanceBy(ahead);
  }
}

/** Size of a clock's shared state: two 64-bit integers. */
export const CLOCK_BUFFER_BYTES = 16;
/** Index of the offset in the shared state. */
export const OFFSET = 0;
/** Index of the frozen-at time (0 when the clock runs with real time) in the shared state. */
export const FROZEN_AT = 1;
