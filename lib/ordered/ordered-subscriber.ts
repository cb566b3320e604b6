import { CfnOutput, Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ConsumerFunction } from '../consumer/consumer-function';
import { ConsumerQueue } from '../consumer/consumer-queue';
import { subscribeQueue } from '../consumer/private/subscription';
import { InboxTable, type IInboxTable } from '../consumer/inbox-table';
import { ProcessingMode } from '../consumer/processing-mode';
import { CONSUMER_DEFAULTS, minimumVisibilityTimeout } from '../consumer/private/defaults';
import type { FunctionOptions } from '../functions/function-options';
import type { AlarmOptions } from '../monitoring/alarm-options';
import { ALARM_PERIOD, createThresholdAlarm } from '../private/threshold-alarm';
import { orderedSubscriberOperatorOutputValue } from '../consumer/private/subscriber-operator-output';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { CONSUMER_METRICS } from '../../lambda/contract/metric-names';
import { runtimeModeName } from '../consumer/private/processing-modes';
import { deadLetterExpiringAlarm } from '../private/dead-letter-expiring';
import { grantKeyViaService } from '../private/kms-actions';
import { validateDurationAtLeast, validateDurationCoversSum, validateNumberInRange } from '../private/validate-props';
import { validateMaxMessageAge } from '../private/shared-limits';
import type { OrderedRelay } from './ordered-relay';
import { libraryGrant } from '../private/library-statements';
import * as remote from '../private/remote-ordered-subscription';
import { validationError } from '../private/validation-error';

/** The SQS actions an event source mapping needs on its queue. */
const SQS_CONSUME_ACTIONS = ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueUrl', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'];

/** Properties of an {@link OrderedSubscriber}. */
export interface OrderedSubscriberProps extends FunctionOptions, AlarmOptions {
  /** The ordered relay whose SNS FIFO topic this subscriber's queue subscribes to. */
  readonly relay: OrderedRelay;

  /**
   * The subscriber's name: scopes its inbox records and sequence fences. 1 to 64 letters, digits, `_`, `.` or `-`.
   */
  readonly subscriberName: string;

  /**
   * The inbox table of the subscriber's records and fences (the handler's function gets what the transactional
   * runtime needs on it).
   *
   * @default - a new InboxTable, encrypted with the relay's key
   */
  readonly inboxTable?: IInboxTable;

  /**
   * How long an inbox record keeps an event deduplicated. After it, the sequence fence still answers a redelivery of
   * an applied event (its sequence is at or below the fence). It is also what tells, at or below the fence, a NEW event
   * (no inbox record although younger than the window: the heads went back, `SequenceReusedError`, dead-lettered) from
   * a copy of an applied one (`duplicate`, acknowledged): an unrecorded event older than the window is acknowledged
   * unapplied. So it must outlast what a message can wait in this subscriber's queues: at least the FIFO queue's
   * retention plus its dead-letter queue's (4 days + 14 days by default); a shorter one fails at synth. Raising it
   * later does not lengthen the records written before: the consumer records each raise in the inbox table, and
   * events written before it are aged against the window before it (docs/ORDERED-DELIVERY.md, "Raising the
   * deduplication window").
   *
   * @default Duration.days(30)
   */
  readonly deduplicationWindow?: Duration;

  /**
   * Receives of a message before SQS moves it to the dead-letter queue, 1 to 1000. While a message of an aggregate is
   * retried (a gap waiting for an earlier event, a failing handler), the aggregate's later messages wait behind it.
   * Below 5, the least AWS recommends for a queue a Lambda function reads, the synth warns: a valid message whose few
   * receives each meet a transient failure (a throttled request, a crashed invocation, which fails its whole batch) is
   * dead-lettered.
   *
   * @default 5
   */
  readonly maxReceiveCount?: number;

  /**
   * Messages per invocation, 1 to 10 (the most a FIFO queue hands out at once).
   *
   * @default 10
   */
  readonly batchSize?: number;

  /**
   * How long an aggregate may be held before its `HeldAggregate` alarm fires, and the age of the oldest message of the
   * subscriber's FIFO queue at which its `OldestMessageAge` alarm fires (the consumer falling behind); 1 minute to 14
   * days. A FIFO queue keeps a message that keeps failing at the head of its group: its aggregate is held, behind a gap
   * the fence waits for or behind a failing handler, until `maxReceiveCount` receives move it to the dead-letter queue
   * (`HeldAggregate` counts the gaps and the function's errors: timeouts and crashes; a handler's transient failure is
   * the runtime's `Failed` only), and from then on by its letter (`HeldAggregate` counts the dead-letter queue's letters,
   * so it stays in alarm until they leave the queue, those at or below their aggregate's fence too, which hold nothing).
   *
   * @default Duration.minutes(5)
   */
  readonly maxMessageAge?: Duration;

  /**
   * How long a received message stays invisible; at least 6 times the function's timeout, and at most 11 hours 59
   * minutes (two `HeldAggregate` periods, each a minute longer, fit in the day CloudWatch evaluates).
   *
   * @default 6 x the function's timeout (3 minutes with the default 30-second timeout)
   */
  readonly visibilityTimeout?: Duration;
}

/**
 * A subscriber of the ordered path (docs/ORDERED-DELIVERY.md): an SQS FIFO queue of its own subscribed to the ordered
 * relay's SNS FIFO topic (raw delivery; SNS passes the message group, the aggregate, to FIFO queues), its FIFO
 * dead-letter queue, and a consumer function whose handler is built with `createOrderedConsumer`: each aggregate's
 * events applied in sequence, each once, a gap waited for and never skipped.
 */
export class OrderedSubscriber extends Construct implements iam.IGrantable {
  /** The subscriber's FIFO queue and its FIFO dead-letter queue, with the metric helpers alarms use. */
  public readonly consumerQueue: ConsumerQueue;
  /** The subscriber's FIFO queue. */
  public readonly queue: sqs.IQueue;
  /** The subscription of the queue to the ordered topic. */
  public readonly subscription: sns.Subscription;
  /** Its FIFO dead-letter queue: SQS moves a message here after `maxReceiveCount` receives; the runtime dead-letters here. */
  public readonly deadLetterQueue: sqs.IQueue;
  /** The inbox table with the subscriber's records and sequence fences. */
  public readonly inboxTable: IInboxTable;
  /** The consumer function. */
  public readonly consumerFunction: ConsumerFunction;
  /** The subscriber's name (its inbox records' and sequence fences' scope). */
  public readonly subscriberName: string;
  /** The ordered relay it subscribes to (its outbox table holds the ordered history that `replay` reads). */
  public readonly relay: OrderedRelay;
  /** The function's role. */
  public readonly grantPrincipal: iam.IPrincipal;
  /**
   * Fires when the dead-letter queue holds a message: its aggregate's later events wait behind it (redrive with
   * `idempotent-event-flow dlq redrive --subscriber-output <its Operator output>`, which sends them back in sequence as
   * its fences admit; `fence list` shows each held-up aggregate).
   */
  public readonly deadLetterAlarm: cloudwatch.Alarm;
  /** Fires when the consumer function reports errors (a whole invocation failed). */
  public readonly errorsAlarm: cloudwatch.Alarm;
  /**
   * Fires when, in every period of at least one visibility timeout for `maxMessageAge`, the sequence fence held an
   * aggregate behind a gap (the runtime's `SequenceGaps` metric) or the function failed whole (Lambda's `Errors`:
   * timeouts and crashes, which write no metric line): a held message is received again each visibility timeout. Not
   * the runtime's `Failed` (any transient failure of a healthy subscriber), nor the queue's
   * `ApproximateAgeOfOldestMessage` (SQS leaves a message received repeatedly out of it). `fence list` shows each
   * aggregate held behind a gap.
   */
  public readonly heldAggregateAlarm: cloudwatch.Alarm;
  /** Fires when the oldest message of the FIFO queue is `maxMessageAge` old: the consumer is falling behind. */
  public readonly oldestMessageAgeAlarm: cloudwatch.Alarm;
  /**
   * Fires when a dead letter has waited so long in the FIFO dead-letter queue that SQS deletes it within 2 days (its
   * retention, less 2 days: a FIFO queue counts a moved message's retention from the move). With the outbox's event
   * retention shorter than that retention, the dead letter is then the event's only copy.
   */
  public readonly deadLetterExpiringAlarm: cloudwatch.Alarm;

  public constructor(scope: Construct, id: string, props: OrderedSubscriberProps) {
    super(scope, id);
    const owner = `OrderedSubscriber '${id}'`;
    validateNumberInRange(owner, 'maxReceiveCount', props.maxReceiveCount, { min: 1, max: 1000, integer: true });
    validateNumberInRange(owner, 'batchSize', props.batchSize, { min: 1, max: 10, integer: true });
    validateMaxMessageAge(owner, props.maxMessageAge);
    const timeout = props.timeout ?? CONSUMER_DEFAULTS.FUNCTION_TIMEOUT;
    validateDurationAtLeast(owner, 'visibilityTimeout', props.visibilityTimeout, minimumVisibilityTimeout(timeout), '6 x the function timeout');
    validateHeldAggregateWindow(owner, props.visibilityTimeout);
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    // issue 41: in another account or Region than the relay, a key of its own (lib/private/remote-ordered-subscription.ts)
    const placement = remote.placeOrderedSubscriber(owner, this, props.subscriberName, props.relay);
    const key = placement.key;
    this.subscriberName = props.subscriberName;
    this.relay = props.relay;

    this.consumerQueue = new ConsumerQueue(this, 'Queue', {
      fifo: true,
      encryptionKey: key,
      maxReceiveCount: props.maxReceiveCount,
      visibilityTimeout: props.visibilityTimeout ?? minimumVisibilityTimeout(timeout),
      removalPolicy,
    });
    const queue = this.consumerQueue.queue;
    const deadLetterQueue = this.consumerQueue.deadLetterQueue;
    this.queue = queue;
    this.deadLetterQueue = deadLetterQueue;
    remote.admitOrderedSubscriber(this, props.subscriberName, props.relay, queue, deadLetterQueue, placement);
    // As a standard subscriber's: only the ordered topic may send to the queue, and the subscription waits for that
    // permission. What SNS can not deliver goes to the FIFO dead-letter queue (a FIFO topic's subscription takes a FIFO
    // queue), where the runtime's dead letters and SQS's moved messages are too; across Regions there is none (SNS takes
    // a subscription dead-letter queue only in the subscription's Region: lib/private/remote-ordered-subscription.ts).
    this.subscription = subscribeQueue(
      this,
      props.relay.topic,
      queue,
      remote.orderedSubscriptionDeadLetterQueue(deadLetterQueue, placement),
      undefined,
      placement.subscriptionRegion,
    );

    this.inboxTable = props.inboxTable ?? new InboxTable(this, 'Inbox', { encryptionKey: key, removalPolicy });
    // review r38 (R38-8): the window tells a new event below the fence from a copy of an applied one, so it must
    // outlast every wait of a message in this subscriber's queues (as a Subscriber's must)
    validateDurationCoversSum(owner, 'deduplicationWindow', props.deduplicationWindow, CONSUMER_DEFAULTS.DEDUPLICATION_WINDOW, [
      { prop: 'the FIFO queue retentionPeriod', value: this.consumerQueue.retentionPeriod },
      { prop: 'the dead-letter queue retentionPeriod', value: this.consumerQueue.deadLetterRetentionPeriod },
    ]);
    const deduplicationWindow = props.deduplicationWindow ?? CONSUMER_DEFAULTS.DEDUPLICATION_WINDOW;
    this.consumerFunction = new ConsumerFunction(this, 'Consumer', {
      ...props,
      timeout,
      subscriberName: props.subscriberName,
      processingMode: ProcessingMode.TRANSACTIONAL,
      inboxTable: this.inboxTable,
      deduplicationWindow,
      deadLetterQueue,
      removalPolicy,
    });
    const fn = this.consumerFunction.lambdaFunction;
    this.grantPrincipal = this.consumerFunction.grantPrincipal;
    fn.addEventSourceMapping('OrderedQueue', { eventSourceArn: queue.queueArn, batchSize: props.batchSize ?? CONSUMER_DEFAULTS.BATCH_SIZE, reportBatchItemFailures: true });
    libraryGrant('OrderedSubscriber', { grantee: fn, actions: SQS_CONSUME_ACTIONS, resourceArns: [queue.queueArn] });
    grantKeyViaService('OrderedSubscriber', key, fn, 'sqs', ['kms:Decrypt']);
    Validations.of(fn).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason: 'SQS event source mappings do not support on-failure destinations; a message that keeps failing moves to the FIFO dead-letter queue (maxReceiveCount).',
    });
    this.deadLetterAlarm = createThresholdAlarm(
      this,
      'DeadLetters',
      this.consumerQueue.metricDeadLetterMessagesVisible({ period: ALARM_PERIOD }),
      1,
      `Ordered subscriber ${props.subscriberName}: its dead-letter queue holds messages, and their aggregates' later events wait behind them. ` +
        'Each carries its reason; fix, then `idempotent-event-flow dlq redrive --subscriber-output <its Operator output>`, which sends them back in sequence ' +
        'as its fences admit (`fence list` shows each held-up aggregate).',
      props,
    );
    this.errorsAlarm = createThresholdAlarm(
      this,
      'Errors',
      fn.metricErrors({ period: ALARM_PERIOD, statistic: 'Sum' }),
      1,
      `Ordered subscriber ${props.subscriberName}: the consumer function reported errors.`,
      props,
    );
    const maxMessageAge = props.maxMessageAge ?? CONSUMER_DEFAULTS.MAX_MESSAGE_AGE;
    const visibilityTimeout = props.visibilityTimeout ?? minimumVisibilityTimeout(timeout);
    const held = heldAggregateEvaluation(visibilityTimeout, maxMessageAge);
    // review ro13, RO13-6: not any failed message (a healthy subscriber's transient failures are retried at once), but
    // what holds an aggregate: the fence waiting behind a gap (the runtime's SequenceGaps), or the function failing
    // whole (timeouts, crashes, out of memory: no line of the runtime then, Lambda's Errors counts them; a FIFO queue
    // keeps their messages at their groups' heads), in every period a held message is received again
    const gaps = new cloudwatch.Metric({
      namespace: CONSUMER_METRICS.NAMESPACE,
      metricName: CONSUMER_METRICS.SEQUENCE_GAPS,
      dimensionsMap: {
        [CONSUMER_METRICS.SUBSCRIBER_DIMENSION]: props.subscriberName,
        [CONSUMER_METRICS.PROCESSING_MODE_DIMENSION]: runtimeModeName(ProcessingMode.TRANSACTIONAL),
        // the runtime reads the same name from AWS_LAMBDA_FUNCTION_NAME
        [CONSUMER_METRICS.FUNCTION_NAME_DIMENSION]: fn.functionName,
      },
      statistic: cloudwatch.Stats.SUM,
      period: held.period,
    });
    // review ro14, RO14-4: once SQS dead-letters the held message nothing of its group is received again (no gap, no
    // error), yet the aggregate stays held: a letter of the FIFO dead-letter queue above its fence holds its aggregate,
    // so the letters (visible, or being read by `dlq redrive`) keep the alarm breaching until they leave the queue; the
    // window of maxMessageAge is then reached whatever maxReceiveCount x visibilityTimeout is. A letter at or below the
    // fence holds nothing, yet counts the same until it leaves the queue (review ro15, RO15-5: the description says so)
    const lettersOptions = { period: held.period, statistic: cloudwatch.Stats.MAXIMUM };
    const holding = new cloudwatch.MathExpression({
      expression: HELD_AGGREGATE_EXPRESSION,
      usingMetrics: {
        gaps,
        errors: fn.metricErrors({ period: held.period, statistic: cloudwatch.Stats.SUM }),
        letters: this.deadLetterQueue.metricApproximateNumberOfMessagesVisible(lettersOptions),
        reading: this.deadLetterQueue.metricApproximateNumberOfMessagesNotVisible(lettersOptions),
      },
      period: held.period,
      label: 'Sequence gaps, function errors and dead letters',
    });
    const window = `every ${held.period.toHumanString()} for ${Duration.seconds(held.period.toSeconds() * held.periods).toHumanString()}`;
    this.heldAggregateAlarm = new cloudwatch.Alarm(this, 'HeldAggregate', {
      metric: holding,
      threshold: 1,
      evaluationPeriods: held.periods,
      datapointsToAlarm: held.periods,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      // neither a gap, an error nor a letter means nothing held: a held message is received again at every visibility
      // timeout until it is dead-lettered, and its letter is counted from then on
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      alarmDescription:
        `Ordered subscriber ${props.subscriberName}: in ${window}, its sequence fence held an aggregate behind a gap (the runtime's SequenceGaps: ` +
        'an earlier event of the aggregate is missing, in the dead-letter queue or lost) or its function timed out or crashed (Lambda Errors: ' +
        "the batch's messages stay at the head of their groups) or its dead-letter queue held a letter (one above its aggregate's fence holds the aggregate until it is sent back; " +
        "one at or below it holds nothing but counts until it leaves the dead-letter queue: a duplicate 'dlq redrive --yes' deletes, or one it leaves for you, " +
        "reused, unproven or passed by 'fence skip'); the aggregate's later events wait behind a gap or a letter above the fence. " +
        "`idempotent-event-flow fence list` shows each aggregate held behind a gap and what each letter is; the function's log says why it failed.",
    });
    for (const action of props.alarmActions ?? []) {
      this.heldAggregateAlarm.addAlarmAction(action);
      this.heldAggregateAlarm.addOkAction(action);
    }
    this.oldestMessageAgeAlarm = createThresholdAlarm(
      this,
      'OldestMessageAge',
      this.consumerQueue.metricApproximateAgeOfOldestMessage({ period: ALARM_PERIOD }),
      maxMessageAge.toSeconds(),
      `Ordered subscriber ${props.subscriberName}: the oldest message of its FIFO queue waited ${maxMessageAge.toHumanString()} or more: the consumer is falling behind. ` +
        '(A message of a held aggregate is not counted here: see HeldAggregate.)',
      props,
    );
    this.deadLetterExpiringAlarm = deadLetterExpiringAlarm(this, 'DeadLetterExpiring', this.consumerQueue, `Ordered subscriber ${props.subscriberName}`, props);
    new CfnOutput(this, 'Operator', {
      description:
        `What operators of ordered subscriber ${props.subscriberName} need, e.g. for idempotent-event-flow dlq redrive ` +
        '--subscriber-output <this value> (in sequence, as its fences admit) and fence show|list|skip|redrive|replay',
      value: orderedSubscriberOperatorOutputValue(this, deduplicationWindow.toSeconds(), {
        outboxTableName: remote.outboxNameForOutput(props.relay.outboxTable.table.tableName, placement),
        crossRegion: placement.crossRegion,
      }),
    });
  }

  /** Every alarm of the subscriber: its dead letters, its function's errors, a held aggregate, its oldest message and an expiring dead letter. */
  public get alarms(): cloudwatch.IAlarm[] {
    return [this.deadLetterAlarm, this.errorsAlarm, this.heldAggregateAlarm, this.oldestMessageAgeAlarm, this.deadLetterExpiringAlarm];
  }
}

/** CloudWatch evaluates at most a day of periods of one minute or more. */
const MAX_EVALUATED_SECONDS = 86_400;

/**
 * `HeldAggregate`'s metric math: the runtime's sequence gaps and the function's errors while a held message is
 * received, and the letters of the FIFO dead-letter queue (visible, or being read) once it is dead-lettered.
 */
const HELD_AGGREGATE_EXPRESSION = 'FILL(gaps, 0) + FILL(errors, 0) + FILL(letters, 0) + FILL(reading, 0)';

/** The period of `HeldAggregate`: the visibility timeout rounded up to a minute, plus a minute. */
function heldAggregatePeriodSeconds(visibilityTimeout: Duration): number {
  return (Math.ceil(visibilityTimeout.toSeconds({ integral: false }) / 60) + 1) * 60;
}

/**
 * Fails when no window of two `HeldAggregate` periods fits in the day CloudWatch evaluates: each period must be longer
 * than the visibility timeout (so it holds a receive of a held message), and one period alone would fire on a single
 * retried failure.
 */
function validateHeldAggregateWindow(owner: string, visibilityTimeout: Duration | undefined): void {
  if (visibilityTimeout === undefined || visibilityTimeout.isUnresolved()) return;
  if (2 * heldAggregatePeriodSeconds(visibilityTimeout) <= MAX_EVALUATED_SECONDS) return;
  const bound = Duration.seconds(MAX_EVALUATED_SECONDS / 2 - 60);
  throw validationError(
    `${owner}: visibilityTimeout must be ${bound.toSeconds()} seconds (${bound.toHumanString()}) or less so that HeldAggregate can evaluate two periods ` +
      `longer than it within a day, but ${visibilityTimeout.toSeconds({ integral: false })} seconds was provided`,
  );
}

/**
 * The `HeldAggregate` alarm's period and count: a period of the visibility timeout rounded up to a minute, plus a
 * minute (a held message is received again each visibility timeout, so each such period holds one failure of it), and
 * as many as cover `maxMessageAge` (at least 2, so one retried failure does not fire it), within a day.
 */
function heldAggregateEvaluation(visibilityTimeout: Duration, maxMessageAge: Duration): { period: Duration; periods: number } {
  const periodSeconds = heldAggregatePeriodSeconds(visibilityTimeout);
  const wanted = Math.max(2, Math.ceil(maxMessageAge.toSeconds() / periodSeconds));
  return { period: Duration.seconds(periodSeconds), periods: Math.max(1, Math.min(wanted, Math.floor(MAX_EVALUATED_SECONDS / periodSeconds))) };
}
