/**
 * The seeded scheduler finds what end counts miss, and replays it: two deliveries run in two execution environments of
 * one function (real runtime, bundled as the constructs bundle it; the shared DynamoDB Local), and the seed decides
 * how their DynamoDB requests interleave.
 * - A read-modify-write handler of the transactional mode (read the balance with its own client, then an
 *   unconditional `tx.put` of the sum): some seed lets another environment commit between the read and the stale
 *   put, and loses an update; the same seed loses it again.
 * - The lease mode with its claim condition stripped in front of DynamoDB Local (the planted fault: a second owner
 *   takes a held lease): the effect is idempotent at the end (one mail item, `sent = true`), so the end count passes,
 *   and the history checker names the two owners that ran the effect at once.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { buildSync } from 'esbuild';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';
import { checkHistory, HistoryRecorder } from '../../../simulator/check/history';
import type { FunctionRunner } from '../../../simulator/lambda/function-runner';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { createTable, localClient, uniqueTableName } from '../../support/dynamodb-client';
import { createInboxTable } from '../../support/proof/tables';
import { envelopeObject } from '../../lambda/helpers';
import { assetDirectory, functionModel, runner } from '../lambda/handler-kit';

const LAMBDA = path.resolve(__dirname, '../../../lambda/index.ts');
const HISTORY = path.resolve(__dirname, '../../../simulator/check/history.ts');
/** What the constructs set on every consumer besides its names (the dead-letter queue is unused: nothing is permanent here). */
const RUNTIME_VARIABLES = { IEF_DEDUPLICATION_WINDOW_SECONDS: '86400', IEF_LEASE_DURATION_SECONDS: '60', IEF_DEAD_LETTER_QUEUE_URL: 'http://127.0.0.1:9/000000000000/dead-letters' };
/** Every run's clock stands here: what a handler writes (timestamps, lease ends) is the same in every run of a seed. */
const FROZEN_AT = Date.parse('2026-01-01T00:00:00.000Z');
const SEEDS = Array.from({ length: 4 }, (_, index) => `seed-${index + 1}`);

/** Reads the balance with its own client, then stages the sum as an unconditional put: a lost update waiting to happen. */
const READ_MODIFY_WRITE = `
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { createTransactionalConsumer } from ${JSON.stringify(LAMBDA)};
const documents = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = createTransactionalConsumer({
  handle: async (event, tx) => {
    const { account, cents } = event.data;
    const { Item } = await documents.send(new GetCommand({ TableName: process.env.BALANCES, Key: { pk: account }, ConsistentRead: true }));
    tx.put({ TableName: process.env.BALANCES, Item: { pk: account, cents: (Item?.cents ?? 0) + cents } });
  },
});
`;

/** A lease-mode effect that is idempotent at the end, with history marks around it. */
const MAILER = `
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { createLeaseConsumer } from ${JSON.stringify(LAMBDA)};
import { historyMark } from ${JSON.stringify(HISTORY)};
const documents = DynamoDBDocumentClient.from(new DynamoDBClient({}));
export const handler = createLeaseConsumer({
  handle: async (event, context) => {
    const key = { subscriber: process.env.IEF_SUBSCRIBER_NAME, eventId: event.id };
    const actor = context.lambdaContext.awsRequestId;
    console.log(historyMark('effect-start', key, actor));
    await documents.send(new PutCommand({ TableName: process.env.MAIL, Item: { pk: 'MAIL#' + event.id, sent: true } }));
    console.log(historyMark('effect-end', key, actor));
  },
});
`;

function bundle(source: string): { directory: string; remove(): void } {
  const asset = assetDirectory({ 'index.ts': source });
  buildSync({ entryPoints: [path.join(asset.directory, 'index.ts')], outfile: path.join(asset.directory, 'index.js'), bundle: true, platform: 'node', format: 'cjs', logLevel: 'error', nodePaths: [path.resolve(__dirname, '../../../node_modules')] });
  return asset;
}

/** A proxy in front of DynamoDB Local that strips the condition of every claim (a PutItem with `recordType`) on `table`. */
async function startClaimStripper(target: string, table: string): Promise<{ endpoint: string; stop(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((incoming, response) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      let body = Buffer.concat(chunks);
      if (String(incoming.headers['x-amz-target']).endsWith('.PutItem')) {
        const parsed = JSON.parse(body.toString('utf8')) as Record<string, unknown> & { Item?: Record<string, unknown> };
        if (parsed.TableName === table && parsed.Item?.recordType !== undefined) {
          for (const field of ['ConditionExpression', 'ExpressionAttributeNames', 'ExpressionAttributeValues']) delete parsed[field];
          body = Buffer.from(JSON.stringify(parsed));
        }
      }
      const headers = { ...incoming.headers, 'content-length': String(body.length) };
      const outgoing = httpRequest({ host: upstream.hostname, port: upstream.port, method: incoming.method, path: incoming.url, headers }, (reply) => {
        response.writeHead(reply.statusCode ?? 502, reply.headers);
        reply.pipe(response);
      });
      outgoing.on('error', () => response.destroy());
      outgoing.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The SQS event of one message, as Lambda hands it to the function. */
function sqsEvent(envelope: Record<string, unknown>, messageId: string): unknown {
  const record = { messageId, receiptHandle: `handle-${messageId}`, body: JSON.stringify(envelope), attributes: { ApproximateReceiveCount: '1' }, messageAttributes: {} };
  return { Records: [{ ...record, md5OfBody: '', eventSource: 'aws:sqs', eventSourceARN: 'arn:aws:sqs:eu-west-1:000000000000:queue', awsRegion: 'eu-west-1' }] };
}

let client: DynamoDBClient;
const assets: { remove(): void }[] = [];
let readModifyWrite: string;
let mailer: string;

beforeAll(() => {
  client = localClient();
  const first = bundle(READ_MODIFY_WRITE);
  const second = bundle(MAILER);
  assets.push(first, second);
  readModifyWrite = first.directory;
  mailer = second.directory;
});
afterAll(() => {
  for (const asset of assets) asset.remove();
  client.destroy();
});

/** Two invocations at once on two environments of `run`, their events built by `events`. */
async function twoAtOnce(run: FunctionRunner, events: readonly unknown[]): Promise<void> {
  try {
    const outcomes = await Promise.all(events.map((event, index) => run.invoke(event, `invocation-${index}`)));
    for (const outcome of outcomes) expect(outcome, JSON.stringify(outcome)).toMatchObject({ kind: 'returned' });
  } finally {
    await run.stop();
  }
}

describe('the seeded scheduler', () => {
  test('finds the lost update of a read-modify-write handler, and replays it from its seed', async () => {
    const prefix = uniqueTableName('rmw');
    /** Two deposits, 1 and 2 cents, to one account, in new tables. */
    const balanceAfter = async (seed: string, attempt: number): Promise<number> => {
      const inbox = `${prefix}-${seed}-${attempt}-inbox`;
      const balances = `${prefix}-${seed}-${attempt}-balances`;
      await createInboxTable(client, inbox);
      await createTable(client, balances, { partitionKey: 'pk' });
      const environment = { ...RUNTIME_VARIABLES, IEF_SUBSCRIBER_NAME: 'Ledger', IEF_INBOX_TABLE_NAME: inbox, IEF_PROCESSING_MODE: 'transactional', BALANCES: balances };
      const run = runner(functionModel(readModifyWrite, { key: 'Stack/Ledger' }), { environment, maxEnvironments: 2, scheduler: new SeededScheduler(seed), clock: VirtualClock.frozen(FROZEN_AT) });
      await twoAtOnce(run, [1, 2].map((cents) => sqsEvent(envelopeObject({ id: `deposit-${cents}`, data: { account: 'account-1', cents } }), `message-${cents}`)));
      const { Item } = await client.send(new GetItemCommand({ TableName: balances, Key: { pk: { S: 'account-1' } }, ConsistentRead: true }));
      return Number(Item?.cents?.N);
    };

    const first = new Map<string, number>();
    for (const seed of SEEDS) first.set(seed, await balanceAfter(seed, 1));

    // some interleaving loses an update (the other environment committed between the read and the stale put) ...
    const lost = SEEDS.filter((seed) => first.get(seed) !== 3);
    expect(lost.length, JSON.stringify(Object.fromEntries(first))).toBeGreaterThan(0);
    expect([1, 2]).toContain(first.get(lost[0]!));
    // ... some does not, and a seed replays its interleaving: the same balance again
    expect(SEEDS.some((seed) => first.get(seed) === 3)).toBe(true);
    expect(await balanceAfter(lost[0]!, 2)).toBe(first.get(lost[0]!));
  });

  test('the history checker names two lease owners running one effect at once, while the end count passes', async () => {
    const inbox = uniqueTableName('lease-inbox');
    const mail = uniqueTableName('lease-mail');
    await createInboxTable(client, inbox);
    await createTable(client, mail, { partitionKey: 'pk' });
    const stripper = await startClaimStripper(inject('dynamoDbEndpoint'), inbox);
    const environment = { ...RUNTIME_VARIABLES, IEF_SUBSCRIBER_NAME: 'Mailer', IEF_INBOX_TABLE_NAME: inbox, IEF_PROCESSING_MODE: 'lease', MAIL: mail };
    try {
      const deliverTwice = async (seed: string, planted: boolean): Promise<{ violations: ReturnType<typeof checkHistory>; mails: number }> => {
        const history = new HistoryRecorder();
        const eventId = `order-${seed}-${planted ? 'planted' : 'control'}`;
        const run = runner(functionModel(mailer, { key: 'Stack/Mailer' }), {
          environment,
          maxEnvironments: 2,
          scheduler: new SeededScheduler(seed),
          clock: VirtualClock.frozen(FROZEN_AT),
          observer: { onFunctionOutput: (functionKey, line) => history.onOutput(functionKey, line) },
          ...(planted ? { dynamoDbEndpoint: stripper.endpoint } : {}),
        });
        // one message received twice at once (SQS's at-least-once delivery): two deliveries, one event
        const envelope = envelopeObject({ id: eventId });
        await twoAtOnce(run, [sqsEvent(envelope, `message-${eventId}`), sqsEvent(envelope, `message-${eventId}`)]);
        const { Item } = await client.send(new GetItemCommand({ TableName: mail, Key: { pk: { S: `MAIL#${eventId}` } }, ConsistentRead: true }));
        return { violations: checkHistory(history.entries()), mails: Item?.sent?.BOOL === true ? 1 : 0 };
      };

      const planted: { seed: string; violations: ReturnType<typeof checkHistory>; mails: number }[] = [];
      for (const seed of SEEDS) planted.push({ seed, ...(await deliverTwice(seed, true)) });
      const caught = planted.filter((run) => run.violations.length > 0);
      // the end count passes on every seed: one mail item, sent
      expect(planted.map((run) => run.mails)).toEqual(SEEDS.map(() => 1));
      // and some interleaving ran the effect in both owners at once: the checker names it, with the history
      expect(caught.length).toBeGreaterThan(0);
      const [violation] = caught[0]!.violations;
      expect(violation?.rule).toBe('overlapping-effects');
      expect(violation?.detail).toMatch(/ran in .+ and .+ at the same time/);
      expect(violation?.excerpt).toMatch(/effect-start[\s\S]*effect-start[\s\S]*effect-end/);

      // without the planted fault the same seeds keep one owner at a time
      const control: Awaited<ReturnType<typeof deliverTwice>>[] = [];
      for (const { seed } of caught) control.push(await deliverTwice(seed, false));
      expect(control.map((run) => run.violations)).toEqual(caught.map(() => []));
    } finally {
      await stripper.stop();
    }
  });
});
