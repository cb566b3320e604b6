/**
 * The names of the consumer metrics: the runtime writes them (lambda/metrics.ts, CloudWatch embedded metric format),
 * the constructs build alarms, dashboards and `Subscriber.metric*()` from them. Imports nothing.
 */

/** Namespace, dimensions and metric names of consumer metrics. */
export const CONSUMER_METRICS = {
  NAMESPACE: 'IdempotentEventFlow',
  SUBSCRIBER_DIMENSION: 'Subscriber',
  PROCESSING_MODE_DIMENSION: 'ProcessingMode',
  /**
   * The consumer function's name (Lambda's `AWS_LAMBDA_FUNCTION_NAME`; in `lib/` the function's `functionName`): unique
   * per deployment, so two stacks or stages in one account and region with a subscriber of one name do not share a
   * metric, and one's blocked message does not fire the other's alarm.
   */
  FUNCTION_NAME_DIMENSION: 'FunctionName',
  /** Messages whose effect was applied now. */
  PROCESSED: 'Processed',
  /** Redeliveries recognised and acknowledged without applying anything. */
  DUPLICATES: 'Duplicates',
  /** Messages left on the queue to be retried (transient failures, and FIFO messages skipped behind one). */
  FAILED: 'Failed',
  /**
   * Ordered subscribers only: messages failed because the sequence fence waits for an earlier event of their aggregate
   * (`SequenceGapError`): the aggregate is held behind a gap, its later events wait. Retried at each visibility
   * timeout, so a held aggregate counts one in every such period; a transient failure of the handler is `Failed` only.
   */
  SEQUENCE_GAPS: 'SequenceGaps',
  /** Messages blocked for an operator (an effect's outcome is unknown). */
  BLOCKED: 'Blocked',
  /** Messages sent to the dead-letter queue for a permanent reason. */
  DEAD_LETTERED: 'DeadLettered',
  /**
   * Aggregate mode only: messages applied that may be redeliveries of ones the bounded processed-messages list had
   * already forgotten (the list was full and the event is older than every one it remembers). Not an outcome: each is
   * also counted as `Processed`.
   */
  EVICTED_REDELIVERY: 'EvictedRedelivery',
  /**
   * Copies of a message already blocked for an operator (SNS or relay duplicates), acknowledged without another dead
   * letter: the first copy's dead letter and the record are what the operator works from.
   */
  ALREADY_BLOCKED: 'AlreadyBlocked',
  /**
   * End-to-end latency, in milliseconds: for each message applied (`Processed`), the time from its envelope's `time`
   * (when the producer appended it) to the moment the consumer finished it. One value per message, so CloudWatch
   * computes percentiles (p50, p99) over them. Absent from a line that applied nothing with a `time`.
   */
  EVENT_AGE: 'EventAge',
  /** Property (not a metric) of a line: the W3C trace ids of the events it counted as applied, when they carry one. */
  TRACE_IDS_PROPERTY: 'TraceIds',
} as const;
