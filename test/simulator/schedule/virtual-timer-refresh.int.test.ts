/**
 * A replayable worker's timers are virtual (simulator/lambda/worker-bootstrap.ts); `refresh()` on one behaves as
 * Node's: it re-arms a timer that already fired, its delay counted from the worker's virtual now, and does nothing to a
 * cleared one. Code that drives its timeouts from one timer it refreshes (undici's fast-timer tick) otherwise saw that
 * timer fire once and never again.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { assetDirectory, functionModel, runner } from '../lambda/handler-kit';

const HANDLER = `exports.handler = (event, context) => new Promise((resolve) => {
  const cleared = setTimeout(() => resolve('a cleared timer fired'), 500);
  clearTimeout(cleared);
  cleared.refresh();
  let fired = 0;
  const timer = setTimeout(() => {
    fired += 1;
    if (fired < 3) timer.refresh();
    else resolve({ fired, elapsedMs: 10000 - context.getRemainingTimeInMillis() });
  }, 1000);
});`;

const asset = assetDirectory({ 'index.js': HANDLER });
afterAll(() => asset.remove());

describe('a virtual timer refreshed', () => {
  test('after it fired fires again a delay later; refreshed after it was cleared, it stays cleared', async () => {
    const scheduler = new SeededScheduler('refresh-1');
    const run = runner(functionModel(asset.directory, { timeoutSeconds: 10 }), { scheduler, clock: VirtualClock.frozen(Date.parse('2026-01-01T00:00:00.000Z')) });
    try {
      expect(await run.invoke({}, 'invocation-1')).toEqual({ kind: 'returned', response: { fired: 3, elapsedMs: 3000 } });
      expect(scheduler.figures().timers).toBe(3);
    } finally {
      await run.stop();
    }
  });
});
