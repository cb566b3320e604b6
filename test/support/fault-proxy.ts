import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createServer, request as httpRequest, type IncomingMessage, type OutgoingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { readBody } from '../../simulator/aws/loopback-server';
import { conflictReply, TransactionConflicts, type TransactionConflictFigures } from '../../simulator/aws/transaction-conflicts';
import { describedKeySchemas } from './described-key-schemas';

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
  /**
   * Answers requests as real DynamoDB does when they meet an ongoing request on the same item (a
   * `TransactionConflictException`, or a `TransactionCanceledException` with `TransactionConflict` reasons: see
   * simulator/aws/transaction-conflicts.ts), which DynamoDB Local never does. The check comes after the `delayMs` wait,
   * when the request would be forwarded; a refused request is answered at once and never forwarded. `true` gives the
   * proxy its own arbiter, which reads key schemas from the upstream with DescribeTable; pass one
   * {@link TransactionConflicts} to several proxies to arbitrate between all their requests.
   * @default no conflicts: every request is forwarded, as DynamoDB Local serializes them
   */
  readonly transactionConflicts?: boolean | TransactionConflicts;
}

/** A running proxy. */
export interface FaultProxy {
  /** `http://127.0.0.1:<port>`: point a DynamoDB client's `endpoint` here. */
  readonly endpoint: string;
  /** Adds a rule; returns a function that reports how often it has fired. */
  inject(rule: FaultRule): () => number;
  /** Removes every rule, fired or not (a fault meant for one step must not fire in a later one). */
  clearRules(): void;
  /** How many requests with `target` (or in total) the proxy has received. */
  requestCount(target?: string): number;
  /** What the `transactionConflicts` arbiter refused so far (all proxies sharing it); none when the option is off. */
  transactionConflictFigures(): TransactionConflictFigures;
  stop(): Promise<void>;
}

/** What goes back to the client: DynamoDB Local's reply, or DynamoDB's refusal of a conflicting request. */
interface Reply {
  readonly status: number;
  readonly headers: OutgoingHttpHeaders;
  readonly body: Buffer;
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
  send(response, conflictReply('TransactWriteItems', Array.from({ length: actions }, (_, index) => index === 0)));
}

function send(response: ServerResponse, reply: Reply): void {
  response.writeHead(reply.status, reply.headers);
  response.end(reply.body);
}

/** Starts a proxy in front of `targetEndpoint` (e.g. DynamoDB Local's `http://127.0.0.1:8000`). */
export async function startFaultProxy(targetEndpoint: string, options: FaultProxyOptions = {}): Promise<FaultProxy> {
  const delayMs = options.delayMs ?? 0;
  if (!Number.isFinite(delayMs) || delayMs < 0) throw new RangeError(`delayMs must be a finite number of milliseconds >= 0, but was ${delayMs}`);
  const target = new URL(targetEndpoint);
  // with `transactionConflicts: true`, the proxy's own arbiter learns key schemas through this client
  const describer =
    options.transactionConflicts === true
      ? new DynamoDBClient({ endpoint: targetEndpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } })
      : undefined;
  const conflicts =
    options.transactionConflicts instanceof TransactionConflicts
      ? options.transactionConflicts
      : describer === undefined
        ? undefined
        : new TransactionConflicts(describedKeySchemas(describer));
  const rules: ActiveRule[] = [];
  const counts = new Map<string, number>();
  const sockets = new Set<Socket>();

  const forward = (incoming: IncomingMessage, body: Buffer): Promise<Reply> =>
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

  // the conflict check comes when the request would be forwarded: a refused request is DynamoDB's answer, never forwarded
  const forwardUnlessConflicting = async (incoming: IncomingMessage, operation: string, body: Buffer): Promise<Reply> => {
    const admission = await conflicts?.admit(operation, body);
    if (admission?.admitted === false) return admission.reply;
    try {
      return await forward(incoming, body);
    } finally {
      admission?.release();
    }
  };

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
      const reply = await forwardUnlessConflicting(incoming, amzTarget.slice(amzTarget.lastIndexOf('.') + 1), body);
      if (fault?.kind === 'drop-response') {
        // DynamoDB has answered (and applied the request, unless it refused it with a conflict); the client never learns it
        incoming.socket.destroy();
        return;
      }
      send(response, reply);
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
    clearRules() {
      rules.splice(0, rules.length);
    },
    requestCount(amzTarget) {
      if (amzTarget !== undefined) return counts.get(amzTarget) ?? 0;
      let total = 0;
      for (const count of counts.values()) total += count;
      return total;
    },
    transactionConflictFigures: () => conflicts?.figures() ?? { refused: 0, byOperation: {} },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }).finally(() => describer?.destroy()),
  };
}
