/**
 * One seed, one run, for an app whose handlers read the clocks and wait on the timers besides `Date` and `setTimeout`
 * (the real-time-sources fixture): the producer's event ids carry `performance.now()`, `performance.timeOrigin`,
 * `process.hrtime`, `process.uptime()`, `Intl.DateTimeFormat#format()` without a date, `Date#toLocaleString()` and
 * `process.pid`; Billing bounds its own pre-read with `AbortSignal.timeout(250)` and a 300 ms socket timeout. Before
 * the worker made them virtual, the ids and what followed from them differed between two runs of one seed, the real
 * 250 ms abort beat every held pre-read (all of Billing's events dead-lettered), and the socket timeout left the run
 * waiting 15 minutes without a verdict.
 */
import { describe, expect, test } from 'vitest';
import { differingFields, useFixtureReplay } from './replay-kit';

/** One run of the seed (eight orders: an id from each clock), as `--json` writes it less wall-clock time. */
const run = useFixtureReplay({ fixture: 'test/simulator/fixtures/real-time-sources', tmpPrefix: 'ief-real-time-sources-', seed: 'real-time-sources-1', startTime: Date.UTC(2026, 10, 29) });

describe('replaying a seed of an app reading every clock and bounding its calls with real-time timers', () => {
  test('two runs of one seed give the same result, and the correct app passes', { timeout: 1_800_000 }, async () => {
    const first = await run();
    const billing = first.result.subscribers.find((subscriber) => subscriber.name === 'Billing');
    expect(billing?.deadLettered).toBe(0);
    expect(first.result.violations.map((violation) => violation.kind)).toEqual([]);
    expect(first.result.totalFaults).toBeGreaterThan(0);
    expect(first.result.realTimeEvents.count).toBe(0);
    const second = await run();
    expect(differingFields(JSON.parse(first.json), JSON.parse(second.json)).slice(0, 20)).toEqual([]);
    expect(second.json).toBe(first.json);
  });
});
