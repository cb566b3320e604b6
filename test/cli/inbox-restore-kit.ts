/**
 * What the inbox-restore tests of test/cli share (an ordered subscriber's inbox table restored to a point in time or
 * replaced, and its fences carried or accepted): the DynamoDB Local client, the simulator's SQS endpoint serving the
 * subscriber's FIFO queue (and, if asked, its dead-letter queue), the operator's frozen clock, an outbox table with the
 * TTL attribute, the subscriber's original inbox table and its step ledger ({@link ledgerSteps}), and the steps the
 * tests take: write an event a minute ago, apply it, read a table whole, restore what was read into a new inbox table,
 * name the tables in an Operator output, drain the queue. {@link useInboxRestoreWorld}, called at a file's top level,
 * sets them up before the file's tests and stops them after.
 */
import { DynamoDBDocumentClient, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import type { SqsBatchHandler } from '../../lambda/consumer/create-consumer';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { localClient } from '../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../support/proof/tables';
import { ledgerSteps, stepLedgerConsumer } from '../support/step-ledger';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { sqsRecord } from '../lambda/helpers';
import { cli as runCli, deliverOnce } from './operator-services';

/** The DynamoDB Local client (destroyed after the file's tests). */
export const client = localClient();
/** A document client over {@link client}. */
export const documents = DynamoDBDocumentClient.from(client);
/** The clock of the queues and of the operator commands. */
export const clock = frozenClock();
/** The deliveries before the restore happened a minute ago (the restored table is created after them). */
export const aMinuteAgo = (): Date => new Date(Date.now() - 60_000);
/** The subscriber the file names (set by {@link useInboxRestoreWorld}). */
export let subscriber: string;
/** The endpoint (set before the file's tests). */
export let endpoint: SqsEndpoint;
/** The subscriber's FIFO queue `<subscriber>.fifo` (set before the file's tests). */
export let queue: SimulatedQueue;
/** The subscriber's FIFO dead-letter queue `<subscriber>Dlq.fifo`, when the file asked for one (set before its tests). */
export let dlq: SimulatedQueue | undefined;
/** The outbox table's producer configuration, its TTL attribute named (set before the file's tests). */
export let outbox: ProducerConfig;
/** The subscriber's inbox table before any restore (set before the file's tests). */
export let original: ConsumerConfig;
/** The subscriber's step ledger, its business table (set before the file's tests). */
export let ledgerTable: string;

/** What the file's world holds besides the tables. */
export interface InboxRestoreWorldSettings {
  /** The subscriber the inbox tables and the Operator output name; its queue is `<subscriber>.fifo`. */
  readonly subscriber: string;
  /**
   * A dead-letter queue `<subscriber>Dlq.fifo` (no content-based deduplication) that SQS moves a message to after 3
   * receives; without it, the Operator output names `<queue URL>-dlq`, a queue nothing serves.
   * @default false
   */
  readonly deadLetterQueue?: boolean;
}

/**
 * Starts the endpoint with the subscriber's queues and creates the outbox table, the original inbox table and the
 * ledger before the calling file's tests; stops the endpoint and the client after.
 */
export function useInboxRestoreWorld(settings: InboxRestoreWorldSettings): void {
  subscriber = settings.subscriber;
  beforeAll(async () => {
    const byUrl = new Map<string, SimulatedQueue>();
    endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url) });
    const baseUrl = endpoint.endpoint;
    if (settings.deadLetterQueue === true) {
      dlq = makeQueue(queueModel(`${subscriber}Dlq.fifo`, { fifo: true, queueName: `${subscriber}Dlq.fifo`, contentBasedDeduplication: false }), { clock, baseUrl });
      queue = makeQueue(queueModel(`${subscriber}.fifo`, { fifo: true, queueName: `${subscriber}.fifo`, redrive: { deadLetterQueue: `Stack/${subscriber}Dlq.fifo`, maxReceiveCount: 3 } }), { clock, baseUrl, deadLetterQueue: dlq });
    } else {
      queue = makeQueue(queueModel(`${subscriber}.fifo`, { fifo: true, queueName: `${subscriber}.fifo` }), { clock, baseUrl });
    }
    for (const each of [queue, ...(dlq === undefined ? [] : [dlq])]) byUrl.set(each.address.url, each);
    [outbox, original, ledgerTable] = await Promise.all([
      createOutbox(client, { eventSource: 'accounts', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
      createInbox(client, { subscriberName: subscriber, deduplicationWindowSeconds: 3600 }),
      createKeyedTable(client, `${subscriber.toLowerCase()}-ledger`),
    ]);
  });
  afterAll(async () => {
    client.destroy();
    await endpoint.stop();
  });
}

/** Runs the operator CLI in-process with the file's clock and endpoint. */
export const cli = (...args: string[]) => runCli({ clock, endpoint }, ...args);

/** The subscriber's ordered consumer of `inbox`, applying into the ledger; `now` its clock. @default now: the consumer's own clock */
export function consumer(inbox: ConsumerConfig, now?: () => Date): SqsBatchHandler {
  return stepLedgerConsumer(client, inbox, ledgerTable, now === undefined ? {} : { now });
}

/** The steps the subscriber applied to `aggregateId`, in order. */
export const ledger = (aggregateId: string): Promise<string[]> => ledgerSteps(client, ledgerTable, aggregateId);

/** Writes event `step` of `aggregateId` to the outbox, a minute ago. */
export async function emit(aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config: outbox, now: aMinuteAgo }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

/** Every item of `table` (a consistent scan): what a restore to this point would hold. */
export async function items(table: string): Promise<Array<Record<string, unknown>>> {
  return (await documents.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];
}

/** A new inbox table holding `snapshot` (what a point-in-time restore into a new table holds). */
export async function restoredInbox(snapshot: ReadonlyArray<Record<string, unknown>>): Promise<ConsumerConfig> {
  const restored = await createInbox(client, { subscriberName: subscriber, deduplicationWindowSeconds: 3600 });
  for (const item of snapshot) await documents.send(new PutCommand({ TableName: restored.inboxTableName, Item: item }));
  return restored;
}

/** The subscriber's Operator output (ordered, transactional) naming the outbox table, `inbox` and its queues. */
export function output(inbox: ConsumerConfig): string {
  return JSON.stringify({
    format: 1, subscriberName: subscriber, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600,
    outboxTable: outbox.outboxTableName, inboxTable: inbox.inboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: dlq?.address.url ?? `${queue.address.url}-dlq`,
  });
}

/** Delivers the subscriber's queue to its consumer of `inbox` until a receive finds it empty. */
export async function drain(inbox: ConsumerConfig): Promise<void> {
  while ((await deliverOnce(queue, consumer(inbox))) > 0);
}

/** A new aggregate id, `account-<name>-<now>-<random>`. */
export const id = (name: string): string => `account-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

/**
 * A new aggregate `name`: events `opened`, `credited 100` and `debited 40` written a minute ago and all applied on the
 * original inbox table, and `restorePoint`, what that table held after `opened` only (what a restore to then holds).
 */
export async function threeAppliedRestoredAfterFirst(name: string): Promise<{ aggregateId: string; events: OrderedEnvelope[]; restorePoint: Array<Record<string, unknown>> }> {
  const aggregateId = id(name);
  const events = [await emit(aggregateId, 'opened'), await emit(aggregateId, 'credited 100'), await emit(aggregateId, 'debited 40')];
  const before = consumer(original, aMinuteAgo);
  await before({ Records: [sqsRecord(JSON.stringify(events[0]))] });
  const restorePoint = await items(original.inboxTableName);
  for (const event of events.slice(1)) await before({ Records: [sqsRecord(JSON.stringify(event))] });
  return { aggregateId, events, restorePoint };
}

/** The items of inbox table `table` of aggregate `aggregateId` and event `eventId` only (its fence and the event's record). */
export async function itemsOf(table: string, aggregateId: string, eventId: string): Promise<Array<Record<string, unknown>>> {
  return (await items(table)).filter((item) => String(item[TABLE_SCHEMA.PARTITION_KEY]).endsWith(eventId) || String(item[TABLE_SCHEMA.PARTITION_KEY]).endsWith(aggregateId));
}
