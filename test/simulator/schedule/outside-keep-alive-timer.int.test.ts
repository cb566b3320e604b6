/**
 * A timer of the worker that something outside the seed clears: `fetch` (undici) keeps a connection to an outside
 * server that says `Keep-Alive: timeout=5` and arms a 3 s idle timer for it, which under the seeded scheduler is one of
 * the worker's virtual timers, offered as a step. The outside server closes an idle connection in REAL time, and undici
 * then clears that timer: whether the scheduler met the timer (a step spent firing it, the invocation's virtual time
 * moved) or not was the machine's timing, and one seed gave several runs. Here the close lands at a known point (after
 * the worker reported quiet with the answer, before the scheduler's next step: the scheduler is held meanwhile), and a
 * run where the server keeps the connection must take the same steps. Each call outside the simulator therefore goes on
 * a connection of its own (`connection: close`), for which undici arms no idle timer.
 */
import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { assetDirectory, functionModel, runner } from '../lambda/handler-kit';
import { watchedScheduler } from './real-time-kit';

/** The handler calls the outside API, then sleeps 4 s (virtual): an idle timer of 3 s would come first. */
const HANDLER = `exports.handler = async () => {
  const response = await fetch(process.env.API_URL, { method: 'POST', body: '{}' });
  const text = await response.text();
  await new Promise((resolve) => setTimeout(resolve, 4000));
  return text;
};`;

let server: Server;
let url: string;
/** What the next request does when it arrives (the test's hold on the scheduler). */
let onRequest: () => void = () => undefined;
/** The last request's connection, and whether it asked for the connection to close with the answer. */
let lastSocket: Socket | undefined;
let askedToClose = false;
let asset: { readonly directory: string; remove(): void };

beforeAll(async () => {
  server = createServer((request, response) => {
    lastSocket = request.socket;
    askedToClose = request.headers.connection === 'close';
    onRequest();
    request.resume();
    request.on('end', () => {
      // Node's default keep-alive hint, while this server itself never closes an idle connection during the test:
      // only the test closes it, at a point it chooses
      response.setHeader('keep-alive', 'timeout=5');
      response.end('pong');
    });
  });
  server.keepAliveTimeout = 10 * 60 * 1000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  asset = assetDirectory({ 'index.js': HANDLER });
});
afterAll(async () => {
  asset.remove();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** One invocation under a scheduler of `seed`; with `closeBetweenSteps`, the server closes the connection between two steps. */
async function run(seed: string, closeBetweenSteps: boolean) {
  const watched = watchedScheduler(seed);
  let hold: { release(): void } | undefined;
  onRequest = () => {
    // no step until the test has closed the connection (or found none to close)
    if (closeBetweenSteps) hold = watched.scheduler.holdStart();
  };
  const answered = watched.nextReport((report) => report.invocations === 1 && report.started >= 1 && report.started === report.finished);
  const functionRunner = runner(functionModel(asset.directory), { environment: { API_URL: url }, scheduler: watched.scheduler, clock: VirtualClock.frozen(Date.parse('2026-01-01T00:00:00.000Z')) });
  try {
    const outcome = functionRunner.invoke({}, 'invocation-1');
    if (closeBetweenSteps) {
      const quiet = await answered;
      const socket = lastSocket!;
      if (!askedToClose) {
        // the worker kept the connection: the server closes it now, and the hold lasts until the worker acted on it
        const acted = watched.nextReport((report) => report.timers < quiet.timers);
        socket.destroy();
        await acted;
      }
      hold!.release();
    }
    return { outcome: await outcome, figures: watched.scheduler.figures(), realTimeEvents: watched.scheduler.realTimeEvents() };
  } finally {
    await functionRunner.stop();
  }
}

describe('an outside server closing an idle connection between two steps', () => {
  test('takes no step from the run: the same seed takes the same steps whether the close came or not', async () => {
    const kept = await run('keep-alive-1', false);
    const closed = await run('keep-alive-1', true);
    expect(kept.outcome).toEqual({ kind: 'returned', response: 'pong' });
    expect(closed.outcome).toEqual(kept.outcome);
    expect(closed.figures).toEqual(kept.figures);
    // nothing outside the seed reached the worker between its steps
    expect([...kept.realTimeEvents, ...closed.realTimeEvents]).toEqual([]);
  });
});
