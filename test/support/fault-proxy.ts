import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readBody } from '../../simulator/aws/loopback-server';

/**
 * A fault-injecting HTTP proxy on 127.0.0.1 in front of DynamoDB Local. It forwards every request unchanged (after
 * `delayMs`, if given: a fixed latency per request, as a network hop to a real endpoint adds), except that a rule can,
 * for the Nth request with a given `X-Amz-Target` (counted from when the rule was added):
 * - `drop-response`: forward it (so DynamoDB applies it), read the reply, then destroy the client socket without
 *   replying: a crash after commit, seen from the client;
 * - `throttle`: answer 400 with a DynamoDB throttling error body, without forwarding;
 * - `transaction-conflict`: answer a TransactWriteItems with `TransactionCanceledException`, the first action's reason
 *   `TransactionConflict` and the others' `None`, without forwarding: what DynamoDB answers when another transaction
 *   holds one of the items at that moment (DynamoDB Local serializes transactions and never does).
 */
export type Fault =
  | { readonly kind: 'drop-response' }
  | { readonly kind: 'throttle'; readonly errorType?: 'ThrottlingException' | 'ProvisionedThroughputExceededException' }
  | { readonly kind: 'transaction-conflict' };

/** When a fault applies. */
export interface FaultRule {
  /** e.g. `DynamoDB_20120810.TransactWriteItems` */
  readonly target: string;
  /** Which matching request (1-based, counted from when the rule was added). @default 1 */
  readonly nth?: number;
  /** How many consecutive matching requests, from the nth on, get the fault. @default 1 */
  readonly times?: number;
  readonly fault: Fault;
}

/** How the proxy behaves besides its fault rules. */
export interface FaultProxyOptions {
  /**
   * Milliseconds every request waits in the proxy before it is forwarded (or answered by a fault), to model the
   * round trip to a real DynamoDB endpoint; requests wait concurrently, each its own delay. @default 0
   */
  readonly delayMs?: number;
}

/** A running proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: point a DynamoDB client's `endpoint` here. */
  readonly endpoint: string;
  /** Adds a rule; returns a function that reports how often it has fired. */
  inject(rule: FaultRule): () => number;
  /** How many requests with `target` (or in total) the proxy has received. */
  requestCount(target?: string): number;
  stop(): Promise<void>;
}

interface ActiveRule {
  readonly rule: FaultRule;
  seen: number;
  fired: number;
}

const TARGET_HEADER = 'x-amz-target';

function throttle(response: ServerResponse, fault: Extract<Fault, { kind: 'throttle' }>): void {
  const errorType = fault.errorType ?? 'ThrottlingException';
  const body = JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${errorType}`, message: 'Rate exceeded (injected by fault-proxy)' });
  response.writeHead(400, { 'Content-Type': 'application/x-amz-json-1.0', 'Content-Length': Buffer.byteLength(body), 'x-amzn-RequestId': 'fault-proxy' });
  response.end(body);
}

function transactionConflict(response: ServerResponse, requestBody: Buffer): void {
  const actions = (JSON.parse(requestBody.toString('utf8')) as { TransactItems?: unknown[] }).TransactItems?.length ?? 1;
  const reasons = Array.from({ length: actions }, (_, index) =>
    index === 0 ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' } : { Code: 'None' },
  );
  const body = JSON.stringify({
    __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
    Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
    CancellationReasons: reasons,
  });
  response.writeHead(400, { 'Content-Type': 'application/x-amz-json-1.0', 'Content-Length': Buffer.byteLength(body), 'x-amzn-RequestId': 'fault-proxy' });
  response.end(body);
}

/** Starts a proxy in front of `targetEndpoint` (e.g. DynamoDB Local's `http://127.0.0.1:8000`). */
export async function startFaultProxy(targetEndpoint: string, options: FaultProxyOptions = {}): Promise<FaultProxy> {
  const delayMs = options.delayMs ?? 0;
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`delayMs must be a finite number of milliseconds >= 0, but was ${delayMs}`);
  const target = new URL(targetEndpoint);
  const rules: ActiveRule[] = [];
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();

  const forward = (incoming: IncomingMessage, body: Buffer): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> =>
    new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        { host: target.hostname, port: target.port, method: incoming.method, path: incoming.url, headers: incoming.headers },
        (reply) => {
          readBody(reply).then((replyBody) => resolve({ status: reply.statusCode ?? 502, headers: reply.headers, body: replyBody }), reject);
        },
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  const server: Server = createServer((incoming, response) => {
    void (async () => {
      const body = await readBody(incoming);
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const amzTarget = String(incoming.headers[TARGET_HEADER] ?? '');
      counts.set(amzTarget, (counts.get(amzTarget) ?? 0) + 1);
      let fault: Fault | undefined;
      for (const active of rules) {
        if (active.rule.target !== amzTarget) continue;
        active.seen += 1;
        const first = active.rule.nth ?? 1;
        const last = first + (active.rule.times ?? 1) - 1;
        if (fault === undefined && active.seen >= first && active.seen <= last) {
          fault = active.rule.fault;
          active.fired += 1;
        }
      }
      if (fault?.kind === 'throttle') return throttle(response, fault);
      if (fault?.kind === 'transaction-conflict') return transactionConflict(response, body);
      const reply = await forward(incoming, body);
      if (fault?.kind === 'drop-response') {
        // DynamoDB has applied the request; the client never learns it
        incoming.socket.destroy();
        return;
      }
      response.writeHead(reply.status, reply.headers);
      response.end(reply.body);
    })().catch((error: unknown) => {
      response.writeHead(502, { 'Content-Type': 'text/plain' });
      response.end(`fault-proxy: ${String(error)}`);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    endpoint: `http://127.0.0.1:${port}`,
    inject(rule) {
      const active: ActiveRule = { rule, seen: 0, fired: 0 };
      rules.push(active);
      return () => active.fired;
    },
    requestCount(amzTarget) {
      if (amzTarget !== undefined) return counts.get(amzTarget) ?? 0;
      let total = 0;
      for (const count of counts.values()) total += count;
      return total;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
