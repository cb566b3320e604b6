/**
 * The public runtime API, imported by users' Lambda handlers as `idempotent-event-flow/runtime`.
 * Re-exports only.
 */

// producer
export { Outbox, type OutboxOptions, type OutboxTransactWriteInput } from './producer/outbox';
export type { NewEvent } from './producer/new-event';
export { MAX_MESSAGE_BYTES } from './producer/outbox-item';

// consumer
export { createTransactionalConsumer, type SqsBatchHandler, type TransactionalConsumerOptions } from './consumer/handler';
export type { EventHandler, HandlerContext } from './consumer/process-record';
export { TransactionBuilder, MAX_STAGED_WRITES } from './consumer/transaction-builder';
export {
  DEAD_LETTER_ATTRIBUTE,
  SqsDeadLetterPublisher,
  type DeadLetter,
  type DeadLetterPublisher,
  type SqsDeadLetterPublisherOptions,
} from './consumer/dead-letter';
export type { RecordOutcome } from './consumer/batch';
export type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from './consumer/sqs';

// shared
export { parseEnvelope, type EventEnvelope } from './envelope';
export {
  EventFlowError,
  EventTooLargeError,
  InvalidEventError,
  MalformedEnvelopeError,
  PermanentError,
  TransactionCancelledError,
  TransactionLimitError,
  type FailedTransactionAction,
  type TransactionActionKind,
} from './errors';
export { createLogger, type Logger, type LoggerOptions, type LogContext, type LogLevel, type LogSink } from './logger';
export { MAX_TRANSACTION_ACTIONS } from './transaction/limits';
export type { DynamoDBClientLike } from './transaction/document-client';
export { ConfigurationError, loadConsumerConfig, loadProducerConfig, type ConsumerConfig, type ProducerConfig } from './config';
