/**
 * The DynamoDB endpoint a served run (`simulate --serve`) gives its operator: DynamoDB Local behind a proxy that puts
 * each table's creation time (DescribeTable's `CreationDateTime`) on the run's clock. DynamoDB Local stamps a table
 * with real time, while everything the run wrote carries the run's time (its fences, its outbox events), which stands
 * in the past when the run was given a past `--start-time` (a replayed run): compared with a real creation time, every
 * fence would look older than its table, as after a restore, and the operator commands would refuse to redrive.
 *
 * It also answers DescribeTimeToLive for the run's tables as the template defines their TTL (ENABLED, its attribute):
 * the run never turns TTL on in DynamoDB Local, which would delete by the real clock what the run wrote on its own
 * (./tables.ts), while `replay` and `fence replay` read the attribute from it. Every other request and reply passes
 * as it came.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { listenOnLoopback, readBody, type LoopbackServer } from './loopback-server';

/** The operations whose replies are rewritten. */
const DESCRIBE_TABLE = 'DynamoDB_20120810.DescribeTable';
const DESCRIBE_TIME_TO_LIVE = 'DynamoDB_20120810.DescribeTimeToLive';

/**
 * The TTL attribute the template gives the run table named `tableName`, or undefined (not a run table, one made again
 * under its name while serving, or one without TTL): its DescribeTimeToLive reply then passes as DynamoDB Local gave it.
 */
export type TimeToLiveOf = (tableName: string) => Promise<string | undefined>;

/**
 * Starts the proxy in front of `target` (`http://127.0.0.1:<port>`); `creationTime` gives a table's creation time on
 * the run's clock (epoch ms) from its name, its real creation time (epoch ms) and its `TableId` (when the reply has one);
 * `timeToLive` the TTL attribute a run table's DescribeTimeToLive answers with.
 */
export async function startTableClockProxy(
  target: string,
  creationTime: (tableName: string, realCreatedAt: number, tableId: string | undefined) => number,
  timeToLive: TimeToLiveOf,
): Promise<LoopbackServer> {
  const server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      const reply = await forward(target, request.method ?? 'POST', request.url ?? '/', request.headers, body);
      const operation = request.headers['x-amz-target'];
      const rewritten =
        reply.status !== 200
          ? undefined
          : operation === DESCRIBE_TABLE
            ? onRunClock(reply.body, creationTime)
            : operation === DESCRIBE_TIME_TO_LIVE
              ? await asTemplateDefines(body, reply.body, timeToLive)
              : undefined;
      const headers = { ...reply.headers };
      if (rewritten !== undefined) {
        // the SDK checks a DynamoDB reply's CRC32 when it has one: the rewritten body has none
        delete headers['x-amz-crc32'];
        headers['content-length'] = String(rewritten.length);
      }
      response.writeHead(reply.status, headers);
      response.end(rewritten ?? reply.body);
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(502, { 'content-type': 'text/plain' });
      response.end(`the served DynamoDB endpoint could not reach DynamoDB Local: ${(error as Error).message}`);
    });
  });
  return listenOnLoopback(server);
}

/** The DescribeTable reply `body` with its table's creation time on the run's clock, or undefined when it has none. */
function onRunClock(body: Buffer, creationTime: (tableName: string, realCreatedAt: number, tableId: string | undefined) => number): Buffer | undefined {
  const reply = JSON.parse(body.toString('utf8')) as { Table?: { TableName?: string; CreationDateTime?: number; TableId?: string } };
  const table = reply.Table;
  if (table?.TableName === undefined || typeof table.CreationDateTime !== 'number') return undefined;
  table.CreationDateTime = creationTime(table.TableName, table.CreationDateTime * 1000, table.TableId) / 1000;
  return Buffer.from(JSON.stringify(reply), 'utf8');
}

/** The DescribeTimeToLive reply for a run table whose template gives it a TTL: ENABLED on that attribute; else undefined. */
async function asTemplateDefines(requestBody: Buffer, replyBody: Buffer, timeToLive: TimeToLiveOf): Promise<Buffer | undefined> {
  const { TableName } = JSON.parse(requestBody.toString('utf8')) as { TableName?: unknown };
  const reply = JSON.parse(replyBody.toString('utf8')) as { TimeToLiveDescription?: { TimeToLiveStatus?: string } };
  // TTL turned on in DynamoDB Local by someone else (the operator, while serving) is told as it is
  if (typeof TableName !== 'string' || reply.TimeToLiveDescription?.TimeToLiveStatus !== 'DISABLED') return undefined;
  const attributeName = await timeToLive(TableName);
  if (attributeName === undefined) return undefined;
  return Buffer.from(JSON.stringify({ TimeToLiveDescription: { TimeToLiveStatus: 'ENABLED', AttributeName: attributeName } }), 'utf8');
}

function forward(target: string, method: string, url: string, headers: IncomingHttpHeaders, body: Buffer): Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(new URL(url, target), { method, headers }, (incoming) => {
      readBody(incoming).then((replyBody) => resolve({ status: incoming.statusCode ?? 502, headers: incoming.headers, body: replyBody }), reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
