/**
 * An outside HTTP service closes a connection that sat idle past its keep-alive timeout (Node's server: 5 s) in real
 * time, and a loaded machine makes the real time between two steps of a worker long. A pooled connection to such a
 * service made what a run did depend on the machine: the server's close raced the worker's next call on the
 * connection, which failed with a connection error or not as the timing decided (`fetch` keeps its own idle timeout on
 * the worker's virtual timers, so it never closed the connection first). Under the seeded scheduler each outside call
 * therefore has a connection of its own, closed with its answer: nothing an outside server does to an idle connection
 * reaches the run. Both ways of calling: node:http and `fetch` (undici).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { assetDirectory, functionModel, runner } from '../lambda/handler-kit';

const HANDLERS = {
  fetch: 'exports.handler = async () => { const response = await fetch(process.env.API_URL, { method: "POST", body: "{}" }); return await response.text(); };',
  'node:http': `const http = require('node:http');
exports.handler = () => new Promise((resolve, reject) => {
  const request = http.request(process.env.API_URL, { method: 'POST' }, (response) => {
    let body = '';
    response.on('data', (chunk) => { body += chunk; });
    response.on('end', () => resolve(body));
  });
  request.on('error', reject);
  request.end('{}');
});`,
};

let server: Server;
let url: string;
/** The connections the server accepted, and the calls it answered. */
let connections = 0;
let calls = 0;
const assets: { remove(): void }[] = [];

beforeAll(async () => {
  // an outside API with Node's default keep-alive timeout
  server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      calls += 1;
      response.writeHead(200, { 'content-type': 'text/plain' });
      response.end('pong');
    });
  });
  server.on('connection', () => {
    connections += 1;
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  for (const asset of assets) asset.remove();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('connections to a service outside the simulator, under the seeded scheduler', () => {
  test.each(Object.keys(HANDLERS) as (keyof typeof HANDLERS)[])('with %s: each call has its own connection, closed with its answer', async (kind) => {
    const asset = assetDirectory({ 'index.js': HANDLERS[kind] });
    assets.push(asset);
    connections = 0;
    calls = 0;
    const run = runner(functionModel(asset.directory), { environment: { API_URL: url }, scheduler: new SeededScheduler('connections-1'), clock: VirtualClock.frozen(Date.parse('2026-01-01T00:00:00.000Z')) });
    const outcomes: unknown[] = [];
    try {
      // three invocations of one warm environment: one worker, whose pool would keep the first connection
      for (const invocation of ['one', 'two', 'three']) outcomes.push(await run.invoke({}, `invocation-${invocation}`));
    } finally {
      await run.stop();
    }
    expect(outcomes).toEqual([1, 2, 3].map(() => ({ kind: 'returned', response: 'pong' })));
    expect(calls).toBe(3);
    expect(connections).toBe(calls);
  });
});
