import { Duration, Names, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { CONSUMER_METRICS } from '../../lambda/metrics';
import type { IOutboxTable } from '../outbox/outbox-table';
import { grantKeyViaService } from '../private/kms-actions';
import { validateEventSource } from '../private/shared-limits';
import {
  validateDurationAtLeast,
  validateDurationCoversSum,
  validateDurationInRange,
  validateDurationLessThan,
  validateNumberInRange,
  validateWholeSeconds,
} from '../private/validate-props';
import { FunctionOptions } from '../functions/function-options';
import { ConsumerFunction } from './consumer-function';
import { ConsumerQueue } from './consumer-queue';
import { IInboxTable, InboxTable } from './inbox-table';
import { ProcessingMode } from './processing-mode';
import { CONSUMER_DEFAULTS, minimumVisibilityTimeout } from './private/defaults';
import { runtimeModeName, usesInbox, usesLease } from './private/processing-modes';
import { claimSubscriberName } from './private/subscriber-names';
import { warnOnKeysOutsideEnvelope } from './private/filter-policy-keys';
import { validateFunctionOptions, validateQueueOptions, validateSubscriberName } from './private/validate-consumer-props';
import { validationError } from '../private/validation-error';

/**
 * What Lambda's SQS event source mapping does with the queue on the function's behalf (Lambda developer guide,
 * "Execution role permissions" for SQS; the actions `Queue.grantConsumeMessages` grants).
 */
const SQS_CONSUME_ACTIONS = ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueUrl', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'];

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
   * `idempotent-event-flow/runtime` (`createTransactionalConsumer`, `createLeaseConsumer`,
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
   * of seconds, and less than `visibilityTimeout`, so that a redelivery after a crash finds the lease expired.
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

/** Properties of a {@link Subscriber}. */
export interface SubscriberProps extends SubscriberOptions {
  /** The topic the outbox relay publishes events to. */
  readonly topic: sns.ITopic;

  /**
   * Key that encrypts the consumer queue, its dead-letter queue and the subscription's dead-letter queue.
   *
   * Pass the topic's customer-managed key. SNS encrypts each delivery with the queue's key, so the key policy
   * must let `sns.amazonaws.com` use `kms:GenerateDataKey*` and `kms:Decrypt` for deliveries from this topic
   * (`EventTopic`'s key does); this construct does not change the key policy. The inbox table this construct
   * creates is encrypted with it too (an `inboxTable` you pass keeps its own encryption).
   *
   * @default - SQS-managed server-side encryption (SSE-SQS)
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * The outbox the handler appends events to; only with `publishesEvents: true`, which requires it.
   * (`IdempotentEventFlow.addSubscriber` passes the flow's outbox.)
   *
   * @default - no outbox: the subscriber does not publish events
   */
  readonly outboxTable?: IOutboxTable;

  /**
   * The CloudEvents `source` of the events the handler appends, unless an event sets its own; only with
   * `publishesEvents: true`.
   *
   * @default - the outbox table's `eventSource`
   */
  readonly eventSource?: string;
}

/**
 * One idempotent consumer of the event topic.
 *
 * It subscribes an encrypted, TLS-only SQS queue (with its dead-letter queue) to the topic with raw message
 * delivery and a redrive dead-letter queue of its own, and consumes the queue with a Lambda function that reports
 * batch item failures. With the default `ProcessingMode.TRANSACTIONAL`, the function's runtime records each
 * message's event id in the inbox table in the same DynamoDB transaction as the handler's writes, so every event
 * takes effect at most once per subscriber within `deduplicationWindow`, and at least once as long as it is not
 * dead-lettered. The other modes (see {@link ProcessingMode}) cover effects outside one DynamoDB transaction.
 */
export class Subscriber extends Construct implements iam.IGrantable {
  /** The subscriber's name, used in inbox keys and in the runtime's log lines. */
  public readonly subscriberName: string;

  /** The queue and its dead-letter queue, with the metric helpers that alarms use. */
  public readonly consumerQueue: ConsumerQueue;

  /** The queue the topic delivers to and the function consumes. */
  public readonly queue: sqs.IQueue;

  /** The consumer queue's dead-letter queue, for messages that kept failing or failed permanently. */
  public readonly deadLetterQueue: sqs.IQueue;

  /** Where SNS puts messages it could not deliver to the queue (e.g. after the queue or its key became unusable). */
  public readonly subscriptionDeadLetterQueue: sqs.IQueue;

  /** The topic subscription of the queue. */
  public readonly subscription: sns.Subscription;

  /** How the runtime makes each message take effect once. */
  public readonly processingMode: ProcessingMode;

  /** The inbox table the function records processed messages in; undefined with `ProcessingMode.AGGREGATE`. */
  public readonly inboxTable?: IInboxTable;

  /**
   * How long a dedup record lives: the window within which a redelivery is recognised. Undefined with
   * `ProcessingMode.AGGREGATE`, which keeps no records (only the processed ids on the aggregate).
   */
  public readonly deduplicationWindow?: Duration;

  /** Whether a blocked message's body is kept on its record (lease and multi-step modes). */
  public readonly keepsBlockedMessageBody: boolean;

  /** The consumer Lambda function; grant it access to the resources its handler writes. */
  public readonly consumerFunction: ConsumerFunction;

  /**
   * The consumer function's role, so the subscriber itself can be granted what its handler needs, e.g.
   * `table.grantWriteData(subscriber)`.
   */
  public readonly grantPrincipal: iam.IPrincipal;

  public constructor(scope: Construct, id: string, props: SubscriberProps) {
    super(scope, id);
    const owner = `Subscriber '${id}'`;
    this.subscriberName = props.subscriberName ?? id;
    validateSubscriberProps(owner, this.subscriberName, props);
    this.processingMode = props.processingMode ?? ProcessingMode.TRANSACTIONAL;

    const timeout = props.timeout ?? CONSUMER_DEFAULTS.FUNCTION_TIMEOUT;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    this.consumerQueue = new ConsumerQueue(this, 'Queue', {
      encryptionKey: props.encryptionKey,
      maxReceiveCount: props.maxReceiveCount,
      visibilityTimeout: props.visibilityTimeout ?? minimumVisibilityTimeout(timeout),
      retentionPeriod: props.retentionPeriod,
      deadLetterRetentionPeriod: props.deadLetterRetentionPeriod,
      removalPolicy,
    });
    this.queue = this.consumerQueue.queue;
    this.deadLetterQueue = this.consumerQueue.deadLetterQueue;

    this.subscriptionDeadLetterQueue = this.createSubscriptionDeadLetterQueue(
      props.encryptionKey,
      props.subscriptionDeadLetterRetentionPeriod ?? CONSUMER_DEFAULTS.SUBSCRIPTION_DEAD_LETTER_RETENTION_PERIOD,
      removalPolicy,
    );
    this.subscription = this.subscribe(props.topic, props.filterPolicyWithMessageBody);
    warnOnKeysOutsideEnvelope(this, owner, props.filterPolicyWithMessageBody);

    const hasInbox = usesInbox(this.processingMode);
    this.deduplicationWindow = hasInbox ? (props.deduplicationWindow ?? CONSUMER_DEFAULTS.DEDUPLICATION_WINDOW) : undefined;
    this.keepsBlockedMessageBody = props.keepBlockedMessageBody === true;
    this.inboxTable = hasInbox ? (props.inboxTable ?? new InboxTable(this, 'InboxTable', { removalPolicy, encryptionKey: props.encryptionKey })) : undefined;
    // Two subscribers of one name on one table would share inbox records (claimed here, before the function exists).
    if (this.inboxTable) claimSubscriberName(owner, this.inboxTable, this.subscriberName, this.node.path);

    this.consumerFunction = new ConsumerFunction(this, 'Function', {
      entry: props.entry,
      handler: props.handler,
      subscriberName: this.subscriberName,
      processingMode: this.processingMode,
      inboxTable: this.inboxTable,
      deduplicationWindow: this.deduplicationWindow,
      leaseDuration: props.leaseDuration,
      keepBlockedMessageBody: props.keepBlockedMessageBody,
      deadLetterQueue: this.deadLetterQueue,
      // validatePublishing: both are given only with publishesEvents
      outboxTable: props.outboxTable,
      eventSource: props.eventSource,
      environment: props.environment,
      timeout,
      memorySize: props.memorySize,
      logRetention: props.logRetention,
      logEncryptionKey: props.logEncryptionKey,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      vpc: props.vpc,
      vpcSubnets: props.vpcSubnets,
      securityGroups: props.securityGroups,
      tracing: props.tracing,
      applicationLogLevel: props.applicationLogLevel,
      removalPolicy,
      bundling: props.bundling,
    });

    // What SqsEventSource does, under the same construct id (so the mapping keeps its logical id), except the key
    // grant: SqsEventSource grants kms:Decrypt on the queue's key for any use; here the key may be used through SQS
    // only (kms:ViaService).
    this.grantPrincipal = this.consumerFunction.grantPrincipal;
    const fn = this.consumerFunction.lambdaFunction;
    fn.addEventSourceMapping(`SqsEventSource:${Names.nodeUniqueId(this.queue.node)}`, {
      eventSourceArn: this.queue.queueArn,
      batchSize: props.batchSize ?? CONSUMER_DEFAULTS.BATCH_SIZE,
      maxBatchingWindow: props.maxBatchingWindow,
      maxConcurrency: props.maxConcurrency,
      reportBatchItemFailures: true,
    });
    this.queue.grant(fn, ...SQS_CONSUME_ACTIONS);
    grantKeyViaService(this.consumerQueue.encryptionKey, fn, 'sqs', ['kms:Decrypt']);
    Validations.of(fn).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason:
        'SQS event source mappings do not support on-failure destinations. A message that keeps failing is moved to ' +
        'the consumer dead-letter queue by the queue\'s redrive policy (maxReceiveCount), and the runtime sends ' +
        'permanently failing messages there itself.',
    });
  }

  /**
   * A consumer metric of this subscriber, in the `IdempotentEventFlow` namespace with the dimensions `Subscriber`,
   * `ProcessingMode` and `FunctionName` (the consumer function's name, unique per deployment, so another stack or stage
   * with a subscriber of the same name in this account and region has metrics of its own). The runtime writes them as
   * CloudWatch embedded metric format log lines, one per batch.
   *
   * @default - sum over 5 minutes
   */
  public metric(metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: CONSUMER_METRICS.NAMESPACE,
      metricName,
      dimensionsMap: {
        [CONSUMER_METRICS.SUBSCRIBER_DIMENSION]: this.subscriberName,
        [CONSUMER_METRICS.PROCESSING_MODE_DIMENSION]: runtimeModeName(this.processingMode),
        // The runtime reads the same name from AWS_LAMBDA_FUNCTION_NAME (LAMBDA_ENV.FUNCTION_NAME).
        [CONSUMER_METRICS.FUNCTION_NAME_DIMENSION]: this.consumerFunction.lambdaFunction.functionName,
      },
      statistic: cloudwatch.Stats.SUM,
      period: Duration.minutes(5),
      ...props,
    }).attachTo(this);
  }

  /**
   * Messages whose effect was applied.
   *
   * @default - sum over 5 minutes
   */
  public metricProcessed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.PROCESSED, props);
  }

  /**
   * Redeliveries recognised and acknowledged without applying anything.
   *
   * @default - sum over 5 minutes
   */
  public metricDuplicates(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.DUPLICATES, props);
  }

  /**
   * Messages left on the queue to be retried (transient failures).
   *
   * @default - sum over 5 minutes
   */
  public metricFailed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.FAILED, props);
  }

  /**
   * Messages blocked for an operator because an effect's outcome is unknown (`ProcessingMode.LEASE` and
   * `ProcessingMode.MULTI_STEP`).
   *
   * @default - sum over 5 minutes
   */
  public metricBlocked(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.BLOCKED, props);
  }

  /**
   * Messages the runtime sent to the dead-letter queue for a permanent reason.
   *
   * @default - sum over 5 minutes
   */
  public metricDeadLettered(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.DEAD_LETTERED, props);
  }

  /**
   * Copies of a message already blocked for an operator (SNS or relay duplicates) that were acknowledged without
   * another dead letter (`ProcessingMode.LEASE` and `ProcessingMode.MULTI_STEP`). Not counted in `metricBlocked()`.
   *
   * @default - sum over 5 minutes
   */
  public metricAlreadyBlocked(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.ALREADY_BLOCKED, props);
  }

  /**
   * End-to-end latency in milliseconds: for each message applied, the time from its event's `time` (when the producer
   * appended it) to the moment the consumer finished it. The runtime writes one value per applied message, so any
   * percentile can be asked for (`statistic: 'p50'`).
   *
   * @default - p99 over 5 minutes
   */
  public metricEventAge(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.EVENT_AGE, { statistic: 'p99', ...props });
  }

  private createSubscriptionDeadLetterQueue(encryptionKey: kms.IKey | undefined, retentionPeriod: Duration, removalPolicy: RemovalPolicy): sqs.IQueue {
    const queue = new sqs.Queue(this, 'SubscriptionDeadLetterQueue', {
      encryption: encryptionKey ? sqs.QueueEncryption.KMS : sqs.QueueEncryption.SQS_MANAGED,
      encryptionMasterKey: encryptionKey,
      enforceSSL: true,
      retentionPeriod,
      removalPolicy,
    });
    Validations.of(queue).acknowledge(
      {
        id: 'AwsSolutions-SQS3',
        reason:
          'This queue is itself a dead-letter queue: the redrive policy (RedrivePolicy) of the SNS subscription points ' +
          'at it. cdk-nag only recognises dead-letter queues of SQS queues and Lambda functions.',
      },
      {
        id: 'Serverless-SQSRedrivePolicy',
        reason:
          'This queue is the SNS subscription\'s dead-letter queue, the end of its redrive chain; messages here wait for ' +
          'inspection and a manual re-publish. A further dead-letter queue would only move the problem.',
      },
    );
    return queue;
  }

  private subscribe(
    topic: sns.ITopic,
    filterPolicyWithMessageBody: { [attribute: string]: sns.FilterOrPolicy } | undefined,
  ): sns.Subscription {
    const snsPrincipal = new iam.ServicePrincipal('sns.amazonaws.com');
    const fromThisTopic = { ArnEquals: { 'aws:SourceArn': topic.topicArn } };

    // What SqsSubscription does, with a construct id of our choosing: let this topic (only) send to the queue.
    // Unlike SqsSubscription we leave the key policy alone: it is the topic's key, whose owner (EventTopic) lets SNS
    // use it for this topic; a statement naming the topic's ARN here would make the key and the topic depend on
    // each other when they share a stack.
    const queuePolicy = this.queue.addToResourcePolicy(
      new iam.PolicyStatement({
        actions: ['sqs:SendMessage'],
        principals: [snsPrincipal],
        resources: [this.queue.queueArn],
        conditions: fromThisTopic,
      }),
    );
    // sns.Subscription adds the dead-letter queue's policy for this topic itself.
    const subscription = new sns.Subscription(this, 'Subscription', {
      topic,
      protocol: sns.SubscriptionProtocol.SQS,
      endpoint: this.queue.queueArn,
      rawMessageDelivery: true,
      filterPolicyWithMessageBody,
      deadLetterQueue: this.subscriptionDeadLetterQueue,
    });
    if (queuePolicy.policyDependable) {
      // SNS must be allowed to send before the subscription starts delivering.
      subscription.node.addDependency(queuePolicy.policyDependable);
    }
    return subscription;
  }
}

/** Every check runs before any child exists, and names this subscriber in the message. */
function validateSubscriberProps(owner: string, subscriberName: string, props: SubscriberProps): void {
  validateSubscriberName(owner, props.subscriberName === undefined ? 'subscriberName (the construct id)' : 'subscriberName', subscriberName);
  validateFunctionOptions(owner, props, props.publishesEvents === true);
  validateQueueOptions(owner, props);
  validatePublishing(owner, props);

  const timeout = props.timeout ?? CONSUMER_DEFAULTS.FUNCTION_TIMEOUT;
  if (!timeout.isUnresolved()) {
    validateDurationAtLeast(owner, 'visibilityTimeout', props.visibilityTimeout, minimumVisibilityTimeout(timeout), '6 x timeout');
  }
  if (usesLease(props.processingMode ?? ProcessingMode.TRANSACTIONAL) && !timeout.isUnresolved()) {
    validateDurationLessThan(
      owner,
      'leaseDuration',
      props.leaseDuration,
      props.visibilityTimeout ?? minimumVisibilityTimeout(timeout),
      'visibilityTimeout',
      'so that a redelivery after a crash finds the lease expired',
    );
  }

  validateDurationInRange(owner, 'subscriptionDeadLetterRetentionPeriod', props.subscriptionDeadLetterRetentionPeriod, {
    min: Duration.minutes(1),
    max: Duration.days(14),
  });
  validateWholeSeconds(owner, 'subscriptionDeadLetterRetentionPeriod', props.subscriptionDeadLetterRetentionPeriod);
  // The longest path of a copy with one redrive out of each dead-letter queue (see deduplicationWindow); checked with
  // the default window too, which retentions given alone can exceed. Without an inbox there is no window.
  if (usesInbox(props.processingMode ?? ProcessingMode.TRANSACTIONAL)) {
    validateDurationCoversSum(owner, 'deduplicationWindow', props.deduplicationWindow, CONSUMER_DEFAULTS.DEDUPLICATION_WINDOW, [
      {
        prop: 'subscriptionDeadLetterRetentionPeriod',
        value: props.subscriptionDeadLetterRetentionPeriod ?? CONSUMER_DEFAULTS.SUBSCRIPTION_DEAD_LETTER_RETENTION_PERIOD,
      },
      { prop: 'retentionPeriod', value: props.retentionPeriod ?? CONSUMER_DEFAULTS.RETENTION_PERIOD },
      { prop: 'deadLetterRetentionPeriod', value: props.deadLetterRetentionPeriod ?? CONSUMER_DEFAULTS.DEAD_LETTER_RETENTION_PERIOD },
    ]);
  }

  validateNumberInRange(owner, 'batchSize', props.batchSize, { min: 1, max: 10000, integer: true });
  validateDurationInRange(owner, 'maxBatchingWindow', props.maxBatchingWindow, { min: Duration.seconds(0), max: Duration.minutes(5) });
  // Lambda rejects a batch size above 10 without a batching window of at least 1 second.
  const batchingWindowSeconds = props.maxBatchingWindow?.isUnresolved() ? 1 : (props.maxBatchingWindow?.toSeconds({ integral: false }) ?? 0);
  if (props.batchSize !== undefined && props.batchSize > 10 && batchingWindowSeconds < 1) {
    throw validationError(
      `${owner}: batchSize must be 10 or less unless maxBatchingWindow is at least 1 second, but ${props.batchSize} was provided`,
    );
  }
  validateNumberInRange(owner, 'maxConcurrency', props.maxConcurrency, { min: 2, max: 1000, integer: true });
}

/** `publishesEvents` needs an outbox; `outboxTable` and `eventSource` mean nothing without `publishesEvents`. */
function validatePublishing(owner: string, props: SubscriberProps): void {
  if (props.publishesEvents) {
    if (props.outboxTable === undefined) {
      throw validationError(
        `${owner}: publishesEvents requires outboxTable (the outbox the handler appends events to), but none was provided; ` +
          'IdempotentEventFlow.addSubscriber passes the flow\'s outbox',
      );
    }
  } else {
    if (props.outboxTable !== undefined) {
      throw validationError(`${owner}: outboxTable can only be used with publishesEvents: true, but publishesEvents is ${String(props.publishesEvents ?? false)}`);
    }
    if (props.eventSource !== undefined) {
      throw validationError(`${owner}: eventSource can only be used with publishesEvents: true, but publishesEvents is ${String(props.publishesEvents ?? false)}`);
    }
  }
  validateEventSource(owner, 'eventSource', props.eventSource);
}
