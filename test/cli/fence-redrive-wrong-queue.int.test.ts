/**
 * `fence redrive` with a dead-letter queue that is not the subscriber's (review ro13, RO13-1): refused unless --queue's
 * RedrivePolicy names it, and a letter naming another subscriber is left where it is, never deleted as applied.
 * DynamoDB Local, the simulator's FIFO SQS behind its endpoint, the real CLI.
 */import { SQSClient } from '@aws-sdk/client-sqs';
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
import { recordingLogger } from '../lambda/helpers';

const SUBSCRIBER = 'Ledger';
const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const dynamo = localClient();
const clock = frozenClock();
let endpoint: SqsEndpoint;
let sqs: SQSClient;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;
const byUrl = new Map<string, SimulatedQueue>();
let queues = 0;

beforeAll(async () => {
  endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url) });
  sqs = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 's', secretAccessKey: 's' }, endpoint: endpoint.endpoint, maxAttempts: 1, logger: silentLogger });
  [inboxConfig, ledgerTable] = await Promise.all([createInbox(dynamo, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }), createKeyedTable(dynamo, 'ro13-wrongq-ledger')]);
});
afterAll(async () => {
  sqs.destroy();
  dynamo.destroy();
  await endpoint.stop();
});

/** A fresh FIFO subscriber queue and its FIFO dead-letter queue (no content-based deduplication). */
function fifoQueues(): { queue: SimulatedQueue; dlq: SimulatedQueue } {
  queues += 1;
  const dlq = makeQueue(queueModel(`Ro13Dlq${queues}.fifo`, { fifo: true, queueName: `Ro13Dlq${queues}.fifo`, contentBasedDeduplication: false }), { clock, baseUrl: endpoint.endpoint });
  const queue = makeQueue(queueModel(`Ro13Q${queues}.fifo`, { fifo: true, queueName: `Ro13Q${queues}.fifo`, redrive: { deadLetterQueue: `Stack/Ro13Dlq${queues}.fifo`, maxReceiveCount: 3 } }), {
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
async function ledger_(id: string): Promise<string[]> {
  return ((await DynamoDBDocumentClient.from(dynamo).send(new GetCommand({ TableName: ledgerTable, Key: { pk: id }, ConsistentRead: true }))).Item?.steps as string[] | undefined) ?? [];
}
function output(outbox: ProducerConfig, queue: SimulatedQueue, dlq: SimulatedQueue): string {
  return JSON.stringify({ format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600, outboxTable: outbox.outboxTableName, inboxTable: inboxConfig.inboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: dlq.address.url });
}


function shippingLetter(dlq: SimulatedQueue, envelope: OrderedEnvelope, withSubscriber: boolean): void {
  receipts += 1;
  dlq.send({
    body: JSON.stringify(envelope),
    messageAttributes: withSubscriber ? { [DEAD_LETTER_ATTRIBUTE.SUBSCRIBER]: { DataType: 'String', StringValue: 'Shipping' }, [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: { DataType: 'String', StringValue: 'HandlerError' } } : {},
    messageGroupId: envelope.partitionkey,
    messageDeduplicationId: `ship-${receipts}`,
    origin: { via: 'send-message' },
  });
}

test("fence redrive --yes with another subscriber's dead-letter queue is refused and deletes nothing", async () => {
  const id = `acct-wrongq-${Date.now()}`;
  const ledger = fifoQueues();
  const shipping = fifoQueues();
  const outbox = await newOutbox();
  const e1 = await emit(outbox, id, 'opened');
  const e2 = await emit(outbox, id, 'credited');
  await deliverBody(JSON.stringify(e1), id);
  await deliverBody(JSON.stringify(e2), id);
  expect(await ledger_(id)).toEqual(['opened', 'credited']);
  // Shipping's handler failed both events: one letter its consumer sent (names Shipping), one SQS moved (no attributes)
  shippingLetter(shipping.dlq, e1, true);
  shippingLetter(shipping.dlq, e2, false);
  const result = await cli({ clock, endpoint }, 'fence', 'redrive', SUBSCRIBER, '--table', inboxConfig.inboxTableName, '--dead-letter-queue', shipping.dlq.address.url, '--queue', ledger.queue.address.url, '--yes');
  expect(result.code).toBe(3);
  expect(result.stderr).toContain('is not the dead-letter queue of --queue');
  expect(shipping.dlq.counts().total).toBe(2);
  expect(ledger.queue.counts().total).toBe(0);
  // with --subscriber-output naming Ledger's queues, a --dead-letter-queue of another is a usage error
  const typed = await cli({ clock, endpoint }, 'fence', 'redrive', SUBSCRIBER, '--subscriber-output', output(outbox, ledger.queue, ledger.dlq), '--dead-letter-queue', shipping.dlq.address.url, '--yes');
  expect(typed.code).toBe(2);
  expect(shipping.dlq.counts().total).toBe(2);
});

test("fence redrive --yes leaves a letter naming another subscriber in the subscriber's own dead-letter queue", async () => {
  const id = `acct-otherletter-${Date.now()}`;
  const ledger = fifoQueues();
  const outbox = await newOutbox();
  const e1 = await emit(outbox, id, 'opened');
  await deliverBody(JSON.stringify(e1), id);
  // a letter of Shipping's (its consumer named it) in Ledger's dead-letter queue: Ledger applied #1, Shipping did not
  shippingLetter(ledger.dlq, e1, true);
  const result = await cli({ clock, endpoint }, 'fence', 'redrive', SUBSCRIBER, '--subscriber-output', output(outbox, ledger.queue, ledger.dlq), '--yes');
  expect(result.stdout).toContain('redrove 0; deleted 0');
  expect(result.stdout).toContain('1 dead letter(s) of other subscribers');
  expect(ledger.dlq.counts().total).toBe(1);
});
