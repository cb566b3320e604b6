/**
 * A fault-injecting HTTP proxy on 127.0.0.1 in front of DynamoDB Local, one per Lambda execution environment: the
 * environment's `AWS_ENDPOINT_URL_DYNAMODB` points here, so every request the proxy sees belongs to the invocation the
 * environment is running, and each request can be given a fault by its number within that invocation. With the run's
 * shared {@link TransactionConflicts}, it also refuses a request that meets an ongoing one on the same item, as DynamoDB
 * does and DynamoDB Local does not.
 */
import { listenOnLoopback, readBody } from '../aws/loopback-server';
import { conflictReply, INJECTED_CONFLICT_MESSAGE, type ConflictArbiter, type ConflictReply } from '../aws/transaction-conflicts';
import type { RequestScheduling, ScheduledRequest } from '../schedule/schedule-types';
import { REQUEST_SEQUENCE_HEADER } from '../lambda/worker-protocol';
import { createHash } from 'node:crypto';
import { Agent, createServer, request as httpRequest, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';

/**
 * What happens to one DynamoDB request:
 * - `none`: forwarded, and its reply returned;
 * - `throttle`: refused with a 400 `ThrottlingException` before DynamoDB sees it;
 * - `lose-response`: forwarded (DynamoDB applies it), then the client's connection is dropped without a reply;
 * - `crash-before`: the process dies before sending it: not forwarded, never answered;
 * - `crash-after`: the process dies once DynamoDB has applied it: forwarded, never answered.
 */
export type RequestFault = 'none' | 'throttle' | 'lose-response' | 'crash-before' | 'crash-after' | 'conflict';

/** A request the proxy received during an invocation. */
export interface ProxiedRequest {
  /** The operation, from `X-Amz-Target` (`DynamoDB_20120810.TransactWriteItems` → `TransactWriteItems`). */
  readonly operation: string;
  /** 1-based number of the request within the current invocation, in order of arrival. */
  readonly index: number;
  /** The request body (DynamoDB JSON). */
  readonly body: Buffer;
  /**
   * The request's number within the invocation in the order the function SENT them (a replayable worker's
   * `x-ief-simulator-request` header), which {@link index} is not when the scheduler forwards requests sent at once in
   * another order. @default unknown (a worker that is not replayable numbers nothing)
   */
  readonly sequence?: number;
}

/** What a crash fault reports. */
export interface ProxiedCrash {
  /** The {@link ProxiedRequest.index} of the request the process died at. */
  readonly atRequest: number;
  /** Whether DynamoDB applied that request before the process died (`crash-after`, unless it refused the request with a transaction conflict). */
  readonly afterCommit: boolean;
}

/** What became of a request the invocation sent: whether DynamoDB applied it (forwarded and answered 200), seen by the client or not. */
export interface RequestAnswer {
  readonly applied: boolean;
  /** The body of DynamoDB's refusal (a 4xx reply: a cancelled transaction names each action's reason). @default none (applied) */
  readonly refusal?: Buffer;
}

/** What became of a request: applied when DynamoDB answered 200 to it, else refused (with the reply's body when it was a 4xx). */
function answerOf(forwarded: boolean, upstream: { readonly status: number; readonly body: Buffer }): RequestAnswer {
  if (forwarded && upstream.status === 200) return { applied: true };
  return { applied: false, ...(upstream.status >= 400 && upstream.status < 500 ? { refusal: upstream.body } : {}) };
}

/** A running proxy. */
export interface DynamoDbProxy {
  /** `http://127.0.0.1:<port>`: the endpoint to give the environment. */
  readonly endpoint: string;
  /**
   * From now on requests are numbered from 1 and `decide` picks each one's fault; `onCrash` is called when a crash
   * fault fires (the proxy then never answers that request, nor any later request of the invocation); `onAnswered`
   * hears whether DynamoDB applied each request the invocation sent, its reply lost or not (not called for a request
   * refused before DynamoDB: denied, throttled, refused by a conflict, or never sent).
   */
  beginInvocation(decide: (request: ProxiedRequest) => RequestFault, onCrash: (crash: ProxiedCrash) => void, onAnswered?: (request: ProxiedRequest, answer: RequestAnswer) => void): void;
  /** Ends the current invocation: later requests are forwarded without faults. */
  endInvocation(): void;
  /** Closes the proxy and every connection to it. */
  stop(): Promise<void>;
}

const TARGET_HEADER = 'x-amz-target';
/** The worker's number of a request (see {@link ProxiedRequest.sequence}): read here, never forwarded. */
const SEQUENCE_HEADER = REQUEST_SEQUENCE_HEADER;
/** How long an upstream connection may stay idle in the pool before the proxy closes it. */
const UPSTREAM_IDLE_MS = 2_000;
/** Headers that describe one connection, not the message: never copied from one side to the other. */
const HOP_BY_HOP_HEADERS = new Set(['connection', 'keep-alive', 'proxy-connection', 'transfer-encoding', 'upgrade', 'te', 'trailer']);

interface CurrentInvocation {
  readonly decide: (request: ProxiedRequest) => RequestFault;
  readonly onCrash: (crash: ProxiedCrash) => void;
  readonly onAnswered?: (request: ProxiedRequest, answer: RequestAnswer) => void;
  requests: number;
  crashed: boolean;
}

interface UpstreamReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * Decides whether IAM allows a request: undefined when it does, else the message of the `AccessDeniedException` DynamoDB
 * answers with (the request is refused whole, before any fault and before DynamoDB sees it).
 */
export type AuthorizeDynamoDbRequest = (request: { readonly operation: string; readonly body: Buffer }) => Promise<string | undefined>;

/** What a proxy checks besides its faults. */
export interface DynamoDbProxyOptions {
  /** Authorizes each request (IAM). @default every request is allowed */
  readonly authorize?: AuthorizeDynamoDbRequest;
  /**
   * Refuses a request that meets an ongoing request on the same item as DynamoDB does (a transaction conflict, which
   * DynamoDB Local never reports), shared by every proxy of a run. It decides last: after IAM, and after the fault
   * decision, when the request would be forwarded; a refused request is not forwarded, and its refusal is the reply
   * (which a `lose-response` or `crash-after` fault then keeps from the client, as it would DynamoDB Local's).
   * @default no conflicts: DynamoDB Local serializes the requests
   */
  readonly transactionConflicts?: ConflictArbiter;
  /**
   * Holds each request until a seeded scheduler lets it be forwarded, and its reply until the scheduler lets it go
   * (simulator/schedule/seeded-scheduler.ts): a request is ongoing, for transaction conflicts, from its forwarding to
   * its reply. Requests are then numbered in the order they are forwarded, not in the order they arrive.
   * @default each request is forwarded when it arrives and answered when DynamoDB Local answers
   */
  readonly scheduling?: RequestScheduling;
  /**
   * The simulation's clock: the `Date` header of every reply is set from it. DynamoDB Local dates its replies in real
   * time, and the SDK corrects its clock by a reply's `Date` when an error reply is more than 5 minutes off, then
   * retries the request: a retry that would depend on how fast this machine ran the simulated minutes.
   * @default DynamoDB Local's own `Date`
   */
  readonly now?: () => number;
}

/** Starts a proxy in front of `targetEndpoint` (DynamoDB Local, e.g. `http://127.0.0.1:8000`). */
export async function startDynamoDbProxy(targetEndpoint: string, options: DynamoDbProxyOptions = {}): Promise<DynamoDbProxy> {
  const { authorize, transactionConflicts, scheduling, now } = options;
  const target = new URL(targetEndpoint);
  if (target.protocol !== 'http:') throw new Error(`the DynamoDB proxy forwards to an http:// endpoint only, got '${targetEndpoint}'`);
  // pooled upstream connections (a new one per request cost about 0.4 ms of each forward); a pooled connection the
  // server closed while it was idle fails the request written to it at once, before the server read it: that request is
  // sent again on a new connection (see sendUpstream), so no request fails at random, which would shift request
  // numbers and so the seeded fault decisions. Idle connections are closed by us first, after UPSTREAM_IDLE_MS.
  const upstreamAgent = new Agent({ keepAlive: true, timeout: UPSTREAM_IDLE_MS });
  let invocation: CurrentInvocation | undefined;

  const forward = (incoming: IncomingMessage, sent: Buffer): Promise<UpstreamReply> => {
    const body = scheduling === undefined ? sent : withTokenInNamespace(sent, scheduling.tokenNamespace);
    return sendUpstream(incoming, body).catch((error: NodeJS.ErrnoException & { reusedSocket?: boolean }) => {
      if (error.reusedSocket === true && error.code === 'ECONNRESET') return sendUpstream(incoming, body);
      throw error;
    });
  };

  /** One attempt; a failure says whether it was written to a pooled connection (`reusedSocket`). */
  const sendUpstream = (incoming: IncomingMessage, body: Buffer): Promise<UpstreamReply> =>
    new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: incoming.method,
          path: incoming.url,
          headers: { ...withoutHopByHop(incoming.headers), 'content-length': String(body.length) },
          agent: upstreamAgent,
        },
        (reply) => {
          readBody(reply).then((replyBody) => resolve({ status: reply.statusCode ?? 502, headers: reply.headers, body: replyBody }), reject);
        },
      );
      outgoing.on('error', (error: NodeJS.ErrnoException & { reusedSocket?: boolean }) => {
        error.reusedSocket = outgoing.reusedSocket;
        reject(error);
      });
      outgoing.end(body);
    });

  /**
   * Forwards the request, unless it conflicts: then DynamoDB's refusal is the reply, and nothing was applied. Under a
   * scheduler the request stays ongoing (holding its items) until its reply turn.
   */
  const forwardUnlessConflicting = async (
    incoming: IncomingMessage,
    operation: string,
    body: Buffer,
    scheduled: ScheduledRequest | undefined,
  ): Promise<{ reply: UpstreamReply; forwarded: boolean }> => {
    const admission = await transactionConflicts?.admit(operation, body);
    if (admission?.admitted === false) {
      await scheduled?.replyTurn();
      return { reply: admission.reply, forwarded: false };
    }
    try {
      const upstream = forward(incoming, body);
      // nothing this proxy does until the answer depends on it: the scheduler may go on meanwhile
      scheduled?.dispatched();
      await upstream.catch(() => undefined);
      await scheduled?.replyTurn();
      return { reply: await upstream, forwarded: true };
    } finally {
      admission?.release();
    }
  };

  /** Answers the client, at the scheduler's turn when there is one. */
  const answer = async (scheduled: ScheduledRequest | undefined, send: () => void): Promise<void> => {
    await scheduled?.replyTurn();
    send();
    scheduled?.answered();
  };

  const handle = async (incoming: IncomingMessage, response: ServerResponse): Promise<void> => {
    const body = await readBody(incoming);
    // the replies made here (denied, throttled) carry the simulation's date too
    if (now !== undefined) response.setHeader('date', new Date(now()).toUTCString());
    const current = invocation;
    const operation = operationOf(incoming.headers);
    const scheduled = scheduling?.arrive(operation, body);
    // a request the scheduler never lets go (the environment was disposed) ends with the connection
    if (scheduled !== undefined) response.once('close', () => scheduled.ended());
    try {
      await decideAndAnswer(incoming, response, body, operation, current, scheduled);
    } catch (error) {
      if (response.headersSent || response.destroyed) return;
      // DynamoDB Local unreachable, say: the worker gets a 502 (the SDK retries it) and the scheduler counts the answer,
      // or it would wait for this environment until the invocation's real-time limit
      badGateway(response, targetEndpoint, error);
      scheduled?.answered();
    }
  };

  const decideAndAnswer = async (
    incoming: IncomingMessage,
    response: ServerResponse,
    body: Buffer,
    operation: string,
    current: CurrentInvocation | undefined,
    scheduled: ScheduledRequest | undefined,
  ): Promise<void> => {
    await scheduled?.forwardTurn;
    const denied = authorize === undefined ? undefined : await authorize({ operation, body });
    if (current === undefined) {
      if (denied !== undefined) return answer(scheduled, () => accessDenied(response, denied));
      const { reply: upstream } = await forwardUnlessConflicting(incoming, operation, body, scheduled);
      reply(response, upstream, now);
      return scheduled?.answered();
    }
    // the process died at an earlier request of this invocation: nothing it still sends goes anywhere
    if (current.crashed) return scheduled?.ended();
    current.requests += 1;
    if (denied !== undefined) return answer(scheduled, () => accessDenied(response, denied));
    const sequence = Number(incoming.headers[SEQUENCE_HEADER]);
    const request: ProxiedRequest = { operation, index: current.requests, body, ...(Number.isInteger(sequence) && sequence > 0 ? { sequence } : {}) };
    const fault = current.decide(request);
    switch (fault) {
      case 'none': {
        const { reply: upstream, forwarded } = await forwardUnlessConflicting(incoming, operation, body, scheduled);
        current.onAnswered?.(request, answerOf(forwarded, upstream));
        reply(response, upstream, now);
        return scheduled?.answered();
      }
      case 'throttle':
        return answer(scheduled, () => throttle(response));
      case 'conflict':
        // refused as DynamoDB refuses a write that meets an ongoing transaction on its item: nothing applied; its
        // message says it was injected, so a dead letter it ended in is not taken for the app's doing
        return answer(scheduled, () => refuse(response, conflictReply(operation, actionsOf(body).map(() => true), INJECTED_CONFLICT_MESSAGE)));
      case 'lose-response': {
        const { reply: upstream, forwarded } = await forwardUnlessConflicting(incoming, operation, body, scheduled);
        current.onAnswered?.(request, answerOf(forwarded, upstream));
        // DynamoDB has answered (and applied the request, unless it refused it with a conflict); the client never learns it
        incoming.socket.destroy();
        return scheduled?.answered();
      }
      case 'crash-before':
        current.crashed = true;
        scheduled?.ended();
        current.onCrash({ atRequest: request.index, afterCommit: false });
        return;
      case 'crash-after': {
        const { reply: upstream, forwarded } = await forwardUnlessConflicting(incoming, operation, body, undefined);
        current.onAnswered?.(request, answerOf(forwarded, upstream));
        current.crashed = true;
        scheduled?.ended();
        current.onCrash({ atRequest: request.index, afterCommit: forwarded });
        return;
      }
    }
  };

  const server = createServer((incoming, response) => {
    handle(incoming, response).catch((error: unknown) => {
      if (response.headersSent || response.destroyed) return;
      badGateway(response, targetEndpoint, error);
    });
  });
  // never close an idle client connection: the SDK in the worker reuses its pooled sockets, and one closed under it
  // (Node's default keep-alive timeout is 5 s) fails a request at random, which would make a seeded run unrepeatable
  const loopback = await listenOnLoopback(server);

  return {
    endpoint: loopback.endpoint,
    beginInvocation(decide, onCrash, onAnswered) {
      invocation = { decide, onCrash, ...(onAnswered === undefined ? {} : { onAnswered }), requests: 0, crashed: false };
    },
    endInvocation() {
      invocation = undefined;
    },
    stop: () => {
      invocation = undefined;
      // destroys the client connections and starts closing the server before the upstream agent goes
      const stopped = loopback.stop();
      upstreamAgent.destroy();
      return stopped;
    },
  };
}

/** `DynamoDB_20120810.PutItem` → `PutItem`; the whole header when it has no dot; `''` when absent. */
function operationOf(headers: IncomingHttpHeaders): string {
  const target = String(headers[TARGET_HEADER] ?? '');
  return target.slice(target.lastIndexOf('.') + 1);
}

/** The body with its `ClientRequestToken` (if any) replaced by a hash of it and `namespace`, 36 characters as the API allows. */
function withTokenInNamespace(body: Buffer, namespace: string): Buffer {
  const text = body.toString('utf8');
  if (!text.includes('"ClientRequestToken"')) return body;
  try {
    const parsed = JSON.parse(text) as { ClientRequestToken?: unknown };
    if (typeof parsed.ClientRequestToken !== 'string') return body;
    parsed.ClientRequestToken = createHash('sha256').update(`${namespace}|${parsed.ClientRequestToken}`).digest('hex').slice(0, 36);
    return Buffer.from(JSON.stringify(parsed));
  } catch {
    return body;
  }
}

function withoutHopByHop(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP_HEADERS.has(name.toLowerCase()) && name.toLowerCase() !== SEQUENCE_HEADER));
}

function reply(response: ServerResponse, upstream: UpstreamReply, now?: () => number): void {
  const headers = withoutHopByHop(upstream.headers);
  headers['content-length'] = String(upstream.body.length);
  if (now !== undefined) headers.date = new Date(now()).toUTCString();
  response.writeHead(upstream.status, headers);
  response.end(upstream.body);
}

/** A 502 naming DynamoDB Local's endpoint and why forwarding to it failed; the SDK retries it. */
function badGateway(response: ServerResponse, targetEndpoint: string, error: unknown): void {
  const message = `DynamoDB proxy: forwarding to ${targetEndpoint} failed: ${error instanceof Error ? error.message : String(error)}`;
  response.writeHead(502, { 'Content-Type': 'text/plain' });
  response.end(message);
}

/** A 400 with the body DynamoDB sends when IAM denies a request; the SDK does not retry it. */
function accessDenied(response: ServerResponse, message: string): void {
  const body = JSON.stringify({ __type: 'com.amazon.coral.service#AccessDeniedException', Message: message });
  response.writeHead(400, { 'Content-Type': 'application/x-amz-json-1.0', 'Content-Length': Buffer.byteLength(body), 'x-amzn-RequestId': 'simulator-access-denied' });
  response.end(body);
}

/** The actions of a transaction's body (one for any other request). */
function actionsOf(body: Buffer): unknown[] {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { TransactItems?: unknown };
    return Array.isArray(parsed.TransactItems) && parsed.TransactItems.length > 0 ? parsed.TransactItems : [undefined];
  } catch {
    return [undefined];
  }
}

/** Answers with DynamoDB's refusal of a conflicting request (transaction-conflicts.ts); the SDK does not retry it. */
function refuse(response: ServerResponse, refusal: ConflictReply): void {
  response.writeHead(refusal.status, refusal.headers);
  response.end(refusal.body);
}

/** A 400 with the body DynamoDB sends when it throttles a request; the SDK retries it. */
function throttle(response: ServerResponse): void {
  const body = JSON.stringify({
    __type: 'com.amazonaws.dynamodb.v20120810#ThrottlingException',
    message: 'Rate of requests exceeds the allowed throughput. (injected by the simulator)',
  });
  response.writeHead(400, { 'Content-Type': 'application/x-amz-json-1.0', 'Content-Length': Buffer.byteLength(body), 'x-amzn-RequestId': 'simulator-throttle' });
  response.end(body);
}
