import type { Duration, RemovalPolicy } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type { FunctionOptions } from '../functions/function-options';
import type { IInboxTable } from './inbox-table';
import type { ProcessingMode } from './processing-mode';

/**
 * Everything that configures a {@link Subscriber} except what the event flow provides (the topic and its key):
 * the options of `IdempotentEventFlow.addSubscriber`.
 */
export interface SubscriberOptions extends FunctionOptions {

  /**
   * The subscriber's name. It is part of every inbox key (`<subscriberName>#<eventId>`), so subscribers sharing an
   * inbox table must have different names, and renaming a subscriber forgets which messages it processed. Synth fails
   * if another subscriber of the app uses the same name on the same inbox table (an `InboxTable` of the app, an import
   * of its name or ARN, or a literal table name imported in the same account and region, or in the same
   * environment-agnostic stack), or within one `IdempotentEventFlow`.
   *
   * 1 to 64 letters, digits, `_`, `.` or `-`.
   *
   * @default - the construct id
   */
  readonly subscriberName?: string;

  /**
   * Filter policy applied to the message body.
   *
   * EventBridge Pipes can not set SNS message attributes, so the relay publishes the CloudEvents envelope as the
   * body with no attributes; a filter must therefore match the body, e.g. `{ type: sns.FilterOrPolicy.filter(
   * sns.SubscriptionFilter.stringFilter({ allowlist: ['OrderPlaced'] })) }`. Synth warns about a top-level key that is
   * not an envelope attribute (`specversion`, `id`, `source`, `type`, `subject`, `time`, `datacontenttype`, `data`,
   * `traceparent`, `tracestate`): it matches no event (a field of the event's data goes under `data`). Acknowledge the
   * warning `idempotent-event-flow:filterPolicyKeyNotInEnvelope` on the subscriber when such a key is meant.
   *
   * @default - every message on the topic is delivered
   */
  readonly filterPolicyWithMessageBody?: { [attribute: string]: sns.FilterOrPolicy };

  /**
   * How the runtime makes each message take effect once. The handler must call the matching factory of
   * `@idempotent-event-flow/runtime` (`createTransactionalConsumer`, `createLeaseConsumer`,
   * `createMultiStepConsumer` or `createAggregateConsumer`); the runtime refuses another. The mode decides the
   * function's inbox permissions, whether there is an inbox at all (not with `AGGREGATE`) and whether a `Blocked`
   * alarm is added (`LEASE` and `MULTI_STEP`).
   *
   * @default ProcessingMode.TRANSACTIONAL
   */
  readonly processingMode?: ProcessingMode;

  /**
   * The inbox table to record processed messages (or processing records) in, e.g. one shared by several subscribers.
   * An imported table used with `ProcessingMode.LEASE` or `ProcessingMode.MULTI_STEP` needs the `BlockedMessages`
   * index (see `InboxTable`) for the operator to list blocked messages. Not with `ProcessingMode.AGGREGATE`, which has
   * no inbox.
   *
   * @default - a new `InboxTable` for this subscriber; none with `ProcessingMode.AGGREGATE`
   */
  readonly inboxTable?: IInboxTable;

  /**
   * How long a processed message stays deduplicated: the TTL of its inbox record.
   *
   * It must cover the longest path a copy of a message can take with one redrive out of each dead-letter queue: SNS
   * could not deliver it, the subscription's dead-letter queue keeps it for up to `subscriptionDeadLetterRetentionPeriod`
   * before it is redriven into the queue; there it fails into the queue's dead-letter queue, which keeps it up to
   * `deadLetterRetentionPeriod` from when it entered the queue; redriven again, it can wait out `retentionPeriod` before
   * it is consumed. So synth fails unless the window (given or the default) is at least
   * `subscriptionDeadLetterRetentionPeriod + retentionPeriod + deadLetterRetentionPeriod` (7 + 4 + 14 = 25 days with the
   * defaults). The default leaves 5 days beyond that for what the sum does not count: a duplicate the relay publishes
   * later than the copy applied (up to its maximum record age), SNS retrying through an SQS outage before it
   * dead-letters (for an SQS endpoint up to 23 days), and the redrive itself. A further redrive out of a dead-letter
   * queue is the operator's: `idempotent-event-flow dlq redrive` refuses a message whose event is older than the window.
   * Storage grows with the window: each applied message keeps its record that long.
   * A whole number of seconds. Not with `ProcessingMode.AGGREGATE`, which has no inbox.
   *
   * @default Duration.days(30)
   */
  readonly deduplicationWindow?: Duration;

  /**
   * How long a delivery's claim on a message lasts, for `ProcessingMode.LEASE` and `ProcessingMode.MULTI_STEP` only.
   *
   * The lease is an absolute expiry written to DynamoDB, not the Lambda deadline. At least 1 second, a whole number
   * of seconds, and less than `visibilityTimeout` less the runtime's 5 s clock-skew allowance (the runtime counts a lease
   * as held until its end plus that allowance), so that a redelivery after a crash finds the lease expired.
   * Shorter than `timeout` draws a warning: a slow but live invocation can lose its lease, which is safe but blocks
   * the message.
   *
   * @default - the function's `timeout`, so a live invocation keeps its lease
   */
  readonly leaseDuration?: Duration;

  /**
   * Whether a blocked message's body is kept on its processing record in the inbox table (`ProcessingMode.LEASE` and
   * `ProcessingMode.MULTI_STEP` only), with no TTL until an operator resolves it, so `blocked show` can print it.
   * Otherwise the record keeps the event id, type, payload fingerprint, step and reason, and the message itself is in
   * the subscriber's dead-letter queue (its `iefEventId` attribute names the event).
   *
   * @default false
   */
  readonly keepBlockedMessageBody?: boolean;

  /**
   * Whether the handler appends events to the outbox (`tx.emit(...)` inside its own commit). The function then gets
   * the outbox's producer environment and permission to append events, like a producer.
   * `IdempotentEventFlow.addSubscriber` uses the flow's outbox; a standalone `Subscriber` needs `outboxTable`.
   *
   * @default false
   */
  readonly publishesEvents?: boolean;

  /**
   * How many times a message is received before SQS moves it to the dead-letter queue. Between 1 and 1000.
   * Below 5, the least AWS recommends for a queue a Lambda function reads, the synth warns: a valid message whose few
   * receives each meet a transient failure (a throttled request, a crashed invocation, which fails its whole batch) is
   * dead-lettered.
   *
   * @default 5
   */
  readonly maxReceiveCount?: number;

  /**
   * The queue's visibility timeout. At least 6 x `timeout`, at most 12 hours.
   *
   * @default - 6 x `timeout` (3 minutes with the default timeout)
   */
  readonly visibilityTimeout?: Duration;

  /**
   * How long the queue keeps an unconsumed message. Between 1 minute and 14 days.
   *
   * @default Duration.days(4)
   */
  readonly retentionPeriod?: Duration;

  /**
   * How long the dead-letter queue keeps a message. Between `retentionPeriod` and 14 days (a standard queue's
   * dead-letter queue keeps the original enqueue timestamp).
   *
   * @default Duration.days(14)
   */
  readonly deadLetterRetentionPeriod?: Duration;

  /**
   * How long the subscription's dead-letter queue keeps a message SNS could not deliver to the queue. Between 1 minute
   * and 14 days, a whole number of seconds; it counts in the `deduplicationWindow` rule.
   *
   * SNS dead-letters a delivery at once when the queue refuses it (a queue or key policy that denies SNS, a disabled
   * key, a deleted queue), or after its retries when SQS keeps failing. The `SubscriptionDeadLetters` alarm reports the
   * first such message, and they usually all need the same fix. Such a message can be a copy of one already applied
   * (the relay and SNS deliver at least once), so when it is redriven it must still find its inbox record. The default is not the SQS maximum: 14 days would take the defaults to
   * 14 + 4 + 14 = 32 days, beyond the 30-day window. A week is time to fix the fault and redrive, and keeps the defaults
   * 5 days inside the window. A longer retention needs a longer `deduplicationWindow`.
   *
   * @default Duration.days(7)
   */
  readonly subscriptionDeadLetterRetentionPeriod?: Duration;

  /**
   * The largest number of messages per invocation. Between 1 and 10000; above 10 requires a `maxBatchingWindow` of at least 1 second.
   *
   * @default 10
   */
  readonly batchSize?: number;

  /**
   * How long Lambda gathers messages before it invokes the function. Between 0 seconds and 5 minutes.
   *
   * @default - no batching window: the function is invoked as soon as messages are available
   */
  readonly maxBatchingWindow?: Duration;

  /**
   * The most concurrent invocations the event source starts, e.g. to protect a downstream system. Between 2 and 1000.
   *
   * @default - no limit besides the function's and the account's concurrency
   */
  readonly maxConcurrency?: number;

}

/** What a subscriber of an {@link IEventFlow} defaults to when its own props do not say. */
export interface SubscriberDefaults {
  /**
   * What happens to the subscriber's stateful resources when they are removed from the stack.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * Customer-managed KMS key that encrypts the consumer function's log group.
   *
   * @default - log groups are encrypted by CloudWatch Logs with its own key
   */
  readonly logEncryptionKey?: kms.IKey;
}
