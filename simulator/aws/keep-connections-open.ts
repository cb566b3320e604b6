/** Server settings shared by the simulator's loopback HTTP endpoints (every one started by listenOnLoopback, and the SQS endpoint). */
import type { Server } from 'node:http';

/**
 * Turns off a server's idle and header timeouts. The AWS SDK in a Lambda worker keeps its sockets pooled; a server
 * that closes an idle one (Node's default keep-alive timeout is 5 s) races the SDK's next request on it, which then
 * fails at random (`ECONNRESET`, which the SDK retries after a back-off: a virtual timer a replay need not have; the
 * SNS endpoint kept the default until issue 39, and its idle sockets were closed after about 6 s of a run). On loopback, with the run's own clients only, nothing needs the timeouts.
 */
export function keepConnectionsOpen(server: Server): void {
  server.keepAliveTimeout = 0;
  server.headersTimeout = 0;
  server.requestTimeout = 0;
}
