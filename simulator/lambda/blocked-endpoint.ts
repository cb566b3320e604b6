/**
 * The endpoint of every AWS service the simulator does not emulate (`AWS_ENDPOINT_URL` of the workers): a loopback
 * server that resets each connection as soon as the request's headers arrived, so such a call fails on this machine
 * (the SDK sees `ECONNRESET`, retries, then gives up) and never reaches AWS. Each attempt is reported with the
 * service named in the request's SigV4 credential scope.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { listenOnLoopback } from '../aws/loopback-server';

/** A call that was refused. */
export interface BlockedCall {
  /** The SigV4 signing name (`sns`, `events`, `secretsmanager`, ...), or `unknown` for an unsigned request. */
  readonly service: string;
  readonly method: string;
  readonly path: string;
}

/** A running blocked endpoint. */
export interface BlockedEndpoint {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** Starts a blocked endpoint; `onBlocked` hears of each refused call. */
export async function startBlockedEndpoint(onBlocked: (call: BlockedCall) => void = () => undefined): Promise<BlockedEndpoint> {
  const server = createServer((request) => {
    onBlocked({ service: signingServiceOf(request.headers), method: request.method ?? 'GET', path: request.url ?? '/' });
    request.socket.resetAndDestroy();
  });
  return listenOnLoopback(server);
}

/** `AWS4-HMAC-SHA256 Credential=AKID/20240101/us-east-1/sns/aws4_request, ...` → `sns` */
function signingServiceOf(headers: IncomingHttpHeaders): string {
  const scope = /Credential=[^/]+\/\d{8}\/[^/]+\/([^/]+)\/aws4_request/.exec(String(headers.authorization ?? ''));
  return scope?.[1] ?? 'unknown';
}
