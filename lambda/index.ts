/**
 * The public runtime API, imported by users' Lambda handlers as `@idempotent-event-flow/runtime`.
 * Re-exports only.
 *
 * @module @idempotent-event-flow/runtime
 */

// producer
export { Outbox, type OutboxEnvironmentOptions, type OutboxOptions, type OutboxTransactWriteInput, type OutboxWriteResult, type PreparedEvent } from './producer/outbox';
export type { EventPreparer } from './producer/emitted-events';
export type { NewEvent } from './producer/new-event';
export { MAX_MESSAGE_BYTES } from './producer/outbox-item';
export { currentTraceContext } from './producer/current-trace-context';

// trace context (the CloudEvents distributed-tracing extension)
export { MAX_TRACESTATE_CHARACTERS, traceContextOf, traceIdOf, traceparentFromXRayHeader, type TraceContext } from './trace-context';

// consumer
export { MAX_CONCURRENCY, type ConsumerOptions, type SqsBatchHandler } from './consumer/create-consumer';
export { createTransactionalConsumer, MAX_CONFLICT_ATTEMPTS, type EventHandler, type TransactionalConsumerOptions } from './consumer/transactional-consumer';
export { ADAPTIVE_READ_RECORD_WEIGHT, ADAPTIVE_READ_THRESHOLD, AdaptiveBatchRead, type AdaptiveBatchReadOptions, type BatchReadPolicy, type BatchReadSetting } from './consumer/batch-read-policy';
export {
  CONTENTION_ATTEMPTS_WITHOUT_DEADLINE,
  CONTENTION_BACKOFF_BASE_MILLISECONDS,
  CONTENTION_BACKOFF_CAP_MILLISECONDS,
  CONTENTION_SAFETY_MARGIN_MILLISECONDS,
  ContentionRetry,
  isContention,
  type ContentionRetryCall,
  type ContentionRetryOptions,
} from './transaction/contention-retry';
export type { HandlerContext, PayloadParser } from './consumer/process-message';
export { createLeaseConsumer } from './processing/lease-consumer';
export { createMultiStepConsumer } from './processing/multi-step-consumer';
export type {
  ErrorClassification,
  ErrorClassifier,
  ExpiredLeasePolicy,
  LeaseConsumerOptions,
  LeaseHandlerContext,
  LeaseProcessingOptions,
  MultiStepConsumerOptions,
  ProcessingStep,
  StepContext,
  StepOutput,
} from './processing/types';
export { defaultErrorClassifier } from './processing/error-classification';
export { MAX_BLOCKED_BODY_BYTES, MAX_CONTEXT_BYTES, ProcessingContextError } from './processing/processing-context';
export { MAX_STEPS, STEP_NAME_PATTERN } from './processing/validate-options';
export { DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS } from './processing/record-store';
export type { BlockedState, ProcessingRecordView, RecordStatus, Resolution, StepState, StepStatus } from './processing/processing-record';
export { RECORD_STATUS, STEP_STATUS } from './contract/wire-format';

export { TransactionBuilder, MAX_STAGED_WRITES, type TransactionBuilderOptions } from './consumer/transaction-builder';
export { createAggregateConsumer, type AggregateChange, type AggregateConsumerOptions, type AggregateHandler } from './aggregate/aggregate-consumer';
export type { AggregateLocation } from './aggregate/aggregate-store';
export {
  DEAD_LETTER_ATTRIBUTE,
  SqsDeadLetterPublisher,
  type DeadLetter,
  type DeadLetterPublisher,
  type SqsDeadLetterPublisherOptions,
} from './consumer/dead-letter';
export type { RecordOutcome, RecordScope } from './consumer/batch';
export type { SQSBatchItemFailure, SQSBatchResponse, SQSEvent, SQSRecord } from './consumer/sqs';

// shared
export { MAX_ENVELOPE_DEPTH, parseEnvelope, type EventEnvelope, type ParseEnvelopeOptions } from './envelope';
export {
  ConcurrentModificationError,
  LeaseLostError,
  MessageBlockedError,
  MessageInProgressError,
  PayloadMismatchError,
  PayloadUnavailableError,
  RetryableError,
  SchemaValidationError,
  EventFlowError,
  EventTooLargeError,
  InvalidEventError,
  PayloadAccessDeniedError,
  MalformedEnvelopeError,
  OutboxKeySchemaError,
  PermanentError,
  TransactionCancelledError,
  TransactionLimitError,
  InvalidWriteError,
  ItemStateValidationError,
  type FailedTransactionAction,
  type TransactionActionKind,
} from './errors';
export { createLogger, type Logger, type LoggerOptions, type LogContext, type LogLevel, type LogSink } from './logger';
export { MAX_TRANSACTION_ACTIONS, MAX_TRANSACTION_BYTES } from './transaction/limits';
export type { KeySchema } from './transaction/item-identity';
export { MAX_ITEM_BYTES, itemSize } from './transaction/item-size';
export type { DynamoDBClientLike } from './transaction/document-client';
export { ConfigurationError, loadConsumerBaseConfig, loadConsumerConfig, loadLeaseConsumerConfig, loadProducerConfig, type ConsumerBaseConfig, type ConsumerConfig, type EnvironmentVariables, type LeaseConsumerConfig, type ProducerConfig } from './config';
export { PROCESSING_MODE, type ProcessingModeName } from './contract/environment';
export { ConsumerMetrics, type ConsumerMetricsOptions } from './metrics';
export { CONSUMER_METRICS } from './contract/metric-names';
export { derivedEventId, payloadFingerprint } from './fingerprint';
export { OrderedOutbox, SequenceContentionError, DEFAULT_ORDERED_ATTEMPTS, standardEventIdOf, STANDARD_EVENT_ID_SUFFIX, type OrderedNewEvent, type OrderedEnvelope, type OrderedOutboxOptions, type OrderedOutboxEnvironmentOptions, type OrderedTransactWriteInput } from './ordered/ordered-outbox';
export { createOrderedConsumer, type OrderedConsumerOptions } from './ordered/ordered-consumer';
export { SequenceGapError, NotAnOrderedEventError, SequenceReusedError } from './ordered/ordered-errors';
export { orderedPositionOf, type OrderedPosition } from './ordered/ordered-position';
// claim-check: events of any size (docs/LARGE-EVENTS.md)
export { loadClaimCheckConfig, type ClaimCheckConfig } from './claim-check/claim-check-config';
export { S3PayloadStore, type PayloadReader, type PayloadWriter } from './claim-check/payload-store';
export { offloadIfLarge, needsOffload, type ClaimCheck } from './claim-check/offload';
export { isOffloaded, resolvePayload, type ResolvedPayload } from './claim-check/resolve-payload';
export { CLAIM_CHECK_ATTRIBUTES, CLAIM_CHECK_ENV, DEFAULT_PAYLOAD_KEY_PREFIX, MAX_OFFLOADED_DATA_BYTES, payloadObjectKey, parseDataRef } from './contract/claim-check';
export { ORDERED_ATTRIBUTES_MARGIN_BYTES } from './ordered/ordered-outbox';
