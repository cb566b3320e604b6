/**
 * What the ordered dead-letter tests of test/cli share: the simulator's SQS endpoint serving the FIFO queues a file
 * registers in {@link byUrl}, an SDK client on it (one attempt, silent), the operator's frozen clock, an ordered
 * event's body, a subscriber queue and its dead-letter queue ({@link fifoQueuePair}), and an acting read of the
 * dead-letter queue against a fence at #1 ({@link readBehindFenceAtOne}). {@link useOrderedDlqEndpoint}, called at a
 * file's top level, starts the endpoint before its tests and stops it after.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import { planOrderedRedrive, type IFenceReader } from '../../operator/ordered/redrive-plan';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { readOrderedDeadLetters, type OrderedQueueRead } from '../../operator/cli/dead-letters/ordered-queue-read';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';

const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** The clock of the file's queues. */
export const clock = frozenClock();
/** The file's queues by URL, as the endpoint resolves them. */
export const byUrl = new Map<string, SimulatedQueue>();
/** The endpoint (set before the file's tests). */
export let endpoint: SqsEndpoint;
/** The SDK client on {@link endpoint} (set before the file's tests). */
export let sqs: SQSClient;

/** Starts the endpoint and its client before the calling file's tests, and stops them after. */
export function useOrderedDlqEndpoint(): void {
  beforeAll(async () => {
    endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url) });
    sqs = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 's', secretAccessKey: 's' }, endpoint: endpoint.endpoint, maxAttempts: 1, logger: silentLogger });
  });
  afterAll(async () => {
    sqs.destroy();
    await endpoint.stop();
  });
}

/** The body of ordered event `id`, `sequence` of `aggregateId`, as the ordered relay delivers it. */
export const orderedBody = (id: string, aggregateId: string, sequence: number): string =>
  JSON.stringify({ specversion: '1.0', id, source: 's', type: 'T', time: '2026-01-01T00:00:00.000Z', datacontenttype: 'application/json', data: {}, partitionkey: aggregateId, sequence: String(sequence).padStart(16, '0') });

/**
 * A FIFO subscriber queue `<name>Q.fifo` and its dead-letter queue `<name>Dlq.fifo` (no content-based deduplication),
 * on {@link endpoint} and registered in {@link byUrl}. With `maxReceiveCount`, SQS moves a message of the queue to the
 * dead-letter queue after that many receives.
 * @default maxReceiveCount undefined: the queue has no redrive policy (letters are sent to the dead-letter queue by hand)
 */
export function fifoQueuePair(name: string, maxReceiveCount?: number): { queue: SimulatedQueue; dlq: SimulatedQueue } {
  const dlq = makeQueue(queueModel(`${name}Dlq.fifo`, { fifo: true, queueName: `${name}Dlq.fifo`, contentBasedDeduplication: false }), { clock, baseUrl: endpoint.endpoint });
  const queue = maxReceiveCount === undefined
    ? makeQueue(queueModel(`${name}Q.fifo`, { fifo: true, queueName: `${name}Q.fifo` }), { clock, baseUrl: endpoint.endpoint })
    : makeQueue(queueModel(`${name}Q.fifo`, { fifo: true, queueName: `${name}Q.fifo`, redrive: { deadLetterQueue: `Stack/${name}Dlq.fifo`, maxReceiveCount } }), { clock, baseUrl: endpoint.endpoint, deadLetterQueue: dlq });
  for (const each of [queue, dlq]) byUrl.set(each.address.url, each);
  return { queue, dlq };
}

/**
 * An acting read of `dlq` through `client` (every letter selected), planned against a fence at #1 (event `E1`) and an
 * inbox that has seen nothing, sending what the fence admits to `queue`. It does not release what it holds.
 */
export async function readBehindFenceAtOne(client: SQSClient, dlq: SimulatedQueue, queue: SimulatedQueue): Promise<OrderedQueueRead> {
  const fences: IFenceReader = { get: async () => ({ appliedSequence: 1, appliedEventId: 'E1' }) };
  return readOrderedDeadLetters({
    sqs: client,
    deadLetterQueueUrl: dlq.address.url,
    select: (message) => ({ id: message.messageId, body: message.body }),
    plan: (letters) => planOrderedRedrive(letters, fences, { find: async () => undefined }),
    sendTo: queue.address.url,
  });
}
