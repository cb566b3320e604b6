/** A clock the test moves by hand, for the lease modes and their operator. Not a test file. */

/** A clock the test moves by hand, e.g. past a lease; `now` is what the runtime's `now` option takes. */
export class FakeClock {
  private epochMilliseconds: number;

  public constructor(start = Date.parse('2024-05-01T12:00:00.000Z')) {
    this.epochMilliseconds = start;
  }

  /** The current time. */
  public readonly now = (): Date => new Date(this.epochMilliseconds);

  /** Moves the clock forward by `seconds`. */
  public advanceSeconds(seconds: number): void {
    this.epochMilliseconds += seconds * 1000;
  }
}
