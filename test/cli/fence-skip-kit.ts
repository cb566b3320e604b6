/**
 * What the `fence skip` tests of test/cli that read the subscriber's dead-letter queue share: subscriber
 * {@link SUBSCRIBER}'s inbox table, an outbox table with the TTL attribute and the step ledger on DynamoDB Local, a
 * fresh FIFO subscriber queue and dead-letter queue per test ({@link fifoQueues}) on the endpoint of ordered-dlq-kit,
 * and the steps the tests take: write an aggregate's events with the first applied, send a letter, read the fence,
 * run `fence skip` with an Operator output. {@link useFenceSkipWorld}, called at a file's top level, sets them up before
 * the file's tests and stops them after.
 */
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { localClient } from '../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../support/proof/tables';
import { stepLedgerConsumer } from '../support/step-ledger';
import { makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { cli } from './operator-services';
import { byUrl, clock, endpoint, useOrderedDlqEndpoint } from './ordered-dlq-kit';

/** The subscriber whose fences the tests skip. */
export const SUBSCRIBER = 'Ledger';
/** The DynamoDB Local client (destroyed after the file's tests). */
export const dynamo = localClient();
/** The subscriber's inbox table (set before the file's tests). */
export let inboxConfig: ConsumerConfig;
/** The outbox table, its TTL attribute named (set before the file's tests). */
export let outbox: ProducerConfig;
/** The subscriber's step ledger (set before the file's tests). */
export let ledgerTable: string;
let queues = 0;
let letters = 0;

/** Starts the endpoint (ordered-dlq-kit) and creates the tables before the calling file's tests; stops them after. */
export function useFenceSkipWorld(): void {
  useOrderedDlqEndpoint();
  beforeAll(async () => {
    [inboxConfig, outbox, ledgerTable] = await Promise.all([
      createInbox(dynamo, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }),
      createOutbox(dynamo, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
      createKeyedTable(dynamo, 'skip-dlq-ledger'),
    ]);
  });
  afterAll(() => dynamo.destroy());
}

/** A fresh FIFO subscriber queue `Skip<n>.fifo` and its FIFO dead-letter queue `SkipDlq<n>.fifo` (3 receives), on the endpoint. */
export function fifoQueues(): { queue: SimulatedQueue; dlq: SimulatedQueue } {
  queues += 1;
  const dlq = makeQueue(queueModel(`SkipDlq${queues}.fifo`, { fifo: true, queueName: `SkipDlq${queues}.fifo` }), { clock, baseUrl: endpoint.endpoint });
  const queue = makeQueue(queueModel(`Skip${queues}.fifo`, { fifo: true, queueName: `Skip${queues}.fifo`, redrive: { deadLetterQueue: `Stack/SkipDlq${queues}.fifo`, maxReceiveCount: 3 } }), {
    clock,
    baseUrl: endpoint.endpoint,
    deadLetterQueue: dlq,
  });
  for (const each of [queue, dlq]) byUrl.set(each.address.url, each);
  return { queue, dlq };
}

/** The subscriber's Operator output (ordered, transactional) naming the file's tables, `queue` and `dlq`. */
export const output = (queue: SimulatedQueue, dlq: SimulatedQueue): string =>
  JSON.stringify({ format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600, outboxTable: outbox.outboxTableName, inboxTable: inboxConfig.inboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: dlq.address.url });

/** Sends `envelope` to `dlq` as a letter (its own deduplication id each time). */
export function deadLetter(dlq: SimulatedQueue, envelope: OrderedEnvelope): void {
  letters += 1;
  dlq.send({ body: JSON.stringify(envelope), messageGroupId: envelope.partitionkey, messageDeduplicationId: `dl-${letters}`, origin: { via: 'send-message' } });
}

/** `steps` events of `aggregateId`; the first applied (the fence at 1). */
export async function firstApplied(aggregateId: string, steps: readonly string[]): Promise<OrderedEnvelope[]> {
  const producer = new OrderedOutbox({ client: dynamo, config: outbox });
  const events: OrderedEnvelope[] = [];
  for (const step of steps) events.push((await producer.transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step } }] }))[0]!);
  const consumer = stepLedgerConsumer(dynamo, inboxConfig, ledgerTable);
  await consumer({ Records: [{ messageId: `m-${aggregateId}`, body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1', MessageGroupId: aggregateId } } as never] });
  return events;
}

/** The sequence the subscriber's fence of `aggregateId` stands at (a consistent read): 0 with no fence. */
export async function fenceAt(aggregateId: string): Promise<number> {
  const item = (await DynamoDBDocumentClient.from(dynamo).send(new GetCommand({ TableName: inboxConfig.inboxTableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: `${SUBSCRIBER}@sequence#${aggregateId}` }, ConsistentRead: true }))).Item;
  return Number(item?.appliedSequence ?? 0);
}

/** `fence skip` of `aggregateId` from 1 to `to` with `subscriberOutput`, reason `lost`, and `more` flags. */
export const skip = (aggregateId: string, subscriberOutput: string, to: number, ...more: string[]) =>
  cli({ clock, endpoint }, 'fence', 'skip', SUBSCRIBER, aggregateId, '--subscriber-output', subscriberOutput, '--from', '1', '--to', String(to), '--reason', 'lost', ...more);
