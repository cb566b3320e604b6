/**
 * An ordered subscriber's FIFO dead-letter queue read whole (review ro12, RO12-8; ro12b, RO12B-2). SQS returns no
 * message of a group while another of it is in flight, so one read sees at most one receive (10 letters) of an
 * aggregate: letters the commands leave in front of a group hide its later letters. `dlq redrive --yes` and
 * `fence redrive --yes` delete the proven duplicates and copies in front and read on, planning every letter read in
 * one plan; a read that can not go on (a dry run, `fence list`) says how many letters it did not read instead of
 * claiming nothing is held. DynamoDB Local, the simulator's FIFO SQS behind its endpoint, the real CLI.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { CLOCK_BUFFER_BYTES, VirtualClock } from '../../simulator/aws/clock';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import { createOrderedConsumer } from '../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { localClient } from '../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../support/proof/tables';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { cli } from './operator-services';
import { unreadGapAdvice } from '../../operator/cli/dead-letters/ordered-sends';
import { recordingLogger } from '../lambda/helpers';

const SUBSCRIBER = 'Ledger';
const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const dynamo = localClient();
const clock = frozenClock();
/** The operator's clock, at now: by the queues' frozen clock the events were written later than now, an age that proves nothing. */
const operatorClock = new VirtualClock(new SharedArrayBuffer(CLOCK_BUFFER_BYTES), () => Date.now());
let endpoint: SqsEndpoint;
let sqs: SQSClient;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;
const byUrl = new Map<string, SimulatedQueue>();
let queues = 0;

beforeAll(async () => {
  endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url) });
  sqs = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 's', secretAccessKey: 's' }, endpoint: endpoint.endpoint, maxAttempts: 1, logger: silentLogger });
  [inboxConfig, ledgerTable] = await Promise.all([createInbox(dynamo, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }), createKeyedTable(dynamo, 'whole-read-ledger')]);
});
afterAll(async () => {
  sqs.destroy();
  dynamo.destroy();
  await endpoint.stop();
});

/** A fresh FIFO subscriber queue and its FIFO dead-letter queue (no content-based deduplication). */
function fifoQueues(): { queue: SimulatedQueue; dlq: SimulatedQueue } {
  queues += 1;
  const dlq = makeQueue(queueModel(`WholeDlq${queues}.fifo`, { fifo: true, queueName: `WholeDlq${queues}.fifo`, contentBasedDeduplication: false }), { clock, baseUrl: endpoint.endpoint });
  const queue = makeQueue(queueModel(`Whole${queues}.fifo`, { fifo: true, queueName: `Whole${queues}.fifo`, redrive: { deadLetterQueue: `Stack/WholeDlq${queues}.fifo`, maxReceiveCount: 3 } }), {
    clock,
    baseUrl: endpoint.endpoint,
    deadLetterQueue: dlq,
  });
  for (const each of [queue, dlq]) byUrl.set(each.address.url, each);
  return { queue, dlq };
}

const newOutbox = (): Promise<ProducerConfig> => createOutbox(dynamo, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });
const handler = () =>
  createOrderedConsumer<{ step: string }>({
    client: dynamo,
    config: inboxConfig,
    logger: recordingLogger().logger,
    metricsSink: () => undefined,
    handle: (event, tx) =>
      tx.update({ TableName: ledgerTable, Key: { pk: event.subject as string }, UpdateExpression: 'SET steps = list_append(if_not_exists(steps, :none), :s)', ExpressionAttributeValues: { ':none': [], ':s': [event.data.step] } }),
  });
let receipts = 0;
async function deliverBody(body: string, group: string): Promise<unknown> {
  receipts += 1;
  return handler()({ Records: [{ messageId: `m-${receipts}`, body, receiptHandle: `receipt-${receipts}`, attributes: { ApproximateReceiveCount: '1', MessageGroupId: group } } as never] });
}
async function emit(config: ProducerConfig, aggregateId: string, step: string): Promise<OrderedEnvelope> {
  return (await new OrderedOutbox({ client: dynamo, config }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step } }] }))[0]!;
}
async function ledger(id: string): Promise<string[]> {
  return ((await DynamoDBDocumentClient.from(dynamo).send(new GetCommand({ TableName: ledgerTable, Key: { pk: id }, ConsistentRead: true }))).Item?.steps as string[] | undefined) ?? [];
}
/** A letter in the FIFO dead-letter queue as the runtime's publisher sends one: the aggregate as its group. */
function deadLetter(dlq: SimulatedQueue, envelope: OrderedEnvelope, errorName?: string): void {
  receipts += 1;
  dlq.send({
    body: JSON.stringify(envelope),
    messageAttributes: errorName === undefined ? {} : { [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: { DataType: 'String', StringValue: errorName } },
    messageGroupId: envelope.partitionkey,
    messageDeduplicationId: `dl-${receipts}`,
    origin: { via: 'send-message' },
  });
}
function output(outbox: ProducerConfig, queue: SimulatedQueue, dlq: SimulatedQueue): string {
  return JSON.stringify({ format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600, outboxTable: outbox.outboxTableName, inboxTable: inboxConfig.inboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: dlq.address.url });
}

/** #1 applied, ten copies of #1 dead-lettered in front of #2 (which was dead-lettered too): the aggregate is held up. */
async function tenCopiesInFront(id: string): Promise<{ outbox: ProducerConfig; queue: SimulatedQueue; dlq: SimulatedQueue; next: OrderedEnvelope }> {
  const { queue, dlq } = fifoQueues();
  const outbox = await newOutbox();
  const opened = await emit(outbox, id, 'opened');
  await deliverBody(JSON.stringify(opened), id);
  const next = await emit(outbox, id, 'credited');
  for (let copy = 0; copy < 10; copy++) deadLetter(dlq, opened);
  deadLetter(dlq, next);
  expect(await ledger(id)).toEqual(['opened']);
  return { outbox, queue, dlq, next };
}

test('RO12-8: fence list does not claim nothing is held while letters behind ten applied copies were not read', async () => {
  const id = `acct-list-${Date.now()}`;
  const { dlq } = await tenCopiesInFront(id);
  const result = await cli({ clock, endpoint }, 'fence', 'list', SUBSCRIBER, '--table', inboxConfig.inboxTableName, '--dead-letter-queue', dlq.address.url);
  expect(result.stdout).not.toContain('no aggregate is held up');
  expect(result.stdout).toContain('1 letter(s) of the dead-letter queue not read');
  expect(result.code).toBe(3);
  // a listing consumes nothing
  expect(dlq.counts()).toMatchObject({ visible: 11, inFlight: 0 });
});

test('RO12-8: dlq redrive --yes deletes the applied copies in front of the aggregate, reads on and redrives its real dead letter', async () => {
  const id = `acct-dlq-${Date.now()}`;
  const { outbox, queue, dlq, next } = await tenCopiesInFront(id);
  const subscriberOutput = output(outbox, queue, dlq);
  const dry = await cli({ clock, endpoint }, 'dlq', 'redrive', '--subscriber-output', subscriberOutput, '--json');
  const dryJson = JSON.parse(dry.stdout) as { truncated: boolean; unread: number };
  expect(dryJson).toMatchObject({ truncated: true, unread: 1 });
  expect(dry.code).toBe(3);
  const moved = await cli({ clock, endpoint }, 'dlq', 'redrive', '--subscriber-output', subscriberOutput, '--yes', '--json');
  const json = JSON.parse(moved.stdout) as { moved: string[]; deleted: string[]; unread: number; truncated: boolean; decisions: Array<{ decision: string; eventId: string }> };
  expect(json.deleted).toHaveLength(10);
  expect(json.moved).toHaveLength(1);
  expect(json).toMatchObject({ unread: 0, truncated: false });
  expect(json.decisions.filter((each) => each.decision === 'send').map((each) => each.eventId)).toEqual([next.id]);
  expect(moved.code).toBe(0);
  expect(dlq.counts().total).toBe(0);
  const redriven = queue.messages();
  expect(redriven).toHaveLength(1);
  await deliverBody(redriven[0]!.body, id);
  expect(await ledger(id)).toEqual(['opened', 'credited']);
});

test('RO12-8: fence redrive --yes reads past ten applied copies too', async () => {
  const id = `acct-fence-${Date.now()}`;
  const { queue, dlq } = await tenCopiesInFront(id);
  const result = await cli({ clock, endpoint }, 'fence', 'redrive', SUBSCRIBER, '--table', inboxConfig.inboxTableName, '--dead-letter-queue', dlq.address.url, '--queue', queue.address.url, '--yes', '--json');
  const json = JSON.parse(result.stdout) as { redriven: string[]; deleted: string[]; unread: number };
  expect(json.redriven).toHaveLength(1);
  expect(json.deleted).toHaveLength(10);
  expect(json.unread).toBe(0);
  expect(dlq.counts().total).toBe(0);
  await deliverBody(queue.messages()[0]!.body, id);
  expect(await ledger(id)).toEqual(['opened', 'credited']);
});

test('RO12B-2: eleven letters of one never-applied event are planned once, across reads: one reused, ten copies', async () => {
  const id = `acct-copies-${Date.now()}`;
  const { queue, dlq } = fifoQueues();
  const old = await newOutbox();
  await deliverBody(JSON.stringify(await emit(old, id, 'opened')), id);
  await deliverBody(JSON.stringify(await emit(old, id, 'credited')), id);
  // the outbox replaced, a new event under #1 dead-lettered eleven times (an invocation dying after each send)
  const replaced = await newOutbox();
  const refund = await emit(replaced, id, 'refunded');
  for (let copy = 0; copy < 11; copy++) deadLetter(dlq, refund, 'SequenceReusedError');
  const subscriberOutput = output(replaced, queue, dlq);
  const dry = JSON.parse((await cli({ clock: operatorClock, endpoint }, 'dlq', 'redrive', '--subscriber-output', subscriberOutput, '--json')).stdout) as { truncated: boolean; unread: number };
  expect(dry).toMatchObject({ truncated: true, unread: 1 });
  const text = await cli({ clock: operatorClock, endpoint }, 'dlq', 'redrive', '--subscriber-output', subscriberOutput);
  expect(text.stdout).toContain('1 letter(s) of the dead-letter queue not read');
  const moved = await cli({ clock: operatorClock, endpoint }, 'dlq', 'redrive', '--subscriber-output', subscriberOutput, '--yes', '--json');
  const json = JSON.parse(moved.stdout) as { deleted: string[]; unread: number; decisions: Array<{ decision: string; eventId: string; messageId: string; copyOf?: string }> };
  const reused = json.decisions.filter((each) => each.decision === 'reused');
  expect(reused.map((each) => each.eventId)).toEqual([refund.id]);
  const copies = json.decisions.filter((each) => each.decision === 'copy');
  expect(copies).toHaveLength(10);
  expect(new Set(copies.map((each) => each.copyOf))).toEqual(new Set([reused[0]!.messageId]));
  expect(json.deleted).toHaveLength(10);
  expect(json.unread).toBe(0);
  // the one letter left is the one to write again (then delete)
  expect(dlq.messages().map((message) => message.messageId)).toEqual([reused[0]!.messageId]);
});

/**
 * Review ro13, RO13-8: the fence at #2; the aggregate's group holds #4..#13 (dead-lettered behind the missing #3) and
 * then #3 itself (redriven earlier while its handler still failed, so it came back last). The ten in front all wait:
 * a round that sends and deletes nothing used to stop there, and every command pointed to `fence skip` for #3.
 */
async function tenWaitingInFront(id: string): Promise<{ outbox: ProducerConfig; queue: SimulatedQueue; dlq: SimulatedQueue; events: OrderedEnvelope[] }> {
  const { queue, dlq } = fifoQueues();
  const outbox = await newOutbox();
  const events: OrderedEnvelope[] = [];
  for (let n = 1; n <= 13; n++) events.push(await emit(outbox, id, `step ${n}`));
  await deliverBody(JSON.stringify(events[0]), id);
  await deliverBody(JSON.stringify(events[1]), id);
  for (let n = 3; n < 13; n++) deadLetter(dlq, events[n]!, 'SequenceGapError');
  deadLetter(dlq, events[2]!);
  return { outbox, queue, dlq, events };
}

/** Delivers what a redrive sent, in the queue's order, and returns the sequences sent. */
async function deliverSent(queue: SimulatedQueue, id: string): Promise<number[]> {
  const sent = queue.messages();
  for (const message of sent) await deliverBody(message.body, id);
  return sent.map((message) => Number((JSON.parse(message.body) as OrderedEnvelope).sequence));
}

test('RO13-8: dlq redrive --yes reads past ten waiting letters in front of the next event and redrives the whole run in sequence', async () => {
  const id = `acct-wait-${Date.now()}`;
  const { outbox, queue, dlq, events } = await tenWaitingInFront(id);
  const moved = await cli({ clock, endpoint }, 'dlq', 'redrive', '--subscriber-output', output(outbox, queue, dlq), '--yes', '--json');
  const json = JSON.parse(moved.stdout) as { moved: string[]; unread: number; gaps: Record<string, number[]> };
  expect(json).toMatchObject({ unread: 0, gaps: {} });
  expect(json.moved).toHaveLength(11);
  expect(moved.code).toBe(0);
  expect(dlq.counts().total).toBe(0);
  expect(await deliverSent(queue, id)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  expect(await ledger(id)).toEqual(events.map((_, index) => `step ${index + 1}`));
});

test('RO13-8: fence redrive --yes reads past ten waiting letters too', async () => {
  const id = `acct-wait-fence-${Date.now()}`;
  const { queue, dlq, events } = await tenWaitingInFront(id);
  const result = await cli({ clock, endpoint }, 'fence', 'redrive', SUBSCRIBER, '--table', inboxConfig.inboxTableName, '--dead-letter-queue', dlq.address.url, '--queue', queue.address.url, '--yes', '--json');
  const json = JSON.parse(result.stdout) as { redriven: string[]; unread: number; gaps: Record<string, number[]> };
  expect(json).toMatchObject({ unread: 0, gaps: {} });
  expect(json.redriven).toHaveLength(11);
  expect(result.code).toBe(0);
  expect(dlq.counts().total).toBe(0);
  expect(await deliverSent(queue, id)).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]);
  expect(await ledger(id)).toEqual(events.map((_, index) => `step ${index + 1}`));
});

test('RO13-8: a read that cannot read on never points to fence skip for a sequence that may be among the letters it did not read', async () => {
  const id = `acct-wait-list-${Date.now()}`;
  const { outbox, queue, dlq } = await tenWaitingInFront(id);
  const listed = await cli({ clock, endpoint }, 'fence', 'list', SUBSCRIBER, '--table', inboxConfig.inboxTableName, '--dead-letter-queue', dlq.address.url);
  const dry = await cli({ clock, endpoint }, 'dlq', 'redrive', '--subscriber-output', output(outbox, queue, dlq));
  const fenceDry = await cli({ clock, endpoint }, 'fence', 'redrive', SUBSCRIBER, '--table', inboxConfig.inboxTableName, '--dead-letter-queue', dlq.address.url, '--queue', queue.address.url);
  for (const result of [listed, dry, fenceDry]) {
    expect(result.code).toBe(3);
    expect(result.stdout).toContain(unreadGapAdvice([3], 1));
    expect(result.stdout).not.toContain('fence skip');
    expect(result.stdout).not.toContain('which no dead letter here holds');
  }
  // reading changed nothing
  expect(dlq.counts()).toMatchObject({ visible: 11, inFlight: 0 });
});
