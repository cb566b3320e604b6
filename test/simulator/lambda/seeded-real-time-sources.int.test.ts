/**
 * Under the run's seeded scheduler every clock a handler reads is the simulation's: `performance.now()` and
 * `performance.timeOrigin`, `performance.mark()`'s `startTime` and `performance.measure()`'s end, `process.hrtime`
 * (and `.bigint`), `process.uptime()`, `os.uptime()` and `Intl.DateTimeFormat#format()` /
 * `formatToParts()` without a date read the virtual clock, as `Date` does; and every timer a handler can wait on is
 * virtual: `timers/promises`' `setTimeout` (with its `signal`), `setInterval` and `scheduler.wait`, and
 * `AbortSignal.timeout`; and a socket timeout on a connection to the simulator's endpoints never fires while the scheduler
 * holds the request. Two runs of one seed read the same values, and a wait on any of them moves no real time.
 */
import { afterAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { describeFailure } from '../../../simulator/observation/observer';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { assetDirectory, functionModel, runner } from './handler-kit';

const START = Date.parse('2026-11-29T00:00:00Z');

/** The process id the workers of the test function see in a run of `seed`. */
function runPid(seed: string): number {
  return new SeededScheduler(seed).workerPid('Stack/EchoFunction');
}

const HANDLER = `
const tp = require('node:timers/promises');
const timers = require('node:timers');
const utc = { timeZone: 'UTC', dateStyle: 'short', timeStyle: 'medium' };
const abortedBy = (signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve('aborted: ' + signal.reason.name)));
exports.handler = async (event) => {
  if (event.probe === 'clocks') {
    const before = performance.now();
    const hrBefore = process.hrtime();
    const markBefore = performance.mark('before').startTime;
    await tp.setTimeout(1500);
    return {
      markBefore: markBefore - before,
      measured: performance.measure('waited', 'before').duration,
      measuredOptions: performance.measure('waited again', { start: 'before' }).duration,
      markAfter: performance.mark('after').startTime,
      osUptime: require('node:os').uptime(),
      dateNow: Date.now(),
      timeOrigin: performance.timeOrigin,
      performanceNow: performance.now(),
      waited: performance.now() - before,
      hrtimeSince: process.hrtime(hrBefore),
      hrtime: process.hrtime(),
      hrtimeBigint: String(process.hrtime.bigint()),
      uptime: process.uptime(),
      intl: new Intl.DateTimeFormat('en-CA', utc).format(),
      intlOfNow: new Intl.DateTimeFormat('en-CA', utc).format(Date.now()),
      intlParts: new Intl.DateTimeFormat('en-CA', utc).formatToParts().map((part) => part.value).join(''),
      intlPartsOfNow: new Intl.DateTimeFormat('en-CA', utc).formatToParts(Date.now()).map((part) => part.value).join(''),
      toLocaleString: new Date().toLocaleString('en-CA', { timeZone: 'UTC' }),
      toLocaleDateString: new Date().toLocaleDateString('en-CA', { timeZone: 'UTC' }),
      pid: process.pid,
    };
  }
  const started = performance.now();
  let outcome;
  if (event.probe === 'abortTimeout') outcome = await Promise.race([tp.setTimeout(5000).then(() => 'pause'), abortedBy(AbortSignal.timeout(50))]);
  if (event.probe === 'schedulerWait') outcome = await tp.scheduler.wait(2000).then(() => 'waited');
  if (event.probe === 'interval') {
    let ticks = 0;
    for await (const value of tp.setInterval(100, 'tick')) { ticks += 1; if (ticks === 3) { outcome = value + ' x' + ticks; break; } }
  }
  if (event.probe === 'timersPromisesOfTimers') outcome = await timers.promises.setTimeout(1000, 'late');
  if (event.probe === 'setTimeoutSignal') {
    outcome = await tp.setTimeout(5000, 'pause', { signal: AbortSignal.timeout(20) }).catch((error) => error.name + ' ' + error.code);
  }
  if (event.probe === 'socketTimeout') {
    // a request to the simulator's DynamoDB endpoint with a 1 ms socket timeout: the scheduler holds it for many
    // event-loop turns of real time; on AWS the answer comes first
    outcome = await new Promise((resolve) => {
      const request = require('node:http').request(process.env.AWS_ENDPOINT_URL_DYNAMODB, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'DynamoDB_20120810.ListTables' },
      });
      request.setTimeout(1, () => { resolve('socket timed out'); request.destroy(); });
      request.on('response', (response) => { response.resume(); response.on('end', () => resolve('answered')); });
      request.on('error', () => undefined);
      request.end('{}');
    });
  }
  if (event.probe === 'child') {
    outcome = await new Promise((resolve, reject) => require('node:child_process').execFile(process.execPath, ['-e', 'setTimeout(() => console.log(\\'done\\'), 200)'], (error, stdout) => (error ? reject(error) : resolve(stdout.trim()))));
  }
  if (event.probe === 'never') await new Promise(() => undefined);
  return { outcome, virtualMs: Math.round(performance.now() - started) };
};
`;

const asset = assetDirectory({ 'index.js': HANDLER });
afterAll(() => asset.remove());

/** What one invocation with `event` returns in a new run of `seed` (one environment), and its real time. */
async function invokeOnce(seed: string, event: object): Promise<{ response: Record<string, unknown>; realMs: number; realTimeEvents: number }> {
  const scheduler = new SeededScheduler(seed);
  const run = runner(functionModel(asset.directory, { timeoutSeconds: 30 }), { scheduler, clock: VirtualClock.frozen(START) });
  try {
    const started = Date.now();
    const outcome = await run.invoke(event, 'clocks');
    if (outcome.kind !== 'returned') throw new Error(`the invocation ${outcome.kind}: ${JSON.stringify(outcome)}`);
    return { response: outcome.response as Record<string, unknown>, realMs: Date.now() - started, realTimeEvents: scheduler.realTimeEventCount() };
  } finally {
    await run.stop();
  }
}

describe('clocks and timers under a seeded scheduler', () => {
  test('every clock reads the virtual clock: two runs of one seed read the same values, consistent with Date', { timeout: 120_000 }, async () => {
    const once = await invokeOnce('clocks', { probe: 'clocks' });
    const again = await invokeOnce('clocks', { probe: 'clocks' });
    expect(again.response).toEqual(once.response);
    const clocks = once.response;
    expect(clocks.dateNow).toBe(START);
    // the monotonic clocks count the worker's virtual time: the 1.5 s the handler waited on its virtual timer
    expect(clocks.timeOrigin).toBe(START);
    expect(clocks.waited).toBe(1500);
    expect(clocks.hrtimeSince).toEqual([1, 500_000_000]);
    const nowMs = clocks.performanceNow as number;
    expect(BigInt(clocks.hrtimeBigint as string)).toBe(BigInt(Math.round(nowMs * 1e6)));
    expect(clocks.uptime).toBe(nowMs / 1000);
    // performance.mark and measure, and the machine's uptime, read the same virtual monotonic clock
    expect(clocks.markBefore).toBe(0);
    expect(clocks.measured).toBe(1500);
    expect(clocks.measuredOptions).toBe(1500);
    expect(clocks.markAfter).toBe(nowMs);
    expect(clocks.osUptime).toBe(nowMs / 1000);
    // the date formats without a date read the simulation's date, not the machine's
    expect(clocks.intl).toBe(clocks.intlOfNow);
    expect(clocks.intl).toBe(new Intl.DateTimeFormat('en-CA', { timeZone: 'UTC', dateStyle: 'short', timeStyle: 'medium' }).format(START));
    expect(clocks.intlParts).toBe(clocks.intlPartsOfNow);
    expect(clocks.toLocaleString).toBe(new Date(START).toLocaleString('en-CA', { timeZone: 'UTC' }));
    expect(clocks.toLocaleDateString).toBe('2026-11-29');
    // the process id is the seed's for the function, not the simulator's (which differs at each run of the CLI)
    expect(clocks.pid).not.toBe(process.pid);
    expect(clocks.pid).toBe(runPid('clocks'));
    expect(once.realTimeEvents).toBe(0);
  });

  test.each([
    ['abortTimeout', 'aborted: TimeoutError', 50],
    ['schedulerWait', 'waited', 2000],
    ['interval', 'tick x3', 300],
    ['timersPromisesOfTimers', 'late', 1000],
    ['setTimeoutSignal', 'AbortError ABORT_ERR', 20],
    ['socketTimeout', 'answered', 0],
    ['child', 'done', 0],
  ])('%s: the invocation returns %j after %i virtual ms, with no real-time event', { timeout: 120_000 }, async (probe, outcome, virtualMs) => {
    const { response, realTimeEvents } = await invokeOnce('timers', { probe });
    expect(response).toEqual({ outcome, virtualMs });
    expect(realTimeEvents).toBe(0);
  });

  test("an invocation nothing can wake ends as a time-out that names its own reason, not the function's timeout", { timeout: 120_000 }, async () => {
    const run = runner(functionModel(asset.directory, { timeoutSeconds: 30 }), { scheduler: new SeededScheduler('never'), clock: VirtualClock.frozen(START) });
    try {
      const outcome = await run.invoke({ probe: 'never' }, 'never');
      expect(outcome).toMatchObject({ kind: 'timed-out', timeoutSeconds: 30, stuck: true });
      expect(describeFailure(outcome)).toMatch(/^no step could wake the invocation: it waited on nothing the simulation drives/);
    } finally {
      await run.stop();
    }
  });
});
