/**
 * Two things a seed must decide that real time decided before (each made two runs of one seed differ at 100 commands):
 * - a crashed invocation's outcome reaches its caller only after its worker is terminated (real time); no scheduler
 *   step may be taken meanwhile, or what the outcome sets off (a retry, a replacement environment) lands after however
 *   many steps the machine's speed allowed;
 * - two SQS sends of one invocation (two dead letters, sent at once) reached their queue in whichever order their
 *   connections delivered them; the scheduler now holds them as it holds DynamoDB requests, so the seed orders them.
 */
import { createTable, localClient, uniqueTableName } from '../../support/dynamodb-client';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../../simulator/aws/sqs-endpoint';
import { SqsSenders } from '../../../simulator/aws/sqs-senders';
import { SeededScheduler } from '../../../simulator/schedule/seeded-scheduler';
import { frozenClock, makeQueue, queueModel } from '../aws/queue-test-kit';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { createRequire } from 'node:module';
import { assetDirectory, functionModel, requireOf, runner } from '../lambda/handler-kit';

const SEEDS = Array.from({ length: 8 }, (_, index) => `seed-${index + 1}`);

/** Reads one item `reads` times, one request after the other. */
const READER = `
const { DynamoDBClient, GetItemCommand } = ${requireOf('@aws-sdk/client-dynamodb')};
const client = new DynamoDBClient({ maxAttempts: 1 });
exports.handler = async (event) => {
  for (let read = 0; read < event.reads; read += 1) {
    await client.send(new GetItemCommand({ TableName: process.env.TABLE, Key: { pk: { S: 'item' } } }));
  }
  return 'done';
};
`;

/** An ES module whose init reads with top-level `await` (Lambda runs it in the init phase); `die` ends its runtime. */
const READS_AT_INIT = `
import sdk from ${JSON.stringify(createRequire(__filename).resolve('@aws-sdk/client-dynamodb'))};
const client = new sdk.DynamoDBClient({ maxAttempts: 1 });
const { Item } = await client.send(new sdk.GetItemCommand({ TableName: process.env.TABLE, Key: { pk: { S: 'config' } }, ConsistentRead: true }));
export const handler = async (event) => {
  if (event.die) process.exit(1);
  return { config: Item?.value?.S ?? null };
};
`;

/** Sends two messages at once, as a runtime dead-lettering two records of a batch does. */
const TWO_SENDS = `
const { SQSClient, SendMessageCommand } = ${requireOf('@aws-sdk/client-sqs')};
const client = new SQSClient({ maxAttempts: 1 });
exports.handler = async () => {
  await Promise.all(['first', 'second'].map((body) => client.send(new SendMessageCommand({ QueueUrl: process.env.QUEUE_URL, MessageBody: body }))));
  return 'sent';
};
`;

const assets: { remove(): void }[] = [];
afterAll(() => {
  for (const asset of assets) asset.remove();
});

/**
 * Reads the invocation's remaining time, holds its thread 300 ms of real time (a loaded machine's slow turn; Atomics.wait
 * uses no CPU), reads it again, sleeps 1 s, and reads it a third time.
 */
const REMAINING_TIME = `
exports.handler = async (event, context) => {
  const readings = [context.getRemainingTimeInMillis()];
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 300);
  readings.push(context.getRemainingTimeInMillis());
  await new Promise((resolve) => setTimeout(resolve, 1000));
  readings.push(context.getRemainingTimeInMillis());
  return readings;
};
`;

/** A handler whose init holds its thread 11 s of real time (Atomics.wait: no CPU used), past Lambda's 10-second init limit. */
const SLOW_INIT = `
Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 11000);
exports.handler = async () => 'initialized';
`;

describe('the seeded scheduler, at what real time used to decide', () => {
  let table: string;
  beforeAll(async () => {
    table = uniqueTableName('crash-hold');
    await createTable(localClient(), table, { partitionKey: 'pk' });
  });

  test('takes no step between an invocation crashing and its outcome reaching the caller (its worker is terminated meanwhile)', async () => {
    const asset = assetDirectory({ 'index.js': READER });
    assets.push(asset);
    const scheduler = new SeededScheduler('crash-hold');
    let stepsAtCrash: number | undefined;
    const run = runner(functionModel(asset.directory), {
      environment: { TABLE: table },
      maxEnvironments: 2,
      scheduler,
      // the crashing invocation dies at its first request; the steady one has many requests still to go
      decideFault: (invocationKey, request) => {
        if (invocationKey !== 'crashing' || request.index !== 1) return 'none';
        stepsAtCrash = scheduler.figures().steps;
        return 'crash-before';
      },
    });
    try {
      const crashing = run.invoke({ reads: 1 }, 'crashing').then((outcome) => ({ outcome, steps: scheduler.figures().steps }));
      const steady = run.invoke({ reads: 30 }, 'steady');
      const [crashed, finished] = await Promise.all([crashing, steady]);
      expect(crashed.outcome).toMatchObject({ kind: 'crashed', atRequest: 1 });
      expect(finished).toMatchObject({ kind: 'returned', response: 'done' });
      expect(stepsAtCrash).toBeDefined();
      // the crash fired within a forward step (counted when it began); the outcome arrived before the scheduler took another
      expect(crashed.steps).toBe(stepsAtCrash);
    } finally {
      await run.stop();
    }
  });

  test("an init that awaits a DynamoDB read (an ES module's top-level await) gets its answer, on demand and as a spare, instead of timing out", async () => {
    await localClient().send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'config' }, value: { S: 'from-init' } } }));
    const asset = assetDirectory({ 'index.mjs': READS_AT_INIT });
    assets.push(asset);
    const run = runner(functionModel(asset.directory), { environment: { TABLE: table }, scheduler: new SeededScheduler('init-reads'), preInitialize: true });
    try {
      expect(await run.invoke({}, 'on-demand')).toEqual({ kind: 'returned', response: { config: 'from-init' } });
      // the runtime dies: its replacement initializes ahead, and its read waits until an invocation takes it
      expect(await run.invoke({ die: true }, 'dies')).toMatchObject({ kind: 'threw', errorName: 'Runtime.ExitError' });
      expect(await run.invoke({}, 'spare')).toEqual({ kind: 'returned', response: { config: 'from-init' } });
      expect(run.stats()).toMatchObject({ coldStarts: 2, preInitialized: 1 });
    } finally {
      await run.stop();
    }
  });

  test("an init slower in real time than Lambda's 10-second init limit still initializes under a scheduler: the machine's load does not time it out", async () => {
    // the init blocks its thread for 11 s of real time without using the CPU (a loaded machine's slow start); in the
    // simulation no time passes (the clock stands still while a worker starts), so it is no init timeout
    const asset = assetDirectory({ 'index.js': SLOW_INIT });
    assets.push(asset);
    const run = runner(functionModel(asset.directory), { scheduler: new SeededScheduler('slow-init') });
    try {
      expect(await run.invoke({}, 'after-a-slow-init')).toEqual({ kind: 'returned', response: 'initialized' });
    } finally {
      await run.stop();
    }
  });

  test("an invocation's remaining time is the scheduler's: real time spent does not count, a virtual sleep does", async () => {
    // the runtime's contention retry gives up by getRemainingTimeInMillis(): read in real time, the machine's load
    // decided whether a record was retried or returned as a failure, and a seed did not replay
    const asset = assetDirectory({ 'index.js': REMAINING_TIME });
    assets.push(asset);
    const run = runner(functionModel(asset.directory, { timeoutSeconds: 5 }), { scheduler: new SeededScheduler('remaining-time') });
    try {
      for (const invocation of ['first', 'second']) {
        expect(await run.invoke({}, invocation), invocation).toEqual({ kind: 'returned', response: [5000, 5000, 4000] });
      }
    } finally {
      await run.stop();
    }
  });

  test('orders two SQS sends of one invocation by the seed: each seed replays its order, and the seeds do not all agree', async () => {
    const asset = assetDirectory({ 'index.js': TWO_SENDS });
    assets.push(asset);
    const queues = new Map<string, SimulatedQueue>();
    const senders = new SqsSenders();
    const endpoint: SqsEndpoint = await startSqsEndpoint({ resolveQueue: (url) => queues.get(url), senders });
    try {
      const ordersOf = async (seed: string, attempt: number): Promise<string> => {
        const queue = makeQueue(queueModel(`Sends${attempt}${seed.replace(/\W/g, '')}`), { clock: frozenClock(), baseUrl: endpoint.endpoint });
        queues.set(queue.address.url, queue);
        const run = runner(functionModel(asset.directory), {
          environment: { QUEUE_URL: queue.address.url },
          sqsEndpoint: endpoint.endpoint,
          sqsSenders: senders,
          scheduler: new SeededScheduler(seed),
        });
        try {
          expect(await run.invoke({}, 'sends')).toMatchObject({ kind: 'returned', response: 'sent' });
        } finally {
          await run.stop();
        }
        return queue
          .messages()
          .map((message) => message.body)
          .join(',');
      };
      const orders = new Map<string, string>();
      for (const seed of SEEDS) orders.set(seed, await ordersOf(seed, 1));
      expect(new Set(orders.values()), JSON.stringify(Object.fromEntries(orders))).toEqual(new Set(['first,second', 'second,first']));
      for (const seed of SEEDS.slice(0, 3)) expect(await ordersOf(seed, 2)).toBe(orders.get(seed));
    } finally {
      await endpoint.stop();
    }
  });
});
