/**
 * A call outside the simulation that never answers does not hold a seeded run: after the scheduler's real-time wait
 * for outside calls, the invocation's virtual timers go on as if the call had not answered yet, so an
 * `AbortSignal.timeout` around the call aborts it (as on AWS), and an invocation with no timer times out; the run names
 * the wait as a real-time event (it is not replayable).
 */
import * as http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { outsideCallChange } from '../../../simulator/schedule/outside-call-wait';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { assetDirectory, functionModel, runner } from './handler-kit';

const START = Date.parse('2026-11-29T00:00:00Z');
/** The scheduler's real-time wait for outside calls in these tests (the run's is 30 s). */
const WAIT_MS = 1_000;
/** A slow outside answer: each within the wait, two of them longer than it. */
const SLOW_MS = 700;

const HANDLER = `
exports.handler = async (event) => {
  const started = performance.now();
  let outcome;
  if (event.probe === 'fetchAbort') {
    outcome = await fetch(event.url, { signal: AbortSignal.timeout(1000) }).then((response) => 'answered ' + response.status, (error) => error.name);
  }
  if (event.probe === 'twoSlowCalls') {
    const answers = [];
    for (const call of [1, 2]) answers.push(await fetch(event.url).then((response) => response.text()));
    outcome = answers.join(' ');
  }
  if (event.probe === 'httpSocketTimeout') {
    // node:http's socket timeout (http.request's timeout option, as axios and got set it): the call is ended by it
    outcome = await new Promise((resolve) => {
      const request = require('node:http').get(event.url, { timeout: 200 }, (response) => {
        let body = '';
        response.on('data', (chunk) => { body += chunk; });
        response.on('end', () => resolve('answered ' + body));
      });
      request.on('timeout', () => { request.destroy(); resolve('socket timeout'); });
      request.on('error', () => undefined);
    });
  }
  if (event.probe === 'fetchNoTimer') outcome = await fetch(event.url).then((response) => 'answered ' + response.status, (error) => error.name);
  return { outcome, virtualMs: Math.round(performance.now() - started) };
};
`;

const asset = assetDirectory({ 'index.js': HANDLER });
// a server that takes each request and never answers (its sockets are closed when the tests end)
const sockets = new Set<Socket>();
const hung = http.createServer((request, response) => {
  // /slow-answer answers after SLOW_MS of real time; every other path never answers
  if (request.url === '/slow-answer') setTimeout(() => response.end('late'), SLOW_MS);
});
hung.on('connection', (socket) => {
  sockets.add(socket);
  socket.on('close', () => sockets.delete(socket));
});
let url = '';
beforeAll(async () => {
  await new Promise<void>((resolve) => hung.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(hung.address() as AddressInfo).port}/slow`;
});
afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => hung.close(() => resolve()));
  asset.remove();
});

describe('a call outside the simulation that never answers', () => {
  test('its AbortSignal.timeout fires after the real-time wait: TimeoutError after 1000 virtual ms, and the run says why it is not replayable', { timeout: 120_000 }, async () => {
    const scheduler = new SeededScheduler('hung', WAIT_MS);
    const run = runner(functionModel(asset.directory, { timeoutSeconds: 30 }), { scheduler, clock: VirtualClock.frozen(START) });
    try {
      const outcome = await run.invoke({ probe: 'fetchAbort', url }, 'abort');
      expect(outcome).toEqual({ kind: 'returned', response: { outcome: 'TimeoutError', virtualMs: 1000 } });
      expect(scheduler.realTimeEventCount()).toBe(1);
      expect(scheduler.realTimeEvents()[0]?.change).toBe(outsideCallChange(1, WAIT_MS, 1));
    } finally {
      await run.stop();
    }
  });

  test('the wait is for each call: two slow calls, each answered within it, are waited for, and the run stays replayable', { timeout: 120_000 }, async () => {
    const scheduler = new SeededScheduler('slow', WAIT_MS);
    const run = runner(functionModel(asset.directory, { timeoutSeconds: 30 }), { scheduler, clock: VirtualClock.frozen(START) });
    try {
      const outcome = await run.invoke({ probe: 'twoSlowCalls', url: url.replace('/slow', '/slow-answer') }, 'slow');
      expect(outcome).toEqual({ kind: 'returned', response: { outcome: 'late late', virtualMs: 0 } });
      expect(scheduler.realTimeEventCount()).toBe(0);
    } finally {
      await run.stop();
    }
  });

  test('a node:http socket timeout around it is a virtual timer: it fires after the real-time wait, 200 virtual ms after the call, and the run says why it is not replayable', { timeout: 120_000 }, async () => {
    const scheduler = new SeededScheduler('hung', WAIT_MS);
    const run = runner(functionModel(asset.directory, { timeoutSeconds: 30 }), { scheduler, clock: VirtualClock.frozen(START) });
    try {
      const outcome = await run.invoke({ probe: 'httpSocketTimeout', url }, 'socket-timeout');
      expect(outcome).toEqual({ kind: 'returned', response: { outcome: 'socket timeout', virtualMs: 200 } });
      expect(scheduler.realTimeEventCount()).toBe(1);
      expect(scheduler.realTimeEvents()[0]?.change).toBe(outsideCallChange(1, WAIT_MS, 1));
    } finally {
      await run.stop();
    }
  });

  test('a node:http socket timeout shorter than a slow answer within the wait does not fire (no virtual time passes while the call is out), and the run stays replayable', { timeout: 120_000 }, async () => {
    const scheduler = new SeededScheduler('slow', WAIT_MS);
    const run = runner(functionModel(asset.directory, { timeoutSeconds: 30 }), { scheduler, clock: VirtualClock.frozen(START) });
    try {
      const outcome = await run.invoke({ probe: 'httpSocketTimeout', url: url.replace('/slow', '/slow-answer') }, 'socket-slow');
      expect(outcome).toEqual({ kind: 'returned', response: { outcome: 'answered late', virtualMs: 0 } });
      expect(scheduler.realTimeEventCount()).toBe(0);
    } finally {
      await run.stop();
    }
  });

  test('with no timer, its invocation times out (the function timeout), not the stalled-worker limit', { timeout: 120_000 }, async () => {
    const scheduler = new SeededScheduler('hung', WAIT_MS);
    const run = runner(functionModel(asset.directory, { timeoutSeconds: 30 }), { scheduler, clock: VirtualClock.frozen(START) });
    try {
      const outcome = await run.invoke({ probe: 'fetchNoTimer', url }, 'no-timer');
      expect(outcome).toEqual({ kind: 'timed-out', timeoutSeconds: 30 });
      // fetch keeps a timer of its own (undici's), due after the function's timeout: the invocation times out
      expect(scheduler.realTimeEvents()[0]?.change).toBe(outsideCallChange(1, WAIT_MS, 1));
    } finally {
      await run.stop();
    }
  });
});
