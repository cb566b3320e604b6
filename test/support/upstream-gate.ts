import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback, readBody } from '../../simulator/aws/loopback-server';

/** A request the gate holds back. */
export interface HeldRequest {
  /** Resolves when the request has reached the gate: the proxy in front of it has forwarded it, so it is ongoing. */
  readonly arrived: Promise<void>;
  /** Lets the request go on to DynamoDB Local (call it before or after it arrived). */
  release(): void;
}

/**
 * A loopback HTTP server between a proxy and DynamoDB Local that forwards every request, except that it can hold back
 * the next request of an operation until the test releases it. A request held there has been forwarded by the proxy
 * but has no reply yet: it stays ongoing exactly as long as the test wants, with no timing to race against.
 */
export interface UpstreamGate {
  /** `http://127.0.0.1:<port>`: the proxy's upstream. */
  readonly endpoint: string;
  /** Holds the next request whose `X-Amz-Target` is `DynamoDB_20120810.<operation>`. */
  holdNext(operation: string): HeldRequest;
  /** Releases whatever is still held and closes the gate. */
  stop(): Promise<void>;
}

interface Hold {
  readonly operation: string;
  readonly arrive: () => void;
  readonly released: Promise<void>;
  readonly release: () => void;
}

/** Starts a gate in front of `targetEndpoint` (DynamoDB Local). */
export async function startUpstreamGate(targetEndpoint: string): Promise<UpstreamGate> {
  const target = new URL(targetEndpoint);
  const holds: Hold[] = [];

  const forward = (incoming: IncomingMessage, body: Buffer, response: ServerResponse): void => {
    const outgoing = httpRequest({ host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers }, (reply) => {
      void readBody(reply).then((replyBody) => {
        response.writeHead(reply.statusCode ?? 502, reply.headers);
        response.end(replyBody);
      });
    });
    outgoing.on('error', (error) => {
      response.writeHead(502, { 'Content-Type': 'text/plain' });
      response.end(`upstream gate: ${error.message}`);
    });
    outgoing.end(body);
  };

  const server = createServer((incoming, response) => {
    void readBody(incoming).then(async (body) => {
      const operation = String(incoming.headers['x-amz-target'] ?? '').split('.').pop();
      const index = holds.findIndex((hold) => hold.operation === operation);
      if (index >= 0) {
        const [hold] = holds.splice(index, 1);
        hold!.arrive();
        await hold!.released;
      }
      forward(incoming, body, response);
    });
  });
  const loopback = await listenOnLoopback(server);
  const pending: (() => void)[] = [];

  return {
    endpoint: loopback.endpoint,
    holdNext(operation) {
      let arrive!: () => void;
      let release!: () => void;
      const arrived = new Promise<void>((resolve) => (arrive = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.push({ operation, arrive, released, release });
      pending.push(release);
      return { arrived, release };
    },
    stop: async () => {
      for (const release of pending) release();
      await loopback.stop();
    },
  };
}

/**
 * Starts a request of `operation` with `start` and holds it ongoing at `gate` while `meanwhile` runs; then releases it
 * and waits for its reply.
 */
export async function whileOngoing(gate: UpstreamGate, operation: string, start: () => Promise<unknown>, meanwhile: () => Promise<void>): Promise<void> {
  const held = gate.holdNext(operation);
  const ongoing = start();
  await held.arrived;
  try {
    await meanwhile();
  } finally {
    held.release();
    await ongoing;
  }
}
