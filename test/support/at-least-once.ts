/**
 * An in-memory SQS queue with at-least-once delivery, for the proof tests of the processing modes: it delivers
 * batches to a consumer handler the way an SQS event source mapping with ReportBatchItemFailures does, and adds the
 * behaviours that make exactly-once hard, driven by a seeded random generator so a failing run can be replayed:
 * - duplicate deliveries: an acknowledged message is delivered again (SQS's "you might get that message copy again");
 * - concurrent deliveries: the same message is handed to two invocations running at the same time;
 * - crashed invocations: a handler that throws (a Lambda crash or timeout) returns its whole batch to the queue;
 * - redrive: a message received `maxReceiveCount` times without success is moved to the dead-letter list.
 * Faults inside DynamoDB (lost responses, throttling) come from the fault proxy, not from here.
 */
import type { SQSBatchResponse, SQSEvent, SQSRecord } from '../../lambda/consumer/sqs';

import { seededRandom } from '../../simulator/schedule/seeded-random';

export { seededRandom };

/** Options of {@link deliverAtLeastOnce}. */
export interface DeliveryOptions {
  /** The message bodies to deliver; message `i` gets the SQS message id `m-<i>`. */
  readonly bodies: readonly string[];
  /** The consumer; a throw counts as a crashed invocation. */
  readonly handler: (event: SQSEvent) => Promise<SQSBatchResponse>;
  /** Seed of the random choices. */
  readonly seed: number;
  /** Probability that an acknowledged message is delivered once more. @default 0 */
  readonly duplicateRate?: number;
  /** Probability that a delivered message is also handed to a second, concurrent invocation. @default 0 */
  readonly concurrentDuplicateRate?: number;
  /** Invocations running at once per round. @default 4 */
  readonly concurrency?: number;
  /** Messages per invocation. @default 5 */
  readonly batchSize?: number;
  /** Receives before a message is redriven to the dead-letter list. @default 5 */
  readonly maxReceiveCount?: number;
  /** Extra FIFO attribute: `MessageGroupId` of message `i`. @default standard queue (no groups) */
  readonly messageGroupId?: (index: number) => string;
  /** Called between rounds, e.g. to advance a fake clock past a lease. @default nothing */
  readonly betweenRounds?: (round: number) => Promise<void> | void;
  /** Rounds before giving up (a message still queued then is reported as `stuck`). @default 200 */
  readonly maxRounds?: number;
}

/** What happened to the messages. */
export interface DeliveryReport {
  /** Handler invocations, crashed ones included. */
  readonly invocations: number;
  /** Messages handed to the handler, counting every copy. */
  readonly deliveries: number;
  /** Invocations whose handler threw. */
  readonly crashedInvocations: number;
  /** Extra copies delivered after an acknowledgement, or to a concurrent invocation. */
  readonly duplicatesDelivered: number;
  /** Indexes of messages acknowledged at least once. */
  readonly acknowledged: ReadonlySet<number>;
  /** Indexes of messages moved to the dead-letter list by redrive (maxReceiveCount reached). */
  readonly redriven: ReadonlySet<number>;
  /** Indexes of messages still queued when `maxRounds` ran out. */
  readonly stuck: ReadonlySet<number>;
}

interface QueuedCopy {
  readonly index: number;
  receiveCount: number;
}

/** Delivers every message at least once and returns what became of each. */
export async function deliverAtLeastOnce(options: DeliveryOptions): Promise<DeliveryReport> {
  const random = seededRandom(options.seed);
  const concurrency = options.concurrency ?? 4;
  const batchSize = options.batchSize ?? 5;
  const maxReceiveCount = options.maxReceiveCount ?? 5;
  let queue: QueuedCopy[] = options.bodies.map((_body, index) => ({ index, receiveCount: 0 }));
  const acknowledged = new Set<number>();
  const redriven = new Set<number>();
  let invocations = 0;
  let deliveries = 0;
  let crashedInvocations = 0;
  let duplicatesDelivered = 0;

  const toRecord = (copy: QueuedCopy): SQSRecord => ({
    messageId: `m-${copy.index}`,
    body: options.bodies[copy.index] as string,
    attributes: {
      ApproximateReceiveCount: String(copy.receiveCount),
      ...(options.messageGroupId ? { MessageGroupId: options.messageGroupId(copy.index) } : {}),
    },
  });

  const maxRounds = options.maxRounds ?? 200;
  for (let round = 0; round < maxRounds && queue.length > 0; round += 1) {
    // shuffle: a standard queue gives no order (a FIFO queue keeps it, so leave it then)
    if (!options.messageGroupId) queue.sort(() => random() - 0.5);
    const batches: QueuedCopy[][] = [];
    for (let worker = 0; worker < concurrency && queue.length > 0; worker += 1) batches.push(queue.splice(0, batchSize));
    // a concurrent duplicate: the same message in a second invocation of this round
    if (batches.length > 1 && (options.concurrentDuplicateRate ?? 0) > 0) {
      for (const [workerIndex, batch] of batches.entries()) {
        for (const copy of [...batch]) {
          if (random() >= (options.concurrentDuplicateRate ?? 0)) continue;
          const other = batches[(workerIndex + 1) % batches.length] as QueuedCopy[];
          other.push({ index: copy.index, receiveCount: copy.receiveCount });
          duplicatesDelivered += 1;
        }
      }
    }
    const requeue: QueuedCopy[] = [];
    await Promise.all(
      batches.map(async (batch) => {
        for (const copy of batch) copy.receiveCount += 1;
        invocations += 1;
        deliveries += batch.length;
        let failedIds: Set<string>;
        try {
          const response = await options.handler({ Records: batch.map(toRecord) });
          failedIds = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
        } catch {
          crashedInvocations += 1;
          failedIds = new Set(batch.map((copy) => `m-${copy.index}`));
        }
        for (const copy of batch) {
          if (failedIds.has(`m-${copy.index}`)) {
            if (copy.receiveCount >= maxReceiveCount) redriven.add(copy.index);
            else requeue.push(copy);
            continue;
          }
          acknowledged.add(copy.index);
          if (random() < (options.duplicateRate ?? 0)) {
            requeue.push({ index: copy.index, receiveCount: copy.receiveCount });
            duplicatesDelivered += 1;
          }
        }
      }),
    );
    queue = [...queue, ...requeue];
    await options.betweenRounds?.(round);
  }
  return {
    invocations,
    deliveries,
    crashedInvocations,
    duplicatesDelivered,
    acknowledged,
    redriven,
    stuck: new Set(queue.map((copy) => copy.index)),
  };
}
