/**
 * Something outside the seed acting on a worker between two steps is detected, not left to make the seed's replay
 * silently give another run. Here a function keeps a raw TCP connection (a metrics collector, a Redis or Postgres
 * client: no HTTP, so not the per-call connection outside HTTP calls get) in a pool of its own, with a 3 s idle timer
 * that the pool clears when the server closes the connection, as pools do. The server closes the idle connection
 * between two steps (after the worker reported quiet; the scheduler is held meanwhile): the worker's timers change
 * while its environment was given no step. The scheduler names the environment and what changed. A run where the
 * server keeps the connection has none.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { assetDirectory, functionModel, runner } from '../lambda/handler-kit';
import { watchedScheduler } from './real-time-kit';

const HANDLER = `const net = require('node:net');
let pooled;
const connect = () => new Promise((resolve, reject) => {
  const socket = net.connect(Number(process.env.COLLECTOR_PORT), '127.0.0.1', () => resolve(socket));
  socket.once('error', reject);
});
exports.handler = async () => {
  if (pooled === undefined) {
    const entry = { socket: await connect(), idle: undefined };
    entry.socket.on('error', () => undefined);
    // the server closed it: out of the pool, its idle timer cleared
    entry.socket.on('close', () => { clearTimeout(entry.idle); if (pooled === entry) pooled = undefined; });
    pooled = entry;
  }
  const entry = pooled;
  clearTimeout(entry.idle);
  await new Promise((resolve) => entry.socket.write('orders.placed:1|c\\n', resolve));
  // back to the pool: closed after 3 s idle
  entry.idle = setTimeout(() => entry.socket.destroy(), 3000);
  await new Promise((resolve) => setTimeout(resolve, 4000));
  return 'sent';
};`;

let server: Server;
let port: number;
let onConnection: (socket: Socket) => void = () => undefined;
let asset: { readonly directory: string; remove(): void };

beforeAll(async () => {
  // a collector: reads what it is sent, never answers, and closes a connection only when the test says
  server = createServer((socket) => {
    socket.resume();
    socket.on('error', () => undefined);
    onConnection(socket);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  asset = assetDirectory({ 'index.js': HANDLER });
});
afterAll(async () => {
  asset.remove();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

/** One invocation under a scheduler of `seed`; with `closeBetweenSteps`, the collector closes the connection between two steps. */
async function run(seed: string, closeBetweenSteps: boolean) {
  const watched = watchedScheduler(seed);
  let hold: { release(): void } | undefined;
  let connection: Socket | undefined;
  onConnection = (socket) => {
    connection = socket;
    // no step until the test has closed the connection
    if (closeBetweenSteps) hold = watched.scheduler.holdStart();
  };
  // the write went and the idle timer is armed beside the sleep
  const written = watched.nextReport((report) => report.invocations === 1 && report.timers >= 2);
  const functionRunner = runner(functionModel(asset.directory), { environment: { COLLECTOR_PORT: String(port) }, scheduler: watched.scheduler, clock: VirtualClock.frozen(Date.parse('2026-01-01T00:00:00.000Z')) });
  try {
    const outcome = functionRunner.invoke({}, 'invocation-1');
    if (closeBetweenSteps) {
      const quiet = await written;
      const acted = watched.nextReport((report) => report.timers < quiet.timers);
      connection!.destroy();
      await acted;
      hold!.release();
    }
    return { outcome: await outcome, events: watched.scheduler.realTimeEvents() };
  } finally {
    await functionRunner.stop();
    connection?.destroy();
  }
}

describe('a worker acting between two steps on something outside the seed', () => {
  test('a raw connection the server closes while the environment waits for its step: named, with what changed', async () => {
    const closed = await run('detector-1', true);
    expect(closed.outcome).toEqual({ kind: 'returned', response: 'sent' });
    expect(closed.events).toEqual([{ environment: 'Stack/EchoFunction#1', turn: 1, change: 'virtual timers pending 2 → 1 (the earliest due 3000 → 4000 ms into its invocation)' }]);
  });

  test('the same function with the connection kept: nothing detected', async () => {
    const kept = await run('detector-1', false);
    expect(kept.outcome).toEqual({ kind: 'returned', response: 'sent' });
    expect(kept.events).toEqual([]);
  });
});
