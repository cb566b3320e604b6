import { createServer, request } from 'node:http';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { listenOnLoopback, readBody, type LoopbackServer } from '../../simulator/aws/loopback-server';
import { startFaultProxy } from './fault-proxy';

/** POSTs `body` to `endpoint`; resolves with the reply's status and body and how long the round trip took. */
function post(endpoint: string, body: string): Promise<{ status: number; body: string; elapsedMs: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const outgoing = request(endpoint, { method: 'POST', headers: { 'x-amz-target': 'DynamoDB_20120810.GetItem' } }, (reply) => {
      readBody(reply).then((replyBody) => resolve({ status: reply.statusCode ?? 0, body: replyBody.toString('utf8'), elapsedMs: performance.now() - started }), reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}

describe('fault proxy: the delayMs option', () => {
  // an echo server stands in for DynamoDB Local: the option concerns the proxy alone
  let echo: LoopbackServer;
  beforeAll(async () => {
    echo = await listenOnLoopback(createServer((incoming, response) => void readBody(incoming).then((body) => response.end(`echo:${body.toString('utf8')}`))));
  });
  afterAll(async () => {
    await echo.stop();
  });

  test('every request waits at least delayMs in the proxy, concurrent requests included, and is forwarded unchanged', async () => {
    const delayMs = 40;
    const proxy = await startFaultProxy(echo.endpoint, { delayMs });
    try {
      const replies = await Promise.all(['a', 'b', 'c'].map((body) => post(proxy.endpoint, body)));
      expect(replies.map((reply) => [reply.status, reply.body])).toEqual([
        [200, 'echo:a'],
        [200, 'echo:b'],
        [200, 'echo:c'],
      ]);
      // the timer may fire up to 1 ms early on some platforms; never sooner
      for (const reply of replies) expect(reply.elapsedMs).toBeGreaterThanOrEqual(delayMs - 1);
      expect(proxy.requestCount('DynamoDB_20120810.GetItem')).toBe(3);
    } finally {
      await proxy.stop();
    }
  });

  test('a negative or non-finite delay is refused, naming the option and the value', async () => {
    await expect(startFaultProxy(echo.endpoint, { delayMs: -1 })).rejects.toThrow('delayMs must be a finite number of milliseconds >= 0, but was -1');
    await expect(startFaultProxy(echo.endpoint, { delayMs: Number.NaN })).rejects.toThrow('but was NaN');
  });
});
