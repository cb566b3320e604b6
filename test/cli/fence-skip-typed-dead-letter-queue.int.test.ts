/**
 * `fence skip` with the table flags (no Operator output) reads the dead-letter queue only when the typed subscriber
 * queue's RedrivePolicy names it (review ro15b, RO15B-2): an empty FIFO queue typed as --dead-letter-queue (staging's,
 * another subscriber's) passed the skip past an event that sat in the subscriber's own dead-letter queue. DynamoDB
 * Local, the simulator's FIFO SQS behind its endpoint, the real CLI and @aws-sdk/client-sqs.
 */
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import { createLogger } from '../../lambda/logger';
import { createOrderedConsumer } from '../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { localClient } from '../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../support/proof/tables';
import { makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { SKIP_NEEDS_QUEUE_LINE } from '../../operator/cli/fence-skip-queue';
import { cli } from './operator-services';
import { byUrl, clock, endpoint, useOrderedDlqEndpoint } from './ordered-dlq-kit';

const SUBSCRIBER = 'Ledger';
const dynamo = localClient();
let inboxConfig: ConsumerConfig;
let outbox: ProducerConfig;
let ledgerTable: string;
let queues = 0;

useOrderedDlqEndpoint();
beforeAll(async () => {
  [inboxConfig, outbox, ledgerTable] = await Promise.all([
    createInbox(dynamo, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }),
    createOutbox(dynamo, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
    createKeyedTable(dynamo, 'skip-dlq-ledger'),
  ]);
});
afterAll(() => dynamo.destroy());

/** A fresh FIFO subscriber queue and its FIFO dead-letter queue. */
function fifoQueues(): { queue: SimulatedQueue; dlq: SimulatedQueue } {
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

const output = (queue: SimulatedQueue, dlq: SimulatedQueue): string =>
  JSON.stringify({ format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600, outboxTable: outbox.outboxTableName, inboxTable: inboxConfig.inboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: dlq.address.url });

let letters = 0;
function deadLetter(dlq: SimulatedQueue, envelope: OrderedEnvelope): void {
  letters += 1;
  dlq.send({ body: JSON.stringify(envelope), messageGroupId: envelope.partitionkey, messageDeduplicationId: `dl-${letters}`, origin: { via: 'send-message' } });
}

/** `steps` events of `aggregateId`; the first applied (the fence at 1). */
async function firstApplied(aggregateId: string, steps: readonly string[]): Promise<OrderedEnvelope[]> {
  const producer = new OrderedOutbox({ client: dynamo, config: outbox });
  const events: OrderedEnvelope[] = [];
  for (const step of steps) events.push((await producer.transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step } }] }))[0]!);
  const consumer = createOrderedConsumer<{ step: string }>({
    client: dynamo,
    config: inboxConfig,
    logger: createLogger({ sink: () => undefined }),
    metricsSink: () => undefined,
    handle: (event, tx) => tx.update({ TableName: ledgerTable, Key: { pk: aggregateId }, UpdateExpression: 'SET steps = list_append(if_not_exists(steps, :none), :s)', ExpressionAttributeValues: { ':none': [], ':s': [event.data.step] } }),
  });
  await consumer({ Records: [{ messageId: `m-${aggregateId}`, body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1', MessageGroupId: aggregateId } } as never] });
  return events;
}

async function fenceAt(aggregateId: string): Promise<number> {
  const item = (await DynamoDBDocumentClient.from(dynamo).send(new GetCommand({ TableName: inboxConfig.inboxTableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: `${SUBSCRIBER}@sequence#${aggregateId}` }, ConsistentRead: true }))).Item;
  return Number(item?.appliedSequence ?? 0);
}

const skip = (aggregateId: string, subscriberOutput: string, to: number, ...more: string[]) =>
  cli({ clock, endpoint }, 'fence', 'skip', SUBSCRIBER, aggregateId, '--subscriber-output', subscriberOutput, '--from', '1', '--to', String(to), '--reason', 'lost', ...more);

const typedSkip = (aggregateId: string, ...queues: string[]) =>
  cli({ clock, endpoint }, 'fence', 'skip', SUBSCRIBER, aggregateId, '--table', inboxConfig.inboxTableName, '--outbox-table', outbox.outboxTableName, ...queues, '--from', '1', '--to', '2', '--reason', 'lost', '--yes', '--json');

describe("fence skip ties a typed --dead-letter-queue to the subscriber's queue (RO15B-2)", () => {
  test('a FIFO queue that is not the subscriber queue\'s dead-letter queue is refused, the fence stays (the real one holds #2)', async () => {
    const id = `acct-typed-${Date.now()}`;
    const { queue, dlq } = fifoQueues();
    const events = await firstApplied(id, ['opened', 'credited', 'debited']);
    deadLetter(dlq, events[1]!);
    // the subscriber's output refuses the skip, as the letter of #2 is there
    expect((await skip(id, output(queue, dlq), 2, '--yes')).code).toBe(3);
    // another FIFO queue (staging's dead-letter queue, another subscriber's), empty, typed with the table flags
    const other = fifoQueues().dlq;
    const noQueue = await typedSkip(id, '--dead-letter-queue', other.address.url);
    expect({ code: noQueue.code, fence: await fenceAt(id) }).toEqual({ code: 2, fence: 1 });
    expect(noQueue.stderr).toContain(SKIP_NEEDS_QUEUE_LINE);
    const wrong = await typedSkip(id, '--queue', queue.address.url, '--dead-letter-queue', other.address.url);
    expect({ code: wrong.code, fence: await fenceAt(id) }).toEqual({ code: 3, fence: 1 });
    expect(wrong.stderr).toContain(`--dead-letter-queue ${other.address.url} is not the dead-letter queue of --queue ${queue.address.url}`);
    // the subscriber's own pair: read, and the letter of #2 refuses the skip
    const own = await typedSkip(id, '--queue', queue.address.url, '--dead-letter-queue', dlq.address.url);
    expect({ code: own.code, fence: await fenceAt(id) }).toEqual({ code: 3, fence: 1 });
    expect(own.stderr).toContain('the dead-letter queue holds');
  });

  test('the subscriber\'s own queue and dead-letter queue, typed, with nothing there: the skip moves the fence', async () => {
    const id = `acct-typed-ok-${Date.now()}`;
    const { queue, dlq } = fifoQueues();
    await firstApplied(id, ['opened', 'credited', 'debited']);
    const own = await typedSkip(id, '--queue', queue.address.url, '--dead-letter-queue', dlq.address.url);
    expect({ code: own.code, fence: await fenceAt(id) }).toEqual({ code: 0, fence: 2 });
  });
});
