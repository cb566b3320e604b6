/** Starting, stopping and reading requests of the simulator's loopback HTTP servers (the DynamoDB fault proxy, the blocked endpoint). */
import type { IncomingMessage, Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { keepConnectionsOpen } from './keep-connections-open';

/** A server listening on 127.0.0.1 whose open connections are tracked. */
export interface LoopbackServer {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** Destroys every connection still open to the server, then closes it; resolves once it is closed. */
  stop(): Promise<void>;
}

/**
 * Makes `server` listen on 127.0.0.1 at a free port, keeping idle connections open (no idle, header or request
 * timeout), tracking its connections so that {@link LoopbackServer.stop} can close them (a pooled keep-alive connection
 * would otherwise hold the server open). Rejects if it cannot listen.
 */
export async function listenOnLoopback(server: Server): Promise<LoopbackServer> {
  // a worker's SDK pools its sockets: an idle one closed by the server races its next request (see keep-connections-open.ts)
  keepConnectionsOpen(server);
  const sockets = new Set<Socket>();
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

/** The whole body of a request or reply, as it arrived. */
export function readBody(message: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    message.on('data', (chunk: Buffer) => chunks.push(chunk));
    message.on('end', () => resolve(Buffer.concat(chunks)));
    message.on('error', reject);
  });
}
