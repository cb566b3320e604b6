/**
 * The environment variables the constructs (`lib/`) set on each function and the runtime (`lambda/`) reads, and the
 * processing modes the two agree on. Defined here once; this folder (lambda/contract/) imports nothing, so the
 * constructs package compiles it with jsii and the runtime package ships it.
 */

/** Names of the environment variables the runtime reads. */
export const ENV = {
  /** Name of the subscriber (the `addSubscriber` id); scopes inbox keys and log lines. */
  SUBSCRIBER_NAME: 'IEF_SUBSCRIBER_NAME',
  /** Name of the subscriber's inbox table. */
  INBOX_TABLE_NAME: 'IEF_INBOX_TABLE_NAME',
  /** How long an inbox record keeps a message id deduplicated, in seconds. */
  DEDUPLICATION_WINDOW_SECONDS: 'IEF_DEDUPLICATION_WINDOW_SECONDS',
  /** URL of the consumer queue's dead-letter queue, where permanently failing messages go with their reason. */
  DEAD_LETTER_QUEUE_URL: 'IEF_DEAD_LETTER_QUEUE_URL',
  /** Name of the outbox table a producer appends events to. */
  OUTBOX_TABLE_NAME: 'IEF_OUTBOX_TABLE_NAME',
  /** Partition key attribute name of the outbox table. */
  OUTBOX_PARTITION_KEY_NAME: 'IEF_OUTBOX_PARTITION_KEY_NAME',
  /** Sort key attribute name of the outbox table; unset when the table has no sort key. */
  OUTBOX_SORT_KEY_NAME: 'IEF_OUTBOX_SORT_KEY_NAME',
  /** TTL attribute name of the outbox table; unset when outbox items are kept forever. */
  OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME: 'IEF_OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME',
  /** How long a relayed outbox item is kept before TTL removes it, in seconds. */
  OUTBOX_EVENT_RETENTION_SECONDS: 'IEF_OUTBOX_EVENT_RETENTION_SECONDS',
  /** Default CloudEvents `source` for events this producer appends. */
  EVENT_SOURCE: 'IEF_EVENT_SOURCE',
  /** The processing mode the subscriber was deployed with (one of {@link PROCESSING_MODE}); the runtime refuses a mismatch. */
  PROCESSING_MODE: 'IEF_PROCESSING_MODE',
  /** How long a lease on a message (lease and multi-step modes) lasts, in seconds. */
  LEASE_DURATION_SECONDS: 'IEF_LEASE_DURATION_SECONDS',
  /**
   * `true` when a blocked message's body is kept on its processing record (lease and multi-step modes); unset or
   * `false`: it is not, and the dead-letter queue holds the message (found by its `iefEventId`).
   */
  KEEP_BLOCKED_MESSAGE_BODY: 'IEF_KEEP_BLOCKED_MESSAGE_BODY',
  /**
   * The largest event a producer may append, in bytes as delivered (the envelope as a JSON string): the topic's
   * `MaximumMessageSize` divided by the relay's batch size, so that a full batch fits one SNS `PublishBatch`. Unset:
   * `MAX_MESSAGE_BYTES` (262,144), the SNS limit of one message.
   */
  MAX_EVENT_BYTES: 'IEF_MAX_EVENT_BYTES',
  /** The SNS FIFO topic the ordered path's fan-out function publishes to (docs/ORDERED-DELIVERY.md). */
  ORDERED_TOPIC_ARN: 'IEF_ORDERED_TOPIC_ARN',
} as const;

/**
 * Names of environment variables Lambda itself sets in every function (reserved: the constructs can not set them). The
 * runtime reads them; `lib/` refers to the same values through the function's attributes (e.g. `functionName`).
 */
export const LAMBDA_ENV = {
  /**
   * The function's name: unique per deployment in an account and region, so it is the dimension that tells two
   * stacks or stages with a subscriber of one name apart in the consumer metrics (`FunctionName`).
   */
  FUNCTION_NAME: 'AWS_LAMBDA_FUNCTION_NAME',
} as const;

/**
 * The processing modes. The construct's `ProcessingMode` enum uses these values, and each runtime factory checks
 * that the deployed mode is its own, so a subscriber deployed as `lease` can not run a transactional handler.
 */
export const PROCESSING_MODE = {
  /** Business writes and the inbox record in one DynamoDB transaction (`createTransactionalConsumer`). */
  TRANSACTIONAL: 'transactional',
  /** An owner-fenced lease around an effect outside DynamoDB (`createLeaseConsumer`). */
  LEASE: 'lease',
  /** Ordered steps with persisted status and context, each under a lease (`createMultiStepConsumer`). */
  MULTI_STEP: 'multi-step',
  /** Optimistic concurrency on one item that carries its processed message ids (`createAggregateConsumer`). */
  AGGREGATE: 'aggregate',
} as const;

/** One of the {@link PROCESSING_MODE} values. */
export type ProcessingModeName = (typeof PROCESSING_MODE)[keyof typeof PROCESSING_MODE];

/**
 * How far apart the clocks of two Lambda instances may be, in seconds, by default: a lease counts as live until its
 * expiry plus this allowance (`clockSkewAllowanceSeconds` of the lease and multi-step consumers). The constructs keep
 * `leaseDuration` plus this below the queue's `visibilityTimeout`, so a redelivery after a crash finds the lease over.
 */
export const DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS = 5;
