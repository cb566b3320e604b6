/**
 * Review ro12, RO12-1: one never-applied event dead-lettered twice. The consumer's dead-letter deduplication id is per
 * receive, so an invocation that dies between the dead-letter send and its ack dead-letters the same message again at
 * the next receive: the FIFO dead-letter queue holds two letters of one `SequenceReusedError` event. `dlq redrive` and
 * `fence redrive` must plan the event once (`reused`: write it again) and the other letter as its `copy` (deleted with
 * it, never written again); followed, the event is applied once. DynamoDB Local, the simulator's SQS endpoint, the real
 * SqsDeadLetterPublisher and CLI.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import { SqsDeadLetterPublisher } from '../../lambda/consumer/dead-letter';
import { createOrderedConsumer } from '../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { carryOrderedHeads } from '../../operator/ordered/outbox-heads';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { localClient } from '../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../support/proof/tables';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { cli } from './operator-services';
import { CLOCK_BUFFER_BYTES, VirtualClock } from '../../simulator/aws/clock';
import { recordingLogger } from '../lambda/helpers';

const SUBSCRIBER = 'Ledger';
const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const dynamo = localClient();
const clock = frozenClock();
/**
 * The operator's clock: now, after the events were written. The plan calls a letter never applied only while it is
 * provably younger than the window, whatever its error name (review ro12b, RO12B-8); by the queues' frozen clock the
 * events would be written later than now, an age that proves nothing (unproven).
 */
const operatorClock = new VirtualClock(new SharedArrayBuffer(CLOCK_BUFFER_BYTES), () => Date.now());
let endpoint: SqsEndpoint;
let sqs: SQSClient;
let queue: SimulatedQueue;
let dlq: SimulatedQueue;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;
const byUrl = new Map<string, SimulatedQueue>();

beforeAll(async () => {
  endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url) });
  sqs = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 's', secretAccessKey: 's' }, endpoint: endpoint.endpoint, maxAttempts: 1, logger: silentLogger });
  dlq = makeQueue(queueModel('RoDlq.fifo', { fifo: true, queueName: 'RoDlq.fifo', contentBasedDeduplication: false }), { clock, baseUrl: endpoint.endpoint });
  queue = makeQueue(queueModel('Ro.fifo', { fifo: true, queueName: 'Ro.fifo', redrive: { deadLetterQueue: 'Stack/RoDlq.fifo', maxReceiveCount: 3 } }), { clock, baseUrl: endpoint.endpoint, deadLetterQueue: dlq });
  for (const each of [queue, dlq]) byUrl.set(each.address.url, each);
  [inboxConfig, ledgerTable] = await Promise.all([createInbox(dynamo, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }), createKeyedTable(dynamo, 'ro12-ledger')]);
});
afterAll(async () => {
  sqs.destroy();
  dynamo.destroy();
  await endpoint.stop();
});

const newOutbox = (): Promise<ProducerConfig> => createOutbox(dynamo, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });
const handler = () =>
  createOrderedConsumer<{ step: string }>({
    client: dynamo,
    config: inboxConfig,
    deadLetter: new SqsDeadLetterPublisher({ queueUrl: dlq.address.url, client: sqs }),
    logger: recordingLogger().logger,
    metricsSink: () => undefined,
    handle: (event, tx) =>
      tx.update({ TableName: ledgerTable, Key: { pk: event.subject as string }, UpdateExpression: 'SET steps = list_append(if_not_exists(steps, :none), :s)', ExpressionAttributeValues: { ':none': [], ':s': [event.data.step] } }),
  });
let receipts = 0;
async function deliver(envelope: OrderedEnvelope, messageId = `m-${++receipts}`): Promise<unknown> {
  return handler()({ Records: [{ messageId, body: JSON.stringify(envelope), receiptHandle: `receipt-${++receipts}`, attributes: { ApproximateReceiveCount: '1', MessageGroupId: envelope.partitionkey } } as never] });
}
async function emit(config: ProducerConfig, aggregateId: string, step: string): Promise<OrderedEnvelope> {
  return (await new OrderedOutbox({ client: dynamo, config }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step } }] }))[0]!;
}
async function ledger(id: string): Promise<string[]> {
  return ((await DynamoDBDocumentClient.from(dynamo).send(new GetCommand({ TableName: ledgerTable, Key: { pk: id }, ConsistentRead: true }))).Item?.steps as string[] | undefined) ?? [];
}

test('RO12-1: two dead letters of one never-applied event are planned once (reused) and once as its copy; followed, the event applies once', async () => {
  const id = `pay-${Date.now()}`;
  const old = await newOutbox();
  await deliver(await emit(old, id, 'captured'));
  await deliver(await emit(old, id, 'settled'));
  expect(await ledger(id)).toEqual(['captured', 'settled']);
  // the outbox is replaced (heads gone) and a producer writes before the heads are carried: #1 again, a new event
  const replaced = await newOutbox();
  const refund = await emit(replaced, id, 'refunded');
  // dead-lettered (SequenceReusedError), and the invocation dies before its ack; the next receive of the same message
  // (a new receipt handle) dead-letters it again
  await deliver(refund, 'same-message');
  await deliver(refund, 'same-message');
  expect(dlq.counts().visible).toBe(2);

  const output = JSON.stringify({ format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600, outboxTable: replaced.outboxTableName, inboxTable: inboxConfig.inboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: dlq.address.url });
  const dry = await cli({ clock: operatorClock, endpoint }, 'dlq', 'redrive', '--subscriber-output', output, '--json');
  const decisions = (JSON.parse(dry.stdout) as { decisions: Array<{ decision: string; eventId: string; messageId: string; copyOf?: string; why: string }> }).decisions;
  const reused = decisions.filter((d) => d.decision === 'reused');
  expect(reused.map((d) => d.eventId)).toEqual([refund.id]);
  expect(decisions.filter((d) => d.decision === 'copy').map((d) => [d.eventId, d.copyOf])).toEqual([[refund.id, reused[0]!.messageId]]);
  expect(reused[0]!.why).toContain('1 more dead letter(s) of this event are its copies');
  const text = await cli({ clock: operatorClock, endpoint }, 'dlq', 'redrive', '--subscriber-output', output);
  expect(text.stdout).toContain('copy (deleted with --yes)');
  const fenceArgs = ['fence', 'redrive', SUBSCRIBER, '--table', inboxConfig.inboxTableName, '--dead-letter-queue', dlq.address.url, '--queue', queue.address.url, '--deduplication-window', '1h'];
  const fence = await cli({ clock: operatorClock, endpoint }, ...fenceArgs);
  expect(fence.stdout.match(/^ {2}reused /gm)).toHaveLength(1);
  expect(fence.stdout).toContain(`  copy     ${id} #1`);
  const fenceJson = JSON.parse((await cli({ clock: operatorClock, endpoint }, ...fenceArgs, '--json')).stdout) as { reused: Array<{ id: string }>; copies: Array<{ copyOf: string; eventId: string }> };
  expect(fenceJson.reused).toHaveLength(1);
  expect(fenceJson.copies.map((copy) => [copy.eventId, copy.copyOf])).toEqual([[refund.id, fenceJson.reused[0]!.id]]);
  expect(dlq.counts().total).toBe(2);

  // the runbook: carry the heads, then write each reused letter again through OrderedOutbox, then delete it
  await carryOrderedHeads({ client: dynamo, outbox: replaced, source: { kind: 'fences', subscribers: [{ subscriberName: SUBSCRIBER, inboxTable: inboxConfig.inboxTableName }] }, apply: true });
  for (const _ of reused) await deliver(await emit(replaced, id, 'refunded'));
  expect(await ledger(id)).toEqual(['captured', 'settled', 'refunded']);
});
