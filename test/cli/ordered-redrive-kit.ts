/**
 * What the ordered operator tests of test/cli that run against DynamoDB Local share: the simulator's SQS endpoint
 * serving the file's FIFO queues (by URL and by ARN), the operator's frozen clock, and an outbox and an inbox table for
 * subscriber {@link SUBSCRIBER}. {@link useOrderedWorld} (the file makes its queues) or {@link useOrderedRedriveWorld}
 * (a subscriber queue and its dead-letter queue), called at a file's top level, sets them up before its tests and stops
 * them after. {@link orderedSubscriberOutput} and {@link aggregateWithOneApplied} serve the replay tests.
 */
import { afterAll, beforeAll } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import { createLogger } from '../../lambda/logger';
import { createOrderedConsumer } from '../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { localClient } from '../support/dynamodb-client';
import { createInbox, createOutbox } from '../support/proof/tables';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';

/** The subscriber whose inbox table and queues the file uses. */
export const SUBSCRIBER = 'Ledger';
/** The DynamoDB Local client (destroyed after the file's tests). */
export const client = localClient();
/** The clock of the file's queues. */
export const clock = frozenClock();
/** The endpoint (set before the file's tests). */
export let endpoint: SqsEndpoint;
/** The outbox table's producer configuration (set before the file's tests). */
export let outboxConfig: ProducerConfig;
/** The inbox table's consumer configuration for {@link SUBSCRIBER} (set before the file's tests). */
export let inboxConfig: ConsumerConfig;
/** The subscriber's FIFO queue of {@link useOrderedRedriveWorld} (set before the file's tests). */
export let queue: SimulatedQueue;
/** The subscriber's FIFO dead-letter queue of {@link useOrderedRedriveWorld} (set before the file's tests). */
export let dlq: SimulatedQueue;
const byUrl = new Map<string, SimulatedQueue>();
const byArn = new Map<string, SimulatedQueue>();

/**
 * Starts the endpoint, has `makeQueues` make the file's queues on it (the endpoint serves the queues it returns) and
 * creates the tables before the calling file's tests; stops the endpoint and the client after.
 */
export function useOrderedWorld(makeQueues: (endpointUrl: string) => SimulatedQueue[]): void {
  beforeAll(async () => {
    endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url), resolveQueueArn: (arn) => byArn.get(arn) });
    for (const each of makeQueues(endpoint.endpoint)) {
      byUrl.set(each.address.url, each);
      byArn.set(each.address.arn, each);
    }
    [outboxConfig, inboxConfig] = await Promise.all([createOutbox(client, { eventSource: 'orders' }), createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 })]);
  });
  afterAll(async () => {
    client.destroy();
    await endpoint.stop();
  });
}

/**
 * {@link useOrderedWorld} with subscriber queue {@link queue}, `<name>.fifo`, and its dead-letter queue {@link dlq},
 * `<name>Dlq.fifo` (SQS moves a message there after 3 receives; no content-based deduplication).
 */
export function useOrderedRedriveWorld(name: string): void {
  useOrderedWorld((baseUrl) => {
    dlq = makeQueue(queueModel(`${name}Dlq.fifo`, { fifo: true, queueName: `${name}Dlq.fifo`, contentBasedDeduplication: false }), { clock, baseUrl });
    queue = makeQueue(queueModel(`${name}.fifo`, { fifo: true, queueName: `${name}.fifo`, contentBasedDeduplication: false, redrive: { deadLetterQueue: `Stack/${name}Dlq.fifo`, maxReceiveCount: 3 } }), { clock, baseUrl, deadLetterQueue: dlq });
    return [queue, dlq];
  });
}

/**
 * The subscriber's Operator output (ordered, transactional) naming the file's tables, `subscriberQueue` and its
 * dead-letter queue `<name>Dlq.fifo`.
 */
export const orderedSubscriberOutput = (subscriberQueue: SimulatedQueue): string =>
  JSON.stringify({
    format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600,
    outboxTable: outboxConfig.outboxTableName, inboxTable: inboxConfig.inboxTableName, queueUrl: subscriberQueue.address.url, deadLetterQueueUrl: subscriberQueue.address.url.replace('.fifo', 'Dlq.fifo'),
  });

/** An aggregate `order-<now>-<name>` with #1 applied by the subscriber's ordered consumer and #2 written: what a replay sends is #2. */
export async function aggregateWithOneApplied(name: string): Promise<{ aggregate: string; events: OrderedEnvelope[] }> {
  const aggregate = `order-${Date.now()}-${name}`;
  const producer = new OrderedOutbox({ client, config: outboxConfig });
  const events: OrderedEnvelope[] = [];
  for (const step of ['placed', 'paid']) events.push((await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step } }] }))[0]!);
  const consumer = createOrderedConsumer<{ step: string }>({ client, config: inboxConfig, logger: createLogger({ sink: () => undefined }), metricsSink: () => undefined, handle: async () => undefined });
  await consumer({ Records: [{ messageId: `${name}-1`, body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1' } }] });
  return { aggregate, events };
}
