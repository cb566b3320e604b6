/**
 * Under the seeded scheduler no real-time limit decides how an invocation or an init ends: a function's timeout is the
 * scheduler's (virtual), and real time only stops a worker that has stopped going quiet (a handler that never yields,
 * an init that never ends), as a problem of the run, not as the function timing out.
 */
import { afterAll, afterEach, describe, expect, test, vi } from 'vitest';
import { ScheduledEnvironment } from '../../../simulator/schedule/scheduled-environment';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { WORKER_STALL_LIMIT_MS, WorkerStalledError } from '../../../simulator/schedule/worker-stall';
import { assetDirectory, functionModel, runner } from '../lambda/handler-kit';

const RETURNS = `exports.handler = async () => 'returned';`;

/** A handler that never yields its thread (a synchronous loop): its worker never goes quiet. */
const NEVER_YIELDS = `exports.handler = async () => { for (;;) {} };`;

/** An ES module whose init awaits a promise that never settles: its init never ends. */
const INIT_NEVER_ENDS = `await new Promise(() => undefined);\nexport const handler = async () => 'never';`;

const assets: { remove(): void }[] = [];
afterAll(() => {
  for (const asset of assets) asset.remove();
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

function asset(files: Readonly<Record<string, string>>): string {
  const made = assetDirectory(files);
  assets.push(made);
  return made.directory;
}

describe('real time under the seeded scheduler', () => {
  test('an invocation of a function with a 1 s timeout that waits more than 20 s of real time for its turn is not timed out', async () => {
    // only the main thread's setTimeout is faked (the scheduler looks with setImmediate; the worker has its own timers)
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const scheduler = new SeededScheduler('waits-for-its-turn');
    let askedToStart!: () => void;
    const waitingForItsTurn = new Promise<void>((resolve) => {
      askedToStart = resolve;
    });
    const requestStart = ScheduledEnvironment.prototype.requestStart;
    vi.spyOn(ScheduledEnvironment.prototype, 'requestStart').mockImplementation(function (this: ScheduledEnvironment, send) {
      requestStart.call(this, send);
      askedToStart();
    });
    const run = runner(functionModel(asset({ 'index.js': RETURNS }), { timeoutSeconds: 1 }), { scheduler });
    try {
      // another part of the run holds the scheduler: the invocation waits for its start step
      const otherWork = scheduler.holdStart();
      otherWork.hold();
      const outcome = run.invoke({}, 'waits');
      await waitingForItsTurn;
      await vi.advanceTimersByTimeAsync(25_000);
      otherWork.release();
      expect(await outcome).toEqual({ kind: 'returned', response: 'returned' });
    } finally {
      vi.useRealTimers();
      await run.stop();
    }
  });

  test('a handler that never yields stops the run as a stalled worker after the fixed limit, not as a timed-out invocation', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    // the watchdog is armed at the scheduler's first look that finds the invocation running without going quiet
    let armed!: () => void;
    const watching = new Promise<void>((resolve) => {
      armed = resolve;
    });
    const watchStall = ScheduledEnvironment.prototype.watchStall;
    vi.spyOn(ScheduledEnvironment.prototype, 'watchStall').mockImplementation(function (this: ScheduledEnvironment) {
      watchStall.call(this);
      if (this.blocking) armed();
    });
    const run = runner(functionModel(asset({ 'index.js': NEVER_YIELDS }), { timeoutSeconds: 1 }), { scheduler: new SeededScheduler('never-yields') });
    try {
      let settled = false;
      const outcome = run.invoke({}, 'loops').then(
        (returned) => returned,
        (thrown: unknown) => thrown,
      );
      void outcome.finally(() => {
        settled = true;
      });
      await watching;
      // far past the function's timeout (20 times it was the old limit), short of the fixed limit: it goes on
      await vi.advanceTimersByTimeAsync(WORKER_STALL_LIMIT_MS - 1);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      const error = await outcome;
      expect(error).toBeInstanceOf(WorkerStalledError);
      expect(error).toMatchObject({ functionKey: 'Stack/EchoFunction', phase: 'invocation', limitMs: WORKER_STALL_LIMIT_MS });
    } finally {
      vi.useRealTimers();
      await run.stop();
    }
  });

  test('an init that never ends stops the run as a stalled worker after the fixed limit, not as an init timeout', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const run = runner(functionModel(asset({ 'index.mjs': INIT_NEVER_ENDS })), { scheduler: new SeededScheduler('init-never-ends') });
    try {
      let settled = false;
      const outcome = run.invoke({}, 'never-initialized').then(
        (returned) => returned,
        (thrown: unknown) => thrown,
      );
      void outcome.finally(() => {
        settled = true;
      });
      // the invocation waits for the init, under its limit's timer
      while (vi.getTimerCount() === 0) await new Promise((resolve) => setImmediate(resolve));
      // Lambda's 10-second init limit, 20 times over, was the old limit: the init goes on
      await vi.advanceTimersByTimeAsync(200_000);
      expect(settled).toBe(false);
      await vi.advanceTimersByTimeAsync(WORKER_STALL_LIMIT_MS);
      const error = await outcome;
      expect(error).toBeInstanceOf(WorkerStalledError);
      expect(error).toMatchObject({ functionKey: 'Stack/EchoFunction', phase: 'init', limitMs: WORKER_STALL_LIMIT_MS });
    } finally {
      vi.useRealTimers();
      await run.stop();
    }
  });
});
