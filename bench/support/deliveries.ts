/** At-least-once delivery: a seeded sequence of messages with duplicates, delivered in SQS-like batches with redelivery. */
import type { SQSRecord, SqsBatchHandler } from '../../lambda/index';
import { SQS_BATCH_SIZE, sqsRecord, type Message } from './fixtures';
import type { Prng } from './prng';

/** Redelivery rounds after the first before a run gives up (SQS would keep redelivering, then dead-letter). */
export const MAX_REDELIVERY_ROUNDS = 5;

export interface Delivery {
  readonly message: Message;
  readonly receiveCount: number;
}

export interface DeliveryPlan {
  /** The distinct messages, in first-delivery order. */
  readonly distinct: Message[];
  readonly deliveries: Delivery[];
  /** One SQS record per delivery (a duplicate is a new SQS message with the same body). */
  readonly records: SQSRecord[];
}

/**
 * `n` deliveries: each is, with probability `duplicateRate`, a second delivery of an earlier message (drawn from the
 * earlier messages `duplicable` accepts, all by default), and otherwise a new message from `newMessage`.
 */
export function atLeastOnce(
  prng: Prng,
  n: number,
  duplicateRate: number,
  newMessage: () => Message,
  duplicable?: (candidate: Message, index: number, distinct: readonly Message[]) => boolean,
): DeliveryPlan {
  const distinct: Message[] = [];
  const deliveries: Delivery[] = [];
  for (let i = 0; i < n; i++) {
    if (distinct.length > 0 && prng.next() < duplicateRate) {
      const candidates = duplicable === undefined ? distinct : distinct.filter((candidate, index) => duplicable(candidate, index, distinct));
      if (candidates.length > 0) {
        deliveries.push({ message: prng.pick(candidates), receiveCount: 2 });
        continue;
      }
    }
    const message = newMessage();
    distinct.push(message);
    deliveries.push({ message, receiveCount: 1 });
  }
  return { distinct, deliveries, records: deliveries.map((delivery) => sqsRecord(prng, delivery.message, delivery.receiveCount)) };
}

/** One invocation of {@link deliverAll}: its round (0 for the records as given, then one per redelivery) and wall time. */
export interface Invocation {
  readonly round: number;
  readonly elapsedMs: number;
}

/**
 * Delivers `records` in batches of {@link SQS_BATCH_SIZE}, one invocation at a time, then redelivers the ones reported
 * as failed (as SQS does after the visibility timeout, with `ApproximateReceiveCount` one higher) until none fail;
 * `onInvocation` is told each invocation's wall time. Returns how many records were redelivered. Throws (naming
 * `what`) if records still fail after {@link MAX_REDELIVERY_ROUNDS} rounds.
 */
export async function deliverAll(
  handler: SqsBatchHandler,
  records: readonly SQSRecord[],
  what: string,
  onInvocation?: (invocation: Invocation) => void,
  batchSize: number = SQS_BATCH_SIZE,
): Promise<number> {
  let redelivered = 0;
  let queue = [...records];
  for (let round = 0; queue.length > 0; round++) {
    if (round > MAX_REDELIVERY_ROUNDS) throw new Error(`${what}: ${queue.length} records still failing after ${MAX_REDELIVERY_ROUNDS} redeliveries`);
    const failed: SQSRecord[] = [];
    for (let start = 0; start < queue.length; start += batchSize) {
      const batch = queue.slice(start, start + batchSize);
      const started = performance.now();
      const response = await handler({ Records: batch });
      onInvocation?.({ round, elapsedMs: performance.now() - started });
      const failedIds = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      failed.push(...batch.filter((record) => failedIds.has(record.messageId)));
    }
    redelivered += failed.length;
    queue = failed.map((record) => ({ ...record, attributes: { ...record.attributes, ApproximateReceiveCount: String(Number(record.attributes?.ApproximateReceiveCount ?? 1) + 1) } }));
  }
  return redelivered;
}
