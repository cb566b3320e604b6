/**
 * The proxy's upstream connections: pooled, and a request written to a pooled connection that the server closed while
 * it was idle is sent again on a new one, so the client never sees the close (a failure it would retry, shifting the
 * numbers of a seeded run's requests).
 */
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { afterEach, describe, expect, test } from 'vitest';
import { inject } from 'vitest';
import { startDynamoDbProxy, type DynamoDbProxy } from '../../../simulator/faults/dynamodb-proxy';
import { createTable, LOCAL_CREDENTIALS, localClient, uniqueTableName } from '../../support/dynamodb-client';

const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of cleanup.splice(0).reverse()) await close();
});

/**
 * A pass-through in front of DynamoDB Local that counts connections and, when told, drops the next request that comes
 * on a connection it already answered on, without reading it: what a server closing an idle connection does to a
 * request written at that moment.
 */
async function startDroppingUpstream(target: string): Promise<{ endpoint: string; connections: () => number; dropNextReused: () => void; dropped: () => number }> {
  let connections = 0;
  let dropped = 0;
  let dropArmed = false;
  const answered = new WeakSet<Socket>();
  const server: Server = createServer((incoming, response) => {
    const socket = incoming.socket;
    if (dropArmed && answered.has(socket)) {
      dropArmed = false;
      dropped += 1;
      socket.destroy();
      return;
    }
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      void fetch(`${target}${incoming.url ?? '/'}`, {
        method: incoming.method,
        headers: Object.fromEntries(Object.entries(incoming.headers).filter(([name]) => !['host', 'connection', 'content-length'].includes(name)).map(([name, value]) => [name, String(value)])),
        body: Buffer.concat(chunks),
      }).then(async (reply) => {
        const body = Buffer.from(await reply.arrayBuffer());
        response.writeHead(reply.status, { 'content-type': reply.headers.get('content-type') ?? 'application/x-amz-json-1.0', 'content-length': String(body.length) });
        response.end(body);
        answered.add(socket);
      });
    });
  });
  server.on('connection', () => (connections += 1));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => server.close(resolve)), async () => server.closeAllConnections());
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    dropNextReused: () => (dropArmed = true),
    dropped: () => dropped,
  };
}

describe('DynamoDB proxy upstream', () => {
  test('reuses its upstream connection, and sends a request again on a new one when the pooled one was closed under it', async () => {
    const table = uniqueTableName('proxy-upstream');
    await createTable(localClient(), table, { partitionKey: 'pk' });
    const upstream = await startDroppingUpstream(inject('dynamoDbEndpoint'));
    const proxy: DynamoDbProxy = await startDynamoDbProxy(upstream.endpoint);
    cleanup.push(() => proxy.stop());
    const client = new DynamoDBClient({ endpoint: proxy.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
    cleanup.push(async () => client.destroy());

    for (const pk of ['a', 'b', 'c']) await client.send(new PutItemCommand({ TableName: table, Item: { pk: { S: pk } } }));
    expect(upstream.connections()).toBe(1);

    upstream.dropNextReused();
    // one attempt only (maxAttempts 1): the client sees success only if the proxy sent the request again itself
    await client.send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'after-drop' } } }));
    expect(upstream.dropped()).toBe(1);
    expect(upstream.connections()).toBe(2);
  });
});
