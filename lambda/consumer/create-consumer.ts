/** The wiring every processing mode's factory shares: logger, dead letters, metrics and the batch loop. */
import type { ConsumerBaseConfig, ProcessingModeName } from '../config';
import { createLogger, type Logger } from '../logger';
import { ConsumerMetrics } from '../metrics';
import type { DynamoDBClientLike } from '../transaction/document-client';
import { processBatch } from './batch';
import { SqsDeadLetterPublisher, type DeadLetterPublisher } from './dead-letter';
import { processMessage, type MessageDependencies, type MessageExecutor, type PayloadParser } from './process-message';
import type { SQSBatchResponse, SQSEvent } from './sqs';

/** Options every consumer factory accepts. */
export interface ConsumerOptions<TData> {
  /**
   * The DynamoDB client; a low-level client is wrapped in a DocumentClient that removes undefined attribute values,
   * unless it was already wrapped with `DynamoDBDocumentClient.from` (the SDK shares those options with it; they then apply).
   * @default a client from the Lambda environment
   */
  readonly client?: DynamoDBClientLike;
  /**
   * Checks and types each event's data before the handler runs, e.g. `(data) => schema.parse(data)`. A throw
   * dead-letters the message at once as a `SchemaValidationError`.
   * @default the data is passed on unchecked
   */
  readonly parse?: PayloadParser<TData>;
  /**
   * Keep payload values in error messages (what a `parse` error echoes of the refused value, what `JSON.parse` quotes
   * of a body that is not JSON) in the logs and the dead-letter attributes. For debugging only: `parse` functions
   * should not echo values in the first place.
   * @default false - redacted: quoted values and numbers replaced, the message bounded
   */
  readonly logPayloadValues?: boolean;
  /** Where permanent failures and blocked messages go. @default SQS SendMessage to the configured dead-letter queue URL; none when it is unset */
  readonly deadLetter?: DeadLetterPublisher;
  /** The clock for TTLs, leases and timestamps. @default the system clock */
  readonly now?: () => Date;
  /** Where outcome lines go; the subscriber name is added to every line. @default JSON lines on standard output */
  readonly logger?: Logger;
  /** Receives one CloudWatch EMF line per batch with the outcome counts. @default standard output (Lambda turns it into metrics) */
  readonly metricsSink?: (line: string) => void;
}

/** A Lambda handler for an SQS event source mapping with `ReportBatchItemFailures`. */
export type SqsBatchHandler = (event: SQSEvent, context?: unknown) => Promise<SQSBatchResponse>;

/** What a factory passes to {@link createBatchHandler}. */
export interface BatchHandlerSetup<TData> {
  readonly config: ConsumerBaseConfig;
  readonly processingMode: ProcessingModeName;
  readonly options: ConsumerOptions<TData>;
  /** The logger with the subscriber (and mode) in its context; see {@link consumerLogger}. */
  readonly logger: Logger;
  readonly now: () => Date;
  readonly execute: MessageExecutor<TData>;
}

/** The logger of a consumer: the caller's, or JSON lines on standard output, with subscriber and mode on every line. */
export function consumerLogger(config: ConsumerBaseConfig, processingMode: ProcessingModeName, logger?: Logger): Logger {
  return (logger ?? createLogger()).child({ subscriber: config.subscriberName, processingMode });
}

/** The dead-letter publisher of a consumer: the caller's, or SQS to the configured URL, or none. */
function deadLetterPublisher(config: ConsumerBaseConfig, deadLetter?: DeadLetterPublisher): DeadLetterPublisher | undefined {
  if (deadLetter !== undefined) return deadLetter;
  return config.deadLetterQueueUrl === undefined ? undefined : new SqsDeadLetterPublisher({ queueUrl: config.deadLetterQueueUrl });
}

/**
 * Builds the Lambda handler: each record goes through the shared pipeline (`processMessage`) with the mode's
 * executor; failures are reported per record (FIFO groups stop at their first failure); one EMF line per batch.
 */
export function createBatchHandler<TData>(setup: BatchHandlerSetup<TData>): SqsBatchHandler {
  const { config, logger, now } = setup;
  const deadLetter = deadLetterPublisher(config, setup.options.deadLetter);
  const metrics = new ConsumerMetrics({
    subscriberName: config.subscriberName,
    processingMode: setup.processingMode,
    functionName: config.functionName,
    sink: setup.options.metricsSink,
    now,
  });
  return async (event, lambdaContext) => {
    const deps: MessageDependencies<TData> = {
      execute: setup.execute,
      parse: setup.options.parse,
      subscriberName: config.subscriberName,
      deadLetter,
      logger,
      now,
      lambdaContext,
      logPayloadValues: setup.options.logPayloadValues === true,
    };
    try {
      return await processBatch(
        event.Records,
        (record) => processMessage(record, deps),
        {
          onUnexpectedError: (record, error) => logger.error('failed', { sqsMessageId: record.messageId, outcome: 'failed', error }),
          onSkipped: (record, groupId) =>
            logger.info('skipped', { sqsMessageId: record.messageId, outcome: 'skipped', messageGroupId: groupId, detail: 'an earlier message of this FIFO group failed' }),
          onOutcome: (_record, outcome) => metrics.count(outcome),
        },
      );
    } finally {
      metrics.flush();
    }
  };
}
