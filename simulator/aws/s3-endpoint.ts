/**
 * The S3 the simulated functions reach: an HTTP endpoint on 127.0.0.1 in front of a local S3 (./s3-local.ts, s3rver),
 * through which every request of a function goes, as its DynamoDB requests go through the fault proxy. For each object
 * request it
 * - names the caller: the function whose access key id signed the request (flow-access.ts), and the invocation its
 *   environment runs (the environment's endpoint path, ./sqs-senders.ts);
 * - asks IAM (`authorize`): `s3:PutObject`, `s3:GetObject` (also for HeadObject), `s3:DeleteObject`, each with the
 *   KMS request S3 makes for an SSE-KMS bucket; a refusal is S3's `403 AccessDenied`, before the local S3 sees it;
 * - injects the run's faults (`decideFault`, per request): `fail` answers S3's `503 SlowDown` (the SDK retries it),
 *   `slow` sends the reply in small pieces, one per timer tick, `lose-response` applies a PutObject and drops the
 *   connection before the reply; and, per object, at its first read (`decideObjectFault`): `missing` deletes the
 *   object, `altered` overwrites it with one byte changed (the same size): what a writer other than the flow, or a
 *   lost object, would do after the producer's transaction committed;
 * - emulates a conditional PutObject (`If-None-Match: *`, S3's since 2024), which s3rver does not know (it stores the
 *   object again): under a lock per key, an object that exists refuses the put with `412 PreconditionFailed`.
 *   `If-Match` on a put is refused with `501 NotImplemented` rather than ignored;
 * - decodes an `aws-chunked` upload body (./s3-request.ts), which s3rver would store as it is;
 * - answers a GetObject or HeadObject of a missing key as S3 does: `404 NoSuchKey` only when IAM lets the caller
 *   `s3:ListBucket` on the bucket, else `403 AccessDenied` (S3 API Reference, GetObject and HeadObject, "Permissions":
 *   "If the object you request doesn't exist, the error that Amazon S3 returns depends on whether you also have the
 *   s3:ListBucket permission"). That ListBucket is asked with `s3:prefix` the object's key: AWS does not document the
 *   request context of this check; Ceph's RGW matched AWS this way (ceph/ceph#68577, 2026), so a grant of
 *   `s3:ListBucket` conditioned on a prefix covers the keys under it;
 * - serves ListObjectsV2 (`GET /<bucket>?list-type=2`) after IAM allows `s3:ListBucket` with `s3:prefix` the
 *   request's `prefix` (empty when none), with no faults: the runtime lists one key to tell a missing object from a
 *   refused read when S3 answered 403.
 * Requests are sent to the local S3 without their signature (it would check them against its own credentials).
 * Other bucket-level requests and sub-resources (`?tagging`, multipart uploads, copies) are refused with
 * `501 NotImplemented`.
 */
import { createServer, request as httpRequest, Agent, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ResourceKey } from '../model/flow-model';
import { listenOnLoopback, readBody } from './loopback-server';
import { accessKeyIdOf } from './sqs-endpoint';
import type { SqsSenders } from './sqs-senders';
import { decodeAwsChunked, isAwsChunked, objectOperationOf, s3RequestTarget, type S3ObjectOperation, type S3RequestTarget } from './s3-request';

/**
 * What happens to one object request of a function's invocation:
 * - `none`: forwarded, and its reply returned;
 * - `fail`: refused with `503 SlowDown` before the local S3 sees it (nothing applied; the SDK retries it);
 * - `slow`: forwarded, and its reply sent in pieces of {@link SLOW_PIECE_BYTES}, one per timer tick;
 * - `lose-response`: forwarded (a PutObject is applied), then the connection is dropped without a reply.
 */
export type S3RequestFault = 'none' | 'fail' | 'slow' | 'lose-response';

/** What becomes of an object after it was written: nothing, deleted, or overwritten with one byte changed. */
export type S3ObjectFault = 'missing' | 'altered';

/** An object request a function's invocation sent, for the fault decision. */
export interface S3FaultQuestion {
  readonly functionKey: ResourceKey;
  /** The invocation key the function's runner was given (an event source mapping's: `<mapping>|<message id>|<receive count>`). */
  readonly invocationKey: string;
  readonly operation: S3ObjectOperation;
  readonly bucket: string;
  readonly key: string;
  /** 1 for the invocation's first request of this operation on this object, 2 for its retry, ... */
  readonly attempt: number;
}

/** An object fault the endpoint applied. */
export interface InjectedObjectFault {
  readonly bucket: string;
  readonly key: string;
  readonly fault: S3ObjectFault;
}

/** Options of {@link startS3Endpoint}. */
export interface S3EndpointOptions {
  /** The local S3 (`http://127.0.0.1:<port>`). */
  readonly backend: string;
  /** The run's environments: a request's sender path names its function and invocation. @default requests are not attributed (no faults) */
  readonly senders?: SqsSenders;
  /**
   * Decides whether IAM allows a request: undefined when it does, else the message of the `AccessDenied` S3 answers
   * with. `accessKeyId` is the caller's (from the request's signature). `ListBucket` is asked for a ListObjectsV2 and
   * for a GetObject or HeadObject of a missing key; its `key` is then the `s3:prefix` (see the module comment).
   * @default every request is allowed
   */
  authorize?(request: {
    readonly accessKeyId?: string;
    readonly operation: S3ObjectOperation | 'ListBucket';
    readonly bucket: string;
    /** The object's key; for `ListBucket`, the `s3:prefix`. */
    readonly key: string;
    /** The request's headers, lower-case names (the S3 condition keys some are). */
    readonly headers: Readonly<Record<string, string | undefined>>;
  }): Promise<string | undefined>;
  /** Picks each attributed request's fault. @default none */
  decideFault?(question: S3FaultQuestion): S3RequestFault;
  /** Picks what becomes of an object when it is first read (decided once per object). @default nothing */
  decideObjectFault?(bucket: string, key: string): S3ObjectFault | undefined;
  /** Hears each fault that fires, with the function it hit (an object fault: none, it is the object's, whoever reads it). @default not heard */
  onFault?(fault: Exclude<S3RequestFault, 'none'> | S3ObjectFault, functionKey: ResourceKey | undefined, target: { readonly bucket: string; readonly key: string }): void;
  /** The simulation's clock: every reply's `Date` header. @default the local S3's own */
  now?(): number;
}

/** A running endpoint. */
export interface S3Endpoint {
  /** `http://127.0.0.1:<port>`: `AWS_ENDPOINT_URL_S3` of the environments (followed by their sender path). */
  readonly endpoint: string;
  /** The object faults applied so far, in the order they were applied. */
  injectedObjectFaults(): readonly InjectedObjectFault[];
  /** The object as the local S3 holds it now, read without IAM or faults (the checks' view); undefined when there is none. */
  readObject(bucket: string, key: string): Promise<Buffer | undefined>;
  /** Closes the endpoint and every connection to it (the local S3 is the caller's to stop). */
  stop(): Promise<void>;
}

/** The size of the pieces of a slow reply. */
export const SLOW_PIECE_BYTES = 64 * 1024;

/** Headers that describe one connection, or the request's signature: never forwarded. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'te',
  'trailer',
  'authorization',
  'x-amz-security-token',
  'x-amz-content-sha256',
  'x-amz-date',
  'x-amz-decoded-content-length',
  'x-amz-trailer',
  'content-encoding',
  'content-length',
  'content-md5',
  'if-none-match',
]);

interface UpstreamReply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** Starts the endpoint in front of `options.backend`. */
export async function startS3Endpoint(options: S3EndpointOptions): Promise<S3Endpoint> {
  const backend = new URL(options.backend);
  const agent = new Agent({ keepAlive: true, timeout: 2_000 });
  const attempts = new Map<string, number>();
  const objectFaultDecided = new Set<string>();
  const injected: InjectedObjectFault[] = [];
  /** The conditional puts and object faults in progress, per object: each waits for the one before it. */
  const locks = new Map<string, Promise<void>>();

  const withLock = async <T>(objectId: string, work: () => Promise<T>): Promise<T> => {
    const before = locks.get(objectId) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const chained = before.then(() => mine);
    locks.set(objectId, chained);
    await before;
    try {
      return await work();
    } finally {
      release();
      if (locks.get(objectId) === chained) locks.delete(objectId);
    }
  };

  const send = (method: string, path: string, headers: IncomingHttpHeaders, body: Buffer | undefined): Promise<UpstreamReply> =>
    new Promise((resolve, reject) => {
      const outgoing = httpRequest(
        { host: backend.hostname, port: backend.port, method, path, headers: { ...headers, ...(body === undefined ? {} : { 'content-length': String(body.length) }) }, agent },
        (reply) => void readBody(reply).then((replyBody) => resolve({ status: reply.statusCode ?? 502, headers: reply.headers, body: replyBody }), reject),
      );
      outgoing.on('error', reject);
      outgoing.end(body);
    });

  /** At an object's first read: applies the object fault decided for it, if any. */
  const applyObjectFault = async (target: Required<Pick<S3RequestTarget, 'bucket' | 'key'>> & S3RequestTarget): Promise<void> => {
    const objectId = `${target.bucket}/${target.key}`;
    if (options.decideObjectFault === undefined || objectFaultDecided.has(objectId)) return;
    await withLock(objectId, async () => {
      if (objectFaultDecided.has(objectId)) return;
      const path = objectPath(target.bucket, target.key);
      const stored = await send('GET', path, {}, undefined);
      // nothing written yet: decided when it is first read after it exists
      if (stored.status !== 200) return;
      objectFaultDecided.add(objectId);
      const fault = options.decideObjectFault?.(target.bucket, target.key);
      if (fault === undefined) return;
      if (fault === 'missing') await send('DELETE', path, {}, undefined);
      else {
        const altered = Buffer.from(stored.body);
        if (altered.length === 0) altered.fill(0);
        else altered[altered.length - 1] = altered[altered.length - 1]! ^ 0xff;
        const contentType = stored.headers['content-type'];
        await send('PUT', path, contentType === undefined ? {} : { 'content-type': contentType }, altered.length === 0 ? Buffer.from([0]) : altered);
      }
      injected.push({ bucket: target.bucket, key: target.key, fault });
      // the object's fault, not its first reader's: S3 requests are not steps of the seed, so which worker's read
      // arrives first is the connections' order, and every reader meets the same object
      options.onFault?.(fault, undefined, { bucket: target.bucket, key: target.key });
    });
  };

  const handle = async (incoming: IncomingMessage, response: ServerResponse): Promise<void> => {
    const raw = await readBody(incoming);
    if (options.now !== undefined) response.setHeader('date', new Date(options.now()).toUTCString());
    const target = s3RequestTarget(incoming.url ?? '/');
    const accessKey = withAccessKey(accessKeyIdOf(headerOf(incoming.headers, 'authorization')));
    const listPrefix = target === undefined ? undefined : listObjectsV2Prefix(incoming.method, target, incoming.url ?? '/');
    if (target !== undefined && listPrefix !== undefined) {
      const denied = await options.authorize?.({ ...accessKey, operation: 'ListBucket', bucket: target.bucket, key: listPrefix, headers: {} });
      if (denied !== undefined) return s3Error(response, 403, 'AccessDenied', denied);
      return reply(response, await send('GET', target.upstreamPath, forwardedHeaders(incoming.headers), undefined), false, options.now);
    }
    const operation = target === undefined ? undefined : objectOperationOf(incoming.method, target, incoming.headers);
    if (target === undefined || operation === undefined || target.key === undefined) {
      return s3Error(response, 501, 'NotImplemented', `the simulator's S3 emulates PutObject, GetObject, HeadObject and DeleteObject on path-style object URLs only, not ${incoming.method ?? '?'} ${incoming.url ?? ''}`);
    }
    const objectTarget = { ...target, key: target.key };
    const sender = target.senderPath === undefined ? undefined : options.senders?.identify(target.senderPath);
    const headerValues = Object.fromEntries(Object.keys(incoming.headers).map((name) => [name.toLowerCase(), headerOf(incoming.headers, name)]));
    const denied = await options.authorize?.({ ...accessKey, operation, bucket: target.bucket, key: target.key, headers: headerValues });
    if (denied !== undefined) return s3Error(response, 403, 'AccessDenied', denied);

    let body: Buffer | undefined;
    if (operation === 'PutObject') {
      if (incoming.headers['if-match'] !== undefined) return s3Error(response, 501, 'NotImplemented', "the simulator's S3 does not emulate If-Match on PutObject");
      try {
        body = isAwsChunked(incoming.headers) ? decodeAwsChunked(raw) : raw;
      } catch (error) {
        return s3Error(response, 400, 'IncompleteBody', error instanceof Error ? error.message : String(error));
      }
    }

    const invocationKey = sender?.invocation?.invocationKey;
    let fault: S3RequestFault = 'none';
    if (sender !== undefined && invocationKey !== undefined && options.decideFault !== undefined) {
      const counter = `${invocationKey}|${operation}|${target.bucket}/${target.key}`;
      const attempt = (attempts.get(counter) ?? 0) + 1;
      attempts.set(counter, attempt);
      fault = options.decideFault({ functionKey: sender.functionKey, invocationKey, operation, bucket: target.bucket, key: target.key, attempt });
    }
    if (fault !== 'none') options.onFault?.(fault, sender?.functionKey, objectTarget);
    if (fault === 'fail') return s3Error(response, 503, 'SlowDown', 'Please reduce your request rate. (injected by the simulator)');

    if (operation === 'GetObject' || operation === 'HeadObject') await applyObjectFault(objectTarget);

    const headers = forwardedHeaders(incoming.headers);
    const upstream =
      operation === 'PutObject' && headerOf(incoming.headers, 'if-none-match') !== undefined
        ? await conditionalPut(objectTarget, headerOf(incoming.headers, 'if-none-match')!, headers, body!)
        : await send(incoming.method!, target.upstreamPath, headers, body);
    if (fault === 'lose-response') {
      incoming.socket.destroy();
      return;
    }
    if ((operation === 'GetObject' || operation === 'HeadObject') && upstream.status === 404 && options.authorize !== undefined) {
      // S3 tells a missing key only to a caller who may list the bucket (see the module comment)
      const mayNotList = await options.authorize({ ...accessKey, operation: 'ListBucket', bucket: target.bucket, key: target.key, headers: {} });
      if (mayNotList !== undefined) return s3Error(response, 403, 'AccessDenied', 'Access Denied');
    }
    return reply(response, upstream, fault === 'slow', options.now);
  };

  /** A PutObject with `If-None-Match`: only `*` is valid (S3's rule), and an object that exists refuses it. */
  const conditionalPut = (target: S3RequestTarget & { readonly key: string }, condition: string, headers: IncomingHttpHeaders, body: Buffer): Promise<UpstreamReply> =>
    withLock(`${target.bucket}/${target.key}`, async () => {
      if (condition.trim() !== '*') return errorReply(501, 'NotImplemented', 'If-None-Match on PutObject takes only *');
      const existing = await send('HEAD', target.upstreamPath.split('?')[0]!, {}, undefined);
      if (existing.status === 200) return errorReply(412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', 'If-None-Match');
      return send('PUT', target.upstreamPath, headers, body);
    });

  const server = createServer((incoming, response) => {
    handle(incoming, response).catch((error: unknown) => {
      if (response.headersSent || response.destroyed) return;
      s3Error(response, 500, 'InternalError', `the simulator's S3 endpoint failed: ${error instanceof Error ? error.message : String(error)}`);
    });
  });
  const loopback = await listenOnLoopback(server);
  return {
    endpoint: loopback.endpoint,
    injectedObjectFaults: () => [...injected],
    readObject: async (bucket, key) => {
      const stored = await send('GET', objectPath(bucket, key), {}, undefined);
      return stored.status === 200 ? stored.body : undefined;
    },
    stop: async () => {
      const stopped = loopback.stop();
      agent.destroy();
      await stopped;
    },
  };
}

/** The `prefix` of a ListObjectsV2 request (`GET /<bucket>?list-type=2[&prefix=..]`, empty when none); undefined for any other request. */
function listObjectsV2Prefix(method: string | undefined, target: S3RequestTarget, url: string): string | undefined {
  if (method !== 'GET' || target.key !== undefined) return undefined;
  const query = new URL(url, 'http://localhost').searchParams;
  if (query.get('list-type') !== '2') return undefined;
  return query.get('prefix') ?? '';
}

/** The path-style path of an object on the local S3. */
function objectPath(bucket: string, key: string): string {
  return `/${encodeURIComponent(bucket)}/${key.split('/').map(encodeURIComponent).join('/')}`;
}

function withAccessKey(accessKeyId: string | undefined): { accessKeyId?: string } {
  return accessKeyId === undefined ? {} : { accessKeyId };
}

function headerOf(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

function forwardedHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !NOT_FORWARDED.has(name.toLowerCase()) && !name.toLowerCase().startsWith('x-amz-checksum-') && name.toLowerCase() !== 'x-amz-sdk-checksum-algorithm'));
}

function escapeXml(text: string): string {
  return text.replace(/[<>&'"]/g, (character) => `&#${character.charCodeAt(0)};`);
}

function errorBody(code: string, message: string, condition?: string): Buffer {
  return Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message>${condition === undefined ? '' : `<Condition>${condition}</Condition>`}<RequestId>simulator</RequestId></Error>`,
  );
}

function errorReply(status: number, code: string, message: string, condition?: string): UpstreamReply {
  return { status, headers: { 'content-type': 'application/xml' }, body: errorBody(code, message, condition) };
}

/** S3's error reply (`<Error><Code>..</Code><Message>..</Message></Error>`). */
function s3Error(response: ServerResponse, status: number, code: string, message: string): void {
  const body = errorBody(code, message);
  response.writeHead(status, { 'Content-Type': 'application/xml', 'Content-Length': body.length, 'x-amz-request-id': 'simulator' });
  response.end(body);
}

/** The local S3's reply; a slow one in pieces, each after a timer tick. */
function reply(response: ServerResponse, upstream: UpstreamReply, slow: boolean, now?: () => number): void {
  const headers: IncomingHttpHeaders = Object.fromEntries(Object.entries(upstream.headers).filter(([name]) => !['connection', 'keep-alive', 'transfer-encoding'].includes(name.toLowerCase())));
  if (now !== undefined) headers.date = new Date(now()).toUTCString();
  // a HEAD reply carries the object's length and no body
  if (upstream.body.length > 0 || headers['content-length'] === undefined) headers['content-length'] = String(upstream.body.length);
  response.writeHead(upstream.status, headers);
  if (!slow || upstream.body.length <= SLOW_PIECE_BYTES) {
    response.end(upstream.body);
    return;
  }
  let offset = 0;
  const next = (): void => {
    if (response.destroyed) return;
    const piece = upstream.body.subarray(offset, offset + SLOW_PIECE_BYTES);
    offset += piece.length;
    if (offset >= upstream.body.length) response.end(piece);
    else {
      response.write(piece);
      setTimeout(next, 1);
    }
  };
  next();
}
