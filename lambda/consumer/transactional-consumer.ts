/** `createTransactionalConsumer`: the default mode, business writes and the inbox record in one transaction. */
import { assertProcessingMode, loadConsumerConfig, PROCESSING_MODE, type ConsumerConfig } from '../config';
import type { EventEnvelope } from '../envelope';
import { toDocumentClient } from '../transaction/document-client';
import { consumerLogger, createBatchHandler, type ConsumerOptions, type SqsBatchHandler } from './create-consumer';
import { Inbox } from './inbox';
import type { HandlerContext } from './process-message';
import { TransactionBuilder } from './transaction-builder';

/**
 * A transactional consumer's business logic. Stage writes on `tx`; do not write to DynamoDB directly, or those writes
 * escape the exactly-once guarantee. Throw `PermanentError` when retrying cannot help; any other throw means "retry".
 */
export type EventHandler<TData> = (envelope: EventEnvelope<TData>, tx: TransactionBuilder, context: HandlerContext) => Promise<void> | void;

/** Options of {@link createTransactionalConsumer}. */
export interface TransactionalConsumerOptions<TData> extends ConsumerOptions<TData> {
  /** The business logic, called once per delivery of an event that was not processed before. */
  readonly handle: EventHandler<TData>;
  /** @default read from the environment once, at creation (`loadConsumerConfig`); throws `ConfigurationError` if incomplete */
  readonly config?: ConsumerConfig;
}

/**
 * Creates the Lambda handler of a transactional consumer. Each event's staged writes and its inbox record commit in
 * one DynamoDB transaction, so a redelivered event is acknowledged without being applied twice. Failed records are
 * reported individually; the rest of the batch is unaffected.
 *
 * Call it at module scope: configuration is read once and a missing value fails the cold start.
 */
export function createTransactionalConsumer<TData = unknown>(options: TransactionalConsumerOptions<TData>): SqsBatchHandler {
  const config = options.config ?? loadConsumerConfig();
  assertProcessingMode(config, PROCESSING_MODE.TRANSACTIONAL, 'createTransactionalConsumer');
  const now = options.now ?? (() => new Date());
  const logger = consumerLogger(config, PROCESSING_MODE.TRANSACTIONAL, options.logger);
  const inbox = new Inbox({
    client: toDocumentClient(options.client),
    tableName: config.inboxTableName,
    subscriberName: config.subscriberName,
    deduplicationWindowSeconds: config.deduplicationWindowSeconds,
    now,
  });
  return createBatchHandler<TData>({
    config,
    processingMode: PROCESSING_MODE.TRANSACTIONAL,
    options,
    logger,
    now,
    execute: async (envelope, context) => {
      const tx = new TransactionBuilder();
      await options.handle(envelope, tx, context);
      const outcome = await inbox.commit(envelope, tx.items);
      return { outcome, fields: { stagedWrites: tx.items.length } };
    },
  });
}
