/**
 * The one real-time limit left under the seeded scheduler: how long a worker may run without going quiet (an
 * invocation's step) or finish its init. The simulation's clock stands still while a worker runs, so a function's
 * timeout is the scheduler's (virtual, see scheduled-environment.ts); real time only catches a worker that will never
 * go quiet, and that is a problem of the run (a handler that never yields, an init that never ends, a machine far too
 * loaded), not a verdict on the function.
 */

/**
 * How long, in real time, a worker may run one step (or its init) without going quiet before the run stops. Fixed and
 * far above what a loaded machine takes for one step (seconds), whatever the function's timeout.
 */
export const WORKER_STALL_LIMIT_MS = 15 * 60 * 1000;

/** A worker ran longer than {@link WORKER_STALL_LIMIT_MS} without going quiet: the run stops without a verdict. */
export class WorkerStalledError extends Error {
  public constructor(
    /** The function whose worker stalled. */
    public readonly functionKey: string,
    /** Whether it stalled in its init or in an invocation. */
    public readonly phase: 'init' | 'invocation',
    /** The limit it ran past, in ms of real time. */
    public readonly limitMs: number,
  ) {
    super(
      `the worker of function ${functionKey} ran its ${phase} for ${limitMs / 1000} s of real time without going quiet: ` +
        (phase === 'init' ? 'an init that never ends (a top-level await that never settles, a loop)' : 'a handler that never yields (a loop, a child process that never exits)') +
        ', or a machine too loaded to run it. The run stops without a verdict: the simulation stands still while a worker runs, so this is not the function timing out',
    );
    this.name = 'WorkerStalledError';
  }
}
