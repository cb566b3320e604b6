/**
 * The simulation's clock: real time plus an offset that only grows. The simulator moves it forward to make waits pass
 * at once (a 180-second visibility timeout, a 30-second lease) instead of sleeping through them.
 *
 * The offset lives in a `SharedArrayBuffer`, so the Lambda workers read the same time as the simulator: their `Date`
 * is replaced by one built on {@link VirtualClock.fromBuffer} before the function's code loads.
 */
export class VirtualClock {
  /** Reads the clock of a buffer made by another thread's {@link VirtualClock}. */
  public static fromBuffer(buffer: SharedArrayBuffer, realNow: () => number = Date.now): VirtualClock {
    return new VirtualClock(buffer, realNow);
  }

  /** Share this with workers (it is transferable as is). */
  public readonly buffer: SharedArrayBuffer;
  private readonly offset: BigInt64Array;

  public constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(8), private readonly realNow: () => number = Date.now) {
    this.buffer = buffer;
    this.offset = new BigInt64Array(buffer);
  }

  /** Milliseconds since the epoch, simulated. */
  public now(): number {
    return this.realNow() + Number(Atomics.load(this.offset, 0));
  }

  /** How far simulated time is ahead of real time, in milliseconds. */
  public offsetMs(): number {
    return Number(Atomics.load(this.offset, 0));
  }

  /** Moves the clock forward by `ms` (negative or non-finite values are refused: time never goes back). */
  public advanceBy(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`the clock only moves forward: advanceBy(${ms})`);
    Atomics.add(this.offset, 0, BigInt(Math.ceil(ms)));
  }

  /** Moves the clock forward to `epochMs`, if it is not already there. */
  public advanceTo(epochMs: number): void {
    const ahead = epochMs - this.now();
    if (ahead > 0) this.advanceBy(ahead);
  }
}
