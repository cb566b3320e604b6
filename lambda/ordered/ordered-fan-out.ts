/**
 * The ordered path's fan-out (docs/ORDERED-DELIVERY.md): a small function on the relay's SQS FIFO queue that publishes
 * each event to the SNS FIFO topic, with the aggregate as the message group and the event id as the deduplication id.
 * A Pipe can not target an SNS FIFO topic, and a stream shard allows two readers, so this is how more than one ordered
 * subscriber gets the events in order: SNS FIFO delivers each group in order to every subscribed SQS FIFO queue.
 */
import { PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { processBatch } from '../consumer/batch';
import type { SQSBatchResponse, SQSEvent } from '../consumer/sqs';
import { createLogger, type Logger } from '../logger';
import { parseEnvelope } from '../envelope';
import { ConfigurationError } from '../config';
import { orderedPositionOf } from './ordered-position';
import { ENV } from '../contract/environment';

/** The part of an SNS client the fan-out uses. */
export interface IPublisher {
  send(command: PublishCommand): Promise<unknown>;
}

/** Options of {@link createOrderedFanOut}. */
export interface OrderedFanOutOptions {
  /** @default the `IEF_ORDERED_TOPIC_ARN` environment variable (the constructs set it) */
  readonly topicArn?: string;
  /** @default a new SNSClient from the Lambda environment */
  readonly client?: IPublisher;
  /** @default JSON lines on standard output */
  readonly logger?: Logger;
}

/**
 * Creates the fan-out handler: for each message of a batch from the relay's FIFO queue, in order, one SNS `Publish` of
 * the envelope (the message body unwrapped to the envelope JSON) with `MessageGroupId` = its aggregate and
 * `MessageDeduplicationId` = its event id. A failed publish is a batch item failure, and the group's later messages of
 * the batch are not attempted (`skipped`), so the group keeps its order; SQS retries them. A body that is not an
 * ordered event is a failure too, and the relay queue's dead-letter queue takes it after `maxReceiveCount`.
 */
export function createOrderedFanOut(options: OrderedFanOutOptions = {}): (event: SQSEvent) => Promise<SQSBatchResponse> {
  const topicArn = options.topicArn ?? process.env[ENV.ORDERED_TOPIC_ARN];
  if (topicArn === undefined || topicArn === '') throw new ConfigurationError(`${ENV.ORDERED_TOPIC_ARN} is not set: the ordered fan-out needs the SNS FIFO topic's ARN`);
  const client = options.client ?? new SNSClient({});
  const logger = (options.logger ?? createLogger()).child({ component: 'ordered-fan-out' });
  return async (event) =>
    processBatch(
      event.Records,
      async (record) => {
        try {
          const envelope = parseEnvelope(record.body);
          const { aggregateId } = orderedPositionOf(record.body);
          // the envelope as the producer wrote it (its extensions included), not double-encoded
          await client.send(new PublishCommand({ TopicArn: topicArn, Message: unwrapOnce(record.body), MessageGroupId: aggregateId, MessageDeduplicationId: envelope.id }));
          return 'processed';
        } catch (error) {
          logger.error('failed', { sqsMessageId: record.messageId, outcome: 'failed', error });
          return 'failed';
        }
      },
      { onSkipped: (record, groupId) => logger.warn('skipped', { sqsMessageId: record.messageId, messageGroupId: groupId, outcome: 'skipped' }) },
    );
}

/** The envelope JSON of a body that is the envelope JSON, or the envelope as a JSON string (what the Pipe's template may deliver). */
function unwrapOnce(body: string): string {
  const parsed: unknown = JSON.parse(body);
  return typeof parsed === 'string' ? parsed : body;
}
