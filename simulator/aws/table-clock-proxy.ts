/**
 * The DynamoDB endpoint a served run (`simulate --serve`) gives its operator: DynamoDB Local behind a proxy that puts
 * each table's creation time (DescribeTable's `CreationDateTime`) on the run's clock. DynamoDB Local stamps a table
 * with real time, while everything the run wrote carries the run's time (its fences, its outbox events), which stands
 * in the past when the run was given a past `--start-time` (a replayed run): compared with a real creation time, every
 * fence would look older than its table, as after a restore, and the operator commands would refuse to redrive.
 *
 * It also answers DescribeTimeToLive for the run's tables as the template defines their TTL (ENABLED, its attribute):
 * the run never turns TTL on in DynamoDB Local, which would delete by the real clock what the run wrote on its own
 * (./tables.ts), while `replay` and `fence replay` read the attribute from it. For the same reason it answers
 * UpdateTimeToLive itself, as DynamoDB would from the TTL it tells, and never passes it on; DescribeTimeToLive then
 * tells what the operator set (./served-time-to-live.ts). Every other request and reply passes as it came.
 */
import { createServer, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { listenOnLoopback, readBody, type LoopbackServer } from './loopback-server';
import { malformedUpdate, ServedTimeToLive, type TimeToLiveDescription, type TimeToLiveSpecification } from './served-time-to-live';

/** The operations whose replies are rewritten. */
const DESCRIBE_TABLE = 'DynamoDB_20120810.DescribeTable';
const DESCRIBE_TIME_TO_LIVE = 'DynamoDB_20120810.DescribeTimeToLive';
/** The operation answered here, never passed on. */
const UPDATE_TIME_TO_LIVE = 'DynamoDB_20120810.UpdateTimeToLive';

/** A reply of the endpoint (DynamoDB Local's, or one made here). */
interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/**
 * The TTL attribute the template gives the run table named `tableName`, or undefined (not a run table, one made again
 * under its name while serving, or one without TTL): its DescribeTimeToLive reply then passes as DynamoDB Local gave it,
 * unless an UpdateTimeToLive through the endpoint set its TTL since.
 */
export type TimeToLiveOf = (tableName: string) => Promise<string | undefined>;

/**
 * Starts the proxy in front of `target` (`http://127.0.0.1:<port>`); `creationTime` gives a table's creation time on
 * the run's clock (epoch ms) from its name, its real creation time (epoch ms) and its `TableId` (when the reply has one);
 * `templateTimeToLive` the TTL attribute a run table's DescribeTimeToLive answers with.
 */
export async function startTableClockProxy(
  target: string,
  creationTime: (tableName: string, realCreatedAt: number, tableId: string | undefined) => number,
  templateTimeToLive: TimeToLiveOf,
): Promise<LoopbackServer> {
  const served = new ServedTimeToLive();
  const server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      const operation = request.headers['x-amz-target'];
      // another request of the operator's to DynamoDB Local, with its headers (its credentials name its tables)
      const ask = (asked: string, askedBody: unknown) => {
        const bytes = Buffer.from(JSON.stringify(askedBody), 'utf8');
        return forward(target, 'POST', request.url ?? '/', { ...request.headers, 'x-amz-target': asked, 'content-length': String(bytes.length) }, bytes);
      };
      // the TTL the endpoint tells for a table
      const timeToLive: TimeToLiveTold = (tableName, described) => toldTimeToLive(tableName, described, served, templateTimeToLive, ask);
      if (operation === UPDATE_TIME_TO_LIVE) {
        const reply = await updateTimeToLive(body, served, timeToLive, ask);
        response.writeHead(reply.status, reply.headers);
        response.end(reply.body);
        return;
      }
      const reply = await forward(target, request.method ?? 'POST', request.url ?? '/', request.headers, body);
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

type Ask = (operation: string, body: unknown) => Promise<Reply>;

type TimeToLiveTold = (tableName: string, described: Buffer) => ReturnType<typeof toldTimeToLive>;

/**
 * The TTL the endpoint tells for the table `tableName` whose DescribeTimeToLive reply from DynamoDB Local is
 * `described`: what an UpdateTimeToLive through it set for that very table; else, for a run table whose template gives
 * it a TTL, ENABLED on that attribute; else DynamoDB Local's own (TTL turned on there by someone else is told as it is).
 */
async function toldTimeToLive(
  tableName: string,
  described: Buffer,
  served: ServedTimeToLive,
  timeToLive: TimeToLiveOf,
  ask: Ask,
): Promise<{ description: TimeToLiveDescription; own: boolean; identity: () => Promise<string | undefined> }> {
  let identity: Promise<string | undefined> | undefined;
  const identityOnce = () => (identity ??= tableIdentity(tableName, ask));
  const own = (JSON.parse(described.toString('utf8')) as { TimeToLiveDescription?: TimeToLiveDescription }).TimeToLiveDescription ?? { TimeToLiveStatus: 'DISABLED' };
  const set = served.has(tableName) ? served.told(tableName, await identityOnce()) : undefined;
  if (set !== undefined) return { description: set, own: false, identity: identityOnce };
  const attributeName = own.TimeToLiveStatus === 'DISABLED' ? await timeToLive(tableName) : undefined;
  return attributeName === undefined ? { description: own, own: true, identity: identityOnce } : { description: { TimeToLiveStatus: 'ENABLED', AttributeName: attributeName }, own: false, identity: identityOnce };
}

/** What names the table `tableName` now, not its name (its `TableId` and creation time), or undefined when DynamoDB Local cannot describe it. */
async function tableIdentity(tableName: string, ask: Ask): Promise<string | undefined> {
  const reply = await ask(DESCRIBE_TABLE, { TableName: tableName });
  if (reply.status !== 200) return undefined;
  const { Table: table } = JSON.parse(reply.body.toString('utf8')) as { Table?: { TableId?: string; CreationDateTime?: number } };
  return table === undefined ? undefined : `${table.TableId ?? ''}@${table.CreationDateTime ?? ''}`;
}

/**
 * The DescribeTimeToLive reply the endpoint gives for DynamoDB Local's `replyBody`: the template's TTL for a run table,
 * or what an UpdateTimeToLive through the endpoint set (see {@link toldTimeToLive}); undefined to pass it as it came.
 */
async function asTemplateDefines(requestBody: Buffer, replyBody: Buffer, timeToLive: TimeToLiveTold): Promise<Buffer | undefined> {
  const { TableName } = parseObject(requestBody);
  if (typeof TableName !== 'string') return undefined;
  const { description, own } = await timeToLive(TableName, replyBody);
  return own ? undefined : Buffer.from(JSON.stringify({ TimeToLiveDescription: description }), 'utf8');
}

/**
 * The reply to an UpdateTimeToLive, made here from the TTL the endpoint tells (never passed on: DynamoDB Local would
 * delete by the machine's clock): DynamoDB Local's own refusal for a table it has not (ResourceNotFoundException),
 * DynamoDB's ValidationException for a malformed request or a change it refuses (./served-time-to-live.ts).
 */
async function updateTimeToLive(body: Buffer, served: ServedTimeToLive, told: TimeToLiveTold, ask: Ask): Promise<Reply> {
  const request = parseObject(body);
  const malformed = malformedUpdate(request);
  if (malformed !== undefined) return validationException(malformed);
  const tableName = request.TableName as string;
  const described = await ask(DESCRIBE_TIME_TO_LIVE, { TableName: tableName });
  if (described.status !== 200) return described;
  const { description, identity } = await told(tableName, described.body);
  const table = await identity();
  // deleted meanwhile: as DynamoDB Local refuses a table it has not
  if (table === undefined) return jsonReply(400, { __type: 'com.amazonaws.dynamodb.v20120810#ResourceNotFoundException', message: 'Cannot do operations on a non-existent table' });
  const answer = served.update(tableName, table, description, request.TimeToLiveSpecification as TimeToLiveSpecification);
  return 'refused' in answer ? validationException(answer.refused) : jsonReply(200, { TimeToLiveSpecification: answer.accepted });
}

function parseObject(body: Buffer): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(body.toString('utf8'));
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

/** A DynamoDB `ValidationException` reply, as DynamoDB Local sends one. */
function validationException(message: string): Reply {
  return jsonReply(400, { __type: 'com.amazonaws.dynamodb.v20120810#ValidationException', message });
}

function jsonReply(status: number, value: unknown): Reply {
  const body = Buffer.from(JSON.stringify(value), 'utf8');
  return { status, headers: { 'content-type': 'application/x-amz-json-1.0', 'content-length': String(body.length) }, body };
}

function forward(target: string, method: string, url: string, headers: IncomingHttpHeaders, body: Buffer): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(new URL(url, target), { method, headers }, (incoming) => {
      readBody(incoming).then((replyBody) => resolve({ status: incoming.statusCode ?? 502, headers: incoming.headers, body: replyBody }), reject);
    });
    outgoing.on('error', reject);
    outgoing.end(body);
  });
}
