/**
 * A function's HTTP call to a service outside the simulator (an API the app calls, here a local server) is part of the
 * worker's step under the seeded scheduler: the worker is not quiet while the call is outstanding, so the scheduler
 * waits for its answer instead of going on without it (or, with nothing else to run, timing the invocation out). Both
 * ways of calling are covered: node:http, and `fetch`, which does not go through node:http (undici, built into Node).
 * The server answers after a while, as a remote API does; the assertion does not depend on how long.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { assetDirectory, functionModel, runner } from '../lambda/handler-kit';

const HANDLERS = {
  fetch: 'exports.handler = async () => { const response = await fetch(process.env.API_URL); return await response.text(); };',
  'node:http': `const http = require('node:http');
exports.handler = () => new Promise((resolve, reject) => http.get(process.env.API_URL, (response) => {
  let body = '';
  response.on('data', (chunk) => { body += chunk; });
  response.on('end', () => resolve(body));
}).on('error', reject));`,
};

let server: Server;
let url: string;
const assets: { remove(): void }[] = [];

beforeAll(async () => {
  // a remote API: it answers each call a little later, headers first, then the body
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/plain' });
    response.write('po');
    setTimeout(() => response.end('ng'), 300);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  for (const asset of assets) asset.remove();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('an HTTP call to a service outside the simulator, under the seeded scheduler', () => {
  test.each(Object.keys(HANDLERS) as (keyof typeof HANDLERS)[])('with %s: the invocation gets the answer, whenever it comes', async (kind) => {
    const asset = assetDirectory({ 'index.js': HANDLERS[kind] });
    assets.push(asset);
    const outcomes: unknown[] = [];
    for (const seed of ['outside-1', 'outside-2', 'outside-3']) {
      const run = runner(functionModel(asset.directory), { environment: { API_URL: url }, scheduler: new SeededScheduler(seed), clock: VirtualClock.frozen(Date.parse('2026-01-01T00:00:00.000Z')) });
      try {
        outcomes.push(await run.invoke({}, `invocation-${seed}`));
      } finally {
        await run.stop();
      }
    }
    expect(outcomes).toEqual([1, 2, 3].map(() => ({ kind: 'returned', response: 'pong' })));
  });
});
