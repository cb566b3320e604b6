/**
 * An ordered subscriber's inbox table restored (into a new table) without `fence carry` (review ro13, RO13-10): its
 * fences went back while its business tables keep what it applied since. `dlq redrive --yes` and `fence redrive --yes`
 * refuse to send the letters of such an aggregate, as `fence replay` refuses its events, until the fences are carried.
 * Against DynamoDB Local and the simulator's SQS, with the real OrderedOutbox, the ordered consumer and the CLI.
 */import { DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { createOrderedConsumer } from '../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { createLogger } from '../../lambda/logger';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { localClient } from '../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../support/proof/tables';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { sqsRecord } from '../lambda/helpers';
import { cli as runCli, deliverOnce } from './operator-services';

const SUBSCRIBER = 'Ro13Redrive';
const client = localClient();
const documents = DynamoDBDocumentClient.from(client);
const clock = frozenClock();
/** The deliveries before the restore happened a minute ago (the restored table is created after them). */
const aMinuteAgo = () => new Date(Date.now() - 60_000);
let endpoint: SqsEndpoint;
let queue: SimulatedQueue;
let dlq: SimulatedQueue;
let outbox: ProducerConfig;
let original: ConsumerConfig;
let ledgerTable: string;

beforeAll(async () => {
  const byUrl = new Map<string, SimulatedQueue>();
  endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url) });
  dlq = makeQueue(queueModel('Ro13RedriveDlq.fifo', { fifo: true, queueName: 'Ro13RedriveDlq.fifo', contentBasedDeduplication: false }), { clock, baseUrl: endpoint.endpoint });
  queue = makeQueue(queueModel('Ro13Redrive.fifo', { fifo: true, queueName: 'Ro13Redrive.fifo', redrive: { deadLetterQueue: 'Stack/Ro13RedriveDlq.fifo', maxReceiveCount: 3 } }), { clock, baseUrl: endpoint.endpoint, deadLetterQueue: dlq });
  byUrl.set(queue.address.url, queue);
  byUrl.set(dlq.address.url, dlq);
  [outbox, original, ledgerTable] = await Promise.all([
    createOutbox(client, { eventSource: 'accounts', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
    createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }),
    createKeyedTable(client, 'ro13-redrive-ledger'),
  ]);
});
afterAll(async () => {
  client.destroy();
  await endpoint.stop();
});

const cli = (...args: string[]) => runCli({ clock, endpoint }, ...args);

function consumer(inbox: ConsumerConfig, now?: () => Date) {
  return createOrderedConsumer<{ step: string }>({
    client,
    config: inbox,
    logger: createLogger({ sink: () => undefined }),
    metricsSink: () => undefined,
    ...(now === undefined ? {} : { now }),
    handle: (event, tx) =>
      tx.update({
        TableName: ledgerTable,
        Key: { pk: event.subject as string },
        UpdateExpression: 'SET steps = list_append(if_not_exists(steps, :none), :step)',
        ExpressionAttributeValues: { ':none': [], ':step': [event.data.step] },
      }),
  });
}

async function ledger(aggregateId: string): Promise<string[]> {
  const item = (await documents.send(new GetCommand({ TableName: ledgerTable, Key: { pk: aggregateId }, ConsistentRead: true }))).Item;
  return (item?.steps as string[] | undefined) ?? [];
}

async function emit(aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config: outbox, now: aMinuteAgo }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

async function items(table: string): Promise<Array<Record<string, unknown>>> {
  return (await documents.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];
}

/** A new inbox table holding `snapshot` (what a point-in-time restore into a new table holds). */
async function restoredInbox(snapshot: ReadonlyArray<Record<string, unknown>>): Promise<ConsumerConfig> {
  const restored = await createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 });
  for (const item of snapshot) await documents.send(new PutCommand({ TableName: restored.inboxTableName, Item: item }));
  return restored;
}

function output(inbox: ConsumerConfig): string {
  return JSON.stringify({
    format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600,
    outboxTable: outbox.outboxTableName, inboxTable: inbox.inboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: dlq.address.url,
  });
}

async function drain(inbox: ConsumerConfig): Promise<void> {
  while ((await deliverOnce(queue, consumer(inbox))) > 0);
}

const id = (name: string): string => `account-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

for (const command of ['dlq redrive', 'fence redrive'] as const) {
  test(`after an inbox restore without a carry, ${command} --yes leaves an applied event's letter above the restored fence (exit 3) until the fences are carried`, async () => {
    const aggregateId = id(command.replace(' ', '-'));
    const events = [await emit(aggregateId, 'opened'), await emit(aggregateId, 'credited 100')];
    const before = consumer(original, aMinuteAgo);
    await before({ Records: [sqsRecord(JSON.stringify(events[0]))] });
    const restorePoint = await items(original.inboxTableName);
    await before({ Records: [sqsRecord(JSON.stringify(events[1]))] });
    // a copy of #2 (applied) in the DLQ: an invocation that committed it and died before its ack, maxReceiveCount times
    dlq.send({ body: JSON.stringify(events[1]), messageAttributes: {}, messageGroupId: aggregateId, messageDeduplicationId: `copy-2-${aggregateId}`, origin: { via: 'send-message' } });
    const restored = await restoredInbox(restorePoint);
    const args = command === 'dlq redrive' ? ['dlq', 'redrive', '--subscriber-output', output(restored), '--yes'] : ['fence', 'redrive', SUBSCRIBER, '--subscriber-output', output(restored), '--yes'];
    const moved = await cli(...args);
    expect(moved.code).toBe(3);
    expect(moved.stdout).toContain(`before inbox table '${restored.inboxTableName}' was created`);
    expect(moved.stdout).toContain('fence carry --from-table');
    await drain(restored);
    expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100']);
    expect(dlq.counts().total).toBe(1);
    // once the fences are carried from the table restored from, the letter is an applied copy, not sent
    const carried = await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', restored.inboxTableName, '--outbox-table', outbox.outboxTableName, '--yes');
    expect(carried.code).toBe(0);
    const after = await cli(...args);
    expect(after.code).toBe(0);
    await drain(restored);
    expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100']);
    expect(dlq.counts().total).toBe(0);
  });
}

test('a carry record copied by a second restore is not trusted: fence replay refuses until the fences are carried into the new table', async () => {
  const aggregateId = id('twice');
  const events = [await emit(aggregateId, 'opened'), await emit(aggregateId, 'credited 100'), await emit(aggregateId, 'debited 40')];
  const before = consumer(original, aMinuteAgo);
  await before({ Records: [sqsRecord(JSON.stringify(events[0]))] });
  const firstPoint = await items(original.inboxTableName);
  for (const event of events.slice(1)) await before({ Records: [sqsRecord(JSON.stringify(event))] });
  // first restore, done by the runbook: T2, fences carried from T1
  const t2 = await restoredInbox(firstPoint);
  expect((await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', t2.inboxTableName, '--outbox-table', outbox.outboxTableName, '--yes')).code).toBe(0);
  // T2 is now the subscriber's table; a restore point after the carry (it holds the carry record), then #4 applied in T2
  const secondPoint = await items(t2.inboxTableName);
  const closed = await emit(aggregateId, 'closed');
  await consumer(t2, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(closed))] });
  expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100', 'debited 40', 'closed']);
  // second incident: T2 restored to the point after the carry, into T3, no carry this time
  const t3 = await restoredInbox(secondPoint);
  const replayed = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(t3), '--yes');
  expect(replayed.code).toBe(3);
  expect(replayed.stderr).toContain(`before inbox table '${t3.inboxTableName}' was created`);
  await drain(t3);
  expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100', 'debited 40', 'closed']);
  // carried from T2 into T3, the fence stands at #4: nothing to send
  expect((await cli('fence', 'carry', SUBSCRIBER, '--from-table', t2.inboxTableName, '--table', t3.inboxTableName, '--outbox-table', outbox.outboxTableName, '--yes')).code).toBe(0);
  const after = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(t3), '--yes');
  expect(after.code).toBe(0);
  await drain(t3);
  expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100', 'debited 40', 'closed']);
});
