/** `createTransactionalConsumer`: wiring only (config, inbox, dead letters, logger) around the batch loop. */
import { loadConsumerConfig, type ConsumerConfig } from '../config';
import { createLogger, type Logger } from '../logger';
import { toDocumentClient, type DynamoDBClientLike } from '../transaction/document-client';
import { processBatch } from './batch';
import { SqsDeadLetterPublisher, type DeadLetterPublisher } from './dead-letter';
import { Inbox } from './inbox';
import { processRecord, type EventHandler } from './process-record';
import type { SQSBatchResponse, SQSEvent } from './sqs';

/** Options of {@link createTransactionalConsumer}. */
export interface TransactionalConsumerOptions<TData> {
  /** The business logic, called once per event that was not processed before. */
  readonly handle: EventHandler<TData>;
  /** The client for the inbox and staged writes; a low-level client is wrapped. @default a client from the Lambda environment */
  readonly client?: DynamoDBClientLike;
  /** @default read from the environment once, at creation (`loadConsumerConfig`); throws `ConfigurationError` if incomplete */
  readonly config?: ConsumerConfig;
  /** Where permanent failures go. @default SQS SendMessage to `config.deadLetterQueueUrl`; none when it is unset */
  readonly deadLetter?: DeadLetterPublisher;
  /** Clock for the inbox TTL and `processedAt`. @default the system clock */
  readonly now?: () => Date;
  /** Where outcome lines go; the subscriber name is added to every line. @default JSON lines on standard output */
  readonly logger?: Logger;
}

/** A Lambda handler for an SQS event source mapping with `ReportBatchItemFailures`. */
export type SqsBatchHandler = (event: SQSEvent, context?: unknown) => Promise<SQSBatchResponse>;

/**
 * Creates the Lambda handler of an idempotent consumer. Each event's staged writes and its inbox record commit in
 * one DynamoDB transaction, so a redelivered event is acknowledged without being applied twice. Failed records are
 * reported individually; the rest of the batch is unaffected.
 *
 * Call it at module scope: configuration is read once and a missing value fails the cold start.
 */
export function createTransactionalConsumer<TData = unknown>(options: TransactionalConsumerOptions<TData>): SqsBatchHandler {
  const config = options.config ?? loadConsumerConfig();
  const now = options.now ?? (() => new Date());
  const logger = (options.logger ?? createLogger()).child({ subscriber: config.subscriberName });
  const deadLetter =
    options.deadLetter ?? (config.deadLetterQueueUrl === undefined ? undefined : new SqsDeadLetterPublisher({ queueUrl: config.deadLetterQueueUrl }));
  const inbox = new Inbox({
    client: toDocumentClient(options.client),
    tableName: config.inboxTableName,
    subscriberName: config.subscriberName,
    deduplicationWindowSeconds: config.deduplicationWindowSeconds,
    now,
  });
  return async (event, lambdaContext) =>
    processBatch(
      event.Records,
      (record) => processRecord(record, { handle: options.handle, inbox, subscriberName: config.subscriberName, deadLetter, logger, now, lambdaContext }),
      (record, error) => logger.error('failed', { sqsMessageId: record.messageId, outcome: 'failed', error }),
    );
}
