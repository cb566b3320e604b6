/**
 * Refuses a consumer without the sequence fence behind an ordered subscriber's FIFO queue (issue 38 item 8). An
 * `OrderedSubscriber` deploys its function in transactional mode, so the processing-mode check admits
 * `createTransactionalConsumer` there too; but without the fence a dead-lettered event's later events are applied
 * without it, and nothing orders them. What the runtime can see at the first invocation: records with a FIFO message
 * group (`MessageGroupId`, set on FIFO queues only) whose bodies carry an ordered position (`partitionkey` and
 * `sequence`, which only `OrderedOutbox` writes: the standard relay publishes no ordered event).
 */
import { ConfigurationError, type ConsumerBaseConfig } from '../config';
import { CONSUMER_FACTORY } from '../contract/consumer-factories';
import { ORDERED_ENVELOPE } from '../contract/ordered-wire-format';
import type { SQSRecord } from './sqs';

/** The factory of the ordered path (lambda/ordered/ordered-consumer.ts). */
export const ORDERED_CONSUMER_FACTORY = 'createOrderedConsumer';

/** Whether the body's envelope (as delivered raw, or as a JSON string of it) carries an ordered position. */
function carriesOrderedPosition(body: string): boolean {
  try {
    let value: unknown = JSON.parse(body);
    if (typeof value === 'string') value = JSON.parse(value);
    if (typeof value !== 'object' || value === null) return false;
    const envelope = value as Record<string, unknown>;
    return typeof envelope[ORDERED_ENVELOPE.AGGREGATE_ATTRIBUTE] === 'string' && typeof envelope[ORDERED_ENVELOPE.SEQUENCE_ATTRIBUTE] === 'string';
  } catch {
    return false; // not JSON: the message's own path reports it
  }
}

/**
 * Throws {@link ConfigurationError} when a subscriber deployed by the constructs (its processing mode set; outside
 * them any factory may run, as for the mode check) gets a record of an ordered subscriber's FIFO queue, naming the
 * factory it runs and {@link ORDERED_CONSUMER_FACTORY}. Nothing of the batch is applied: the invocation fails, SQS
 * retries the batch and moves it to the FIFO dead-letter queue, and the function's `Errors` alarm fires.
 */
export function assertNotBehindOrderedQueue(config: ConsumerBaseConfig, records: readonly SQSRecord[]): void {
  if (config.processingMode === undefined) return;
  const ordered = records.find((record) => record.attributes?.MessageGroupId !== undefined && carriesOrderedPosition(record.body));
  if (ordered === undefined) return;
  throw new ConfigurationError(
    `subscriber '${config.subscriberName}' runs behind an ordered subscriber's FIFO queue (message ${ordered.messageId} of group ` +
      `'${ordered.attributes!.MessageGroupId!}' carries an ordered event), but its handler is built with ${CONSUMER_FACTORY[config.processingMode]}, ` +
      `which has no sequence fence: an event dead-lettered there would let its aggregate's later events apply without it. ` +
      `Build the handler with ${ORDERED_CONSUMER_FACTORY} (docs/ORDERED-DELIVERY.md); nothing of this batch was applied`,
  );
}
