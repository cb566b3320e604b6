/**
 * A request the worker closes before its answer (its own socket timeout, an abort) ends its ticket, and the scheduler
 * counts it as answered: the worker's report (one request finished) then says all the environment knows, so the run
 * goes on. Before, the environment waited for an answer the worker had stopped waiting for, until the 15-minute
 * stalled-worker watchdog stopped the run without a verdict.
 */
import { expect, test } from 'vitest';
import type { QuietReport } from '../../../simulator/lambda/worker-protocol';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';

/** The report of a worker that sent `requests`, `finished` of them done, and waits on `timers` virtual timers. */
function quietWith(requests: number, finished: number, timers = 0): QuietReport {
  return { type: 'quiet', invocations: 1, started: requests, scheduledStarted: requests, finished, scheduledFinished: finished, timersFired: 0, timers, nextTimerDue: timers === 0 ? -1 : 100 };
}

const turns = async (count = 20): Promise<void> => {
  for (let turn = 0; turn < count; turn += 1) await new Promise((resolve) => setImmediate(resolve));
};

test.each(['held', 'forwarded'])('a request the worker closed while %s counts as answered: the run goes on (its retry timer fires)', async (when) => {
  const scheduler = new SeededScheduler('closed-requests');
  const environment = scheduler.environment('A#1');
  let timersFired = 0;
  environment.attach({ fireTimer: () => (timersFired += 1), timeOut: () => undefined, stalled: () => undefined }, 60_000);
  environment.invocationBegan();
  const forwarded: string[] = [];
  const first = environment.arrive('GetItem', Buffer.from('{"request":"first"}'));
  void first.forwardTurn.then(() => forwarded.push('first'));
  // the worker closes the request before the quiet report that shows it waiting (held), or after its forward
  // (the SDK then waits on its retry's virtual timer)
  if (when === 'held') first.ended();
  environment.quiet(when === 'held' ? quietWith(1, 1, 1) : quietWith(1, 0));
  await turns();
  if (when === 'forwarded') {
    expect(forwarded).toEqual(['first']);
    // the proxy's response closed with the worker's socket; the worker reports the request finished
    first.ended();
    environment.quiet(quietWith(1, 1, 1));
    await turns();
  }
  expect(timersFired).toBe(1);
});
