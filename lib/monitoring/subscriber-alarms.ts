import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { nameAlarms } from '../consumer/private/cross-stack-names';
import { usesLease } from '../consumer/private/processing-modes';
import { Subscriber } from '../consumer/subscriber';
import { validateMaxEndToEndLatency, validateMaxMessageAge } from '../private/shared-limits';
import { ALARM_PERIOD, createThresholdAlarm } from '../private/threshold-alarm';
import { AlarmOptions } from './alarm-options';

/** Period of the `Blocked` alarm: one blocked message within 5 minutes fires it. */
const BLOCKED_ALARM_PERIOD = Duration.minutes(5);

/** How long before SQS deletes a dead letter the `DeadLetterExpiring` alarm fires, at least. */
const DEAD_LETTER_EXPIRY_WARNING = Duration.days(2);

/**
 * The `DeadLetterExpiring` threshold, in seconds of the dead-letter queue's ApproximateAgeOfOldestMessage: its
 * retention, less {@link DEAD_LETTER_EXPIRY_WARNING}, less the consumer queue's retention, at least a minute. On a
 * standard queue SQS deletes a message it moved to the dead-letter queue by its first enqueue time, but the metric
 * counts from the move (setting-up-dead-letter-queue-retention.html): such a message is deleted up to the queue's
 * retention earlier than the metric says.
 */
function deadLetterExpiryThreshold(subscriber: Subscriber): Duration {
  const seconds =
    subscriber.consumerQueue.deadLetterRetentionPeriod.toSeconds() - subscriber.consumerQueue.retentionPeriod.toSeconds() - DEAD_LETTER_EXPIRY_WARNING.toSeconds();
  return Duration.seconds(Math.max(60, seconds));
}

/** Period of the `EndToEndLatency` alarm: a p99 needs enough values to mean something. */
const LATENCY_ALARM_PERIOD = Duration.minutes(5);

/** Options of {@link SubscriberAlarms} that {@link IdempotentEventFlow} passes through. */
export interface SubscriberAlarmOptions extends AlarmOptions {
  /**
   * Age of the oldest message in the consumer queue at which the consumer counts as falling behind.
   *
   * @default Duration.minutes(5)
   */
  readonly maxMessageAge?: Duration;

  /**
   * End-to-end latency at which the subscriber's `EndToEndLatency` alarm fires: when the p99 of its events' age at the
   * moment they were applied (from the producer's `time` to the consumer's commit) reaches it over 5 minutes.
   * 1 second to 14 days.
   *
   * @default - no latency alarm (the latency is still on the dashboard and in `metricEventAge()`)
   */
  readonly maxEndToEndLatency?: Duration;
}

/** Properties of {@link SubscriberAlarms}. */
export interface SubscriberAlarmsProps extends SubscriberAlarmOptions {
  /** The subscriber to watch. */
  readonly subscriber: Subscriber;
}

/**
 * Alarms for one subscriber, so no message is lost or stuck silently:
 * - `DeadLetters`: the consumer queue's dead-letter queue holds a message;
 * - `SubscriptionDeadLetters` (only when the subscriber has a `subscriptionDeadLetterQueue`: not across Regions): SNS
 *   could not deliver a message to the queue;
 * - `Errors`: the consumer function reported an error;
 * - `OldestMessageAge`: the oldest message waited longer than `maxMessageAge`;
 * - `DeadLetterExpiring`: a dead letter has waited so long that SQS deletes it within 2 days (for a blocked message,
 *   whose record does not keep the body, the dead letter is its only copy);
 * - `Blocked` (`ProcessingMode.LEASE` and `ProcessingMode.MULTI_STEP` only): the runtime blocked a message for an
 *   operator, because an effect's outcome is unknown;
 * - `EndToEndLatency` (only with `maxEndToEndLatency`): the p99 end-to-end latency reached `maxEndToEndLatency`.
 */
export class SubscriberAlarms extends Construct {
  /** Fires as soon as the consumer queue's dead-letter queue holds a message. */
  public readonly deadLetterAlarm: cloudwatch.Alarm;
  /**
   * Fires as soon as the subscription's dead-letter queue holds a message; undefined for a subscriber without one (in
   * another Region than its flow's topic: there the flow's `DeliveryFailed` alarm watches failed deliveries).
   */
  public readonly subscriptionDeadLetterAlarm?: cloudwatch.Alarm;
  /** Fires when the consumer function reports an error. */
  public readonly errorsAlarm: cloudwatch.Alarm;
  /** Fires when the oldest message in the consumer queue is older than `maxMessageAge`. */
  public readonly oldestMessageAgeAlarm: cloudwatch.Alarm;
  /**
   * Fires when a message has waited in the consumer queue's dead-letter queue so long that SQS deletes it within 2
   * days: its retention, less 2 days, less the consumer queue's retention (a message SQS moved there is deleted by its
   * first enqueue time).
   */
  public readonly deadLetterExpiringAlarm: cloudwatch.Alarm;
  /**
   * Fires when the runtime blocked a message for an operator; only for `ProcessingMode.LEASE` and
   * `ProcessingMode.MULTI_STEP` subscribers, undefined for the other modes (they never block).
   */
  public readonly blockedAlarm?: cloudwatch.Alarm;
  /** Fires when the p99 end-to-end latency reaches `maxEndToEndLatency`; undefined without it. */
  public readonly endToEndLatencyAlarm?: cloudwatch.Alarm;
  /** Every alarm of this construct. */
  public readonly alarms: cloudwatch.IAlarm[];

  public constructor(scope: Construct, id: string, props: SubscriberAlarmsProps) {
    super(scope, id);
    const maxMessageAge = props.maxMessageAge ?? Duration.minutes(5);
    validateMaxMessageAge(`SubscriberAlarms '${id}'`, maxMessageAge);
    validateMaxEndToEndLatency(`SubscriberAlarms '${id}'`, props.maxEndToEndLatency);
    const subscriber = props.subscriber;
    const name = subscriber.subscriberName;
    const visible = { period: ALARM_PERIOD, statistic: 'Maximum' };
    this.deadLetterAlarm = createThresholdAlarm(
      this,
      'DeadLetters',
      subscriber.deadLetterQueue.metricApproximateNumberOfMessagesVisible(visible),
      1,
      `Subscriber ${name}: its dead-letter queue holds messages that failed processing. Each carries its reason; redrive after fixing.`,
      props,
    );
    if (subscriber.subscriptionDeadLetterQueue !== undefined) {
      this.subscriptionDeadLetterAlarm = createThresholdAlarm(
        this,
        'SubscriptionDeadLetters',
        subscriber.subscriptionDeadLetterQueue.metricApproximateNumberOfMessagesVisible(visible),
        1,
        `Subscriber ${name}: SNS could not deliver messages to the consumer queue (check the queue policy and KMS key policy).`,
        props,
      );
    }
    this.errorsAlarm = createThresholdAlarm(
      this,
      'Errors',
      subscriber.consumerFunction.metricErrors({ period: ALARM_PERIOD, statistic: 'Sum' }),
      1,
      `Subscriber ${name}: the consumer function reported errors.`,
      props,
    );
    this.oldestMessageAgeAlarm = createThresholdAlarm(
      this,
      'OldestMessageAge',
      subscriber.queue.metricApproximateAgeOfOldestMessage(visible),
      maxMessageAge.toSeconds(),
      `Subscriber ${name}: the oldest message waited ${maxMessageAge.toHumanString()} or more; the consumer is falling behind or stuck.`,
      props,
    );
    const expiringAfter = deadLetterExpiryThreshold(subscriber);
    this.deadLetterExpiringAlarm = createThresholdAlarm(
      this,
      'DeadLetterExpiring',
      subscriber.deadLetterQueue.metricApproximateAgeOfOldestMessage(visible),
      expiringAfter.toSeconds(),
      `Subscriber ${name}: a message has waited ${expiringAfter.toHumanString()} in its dead-letter queue: SQS deletes it within ` +
        `${DEAD_LETTER_EXPIRY_WARNING.toHumanString()} (its retention is ${subscriber.consumerQueue.deadLetterRetentionPeriod.toHumanString()}). ` +
        'Redrive it before then; a blocked message: resolve it, then redrive it (its dead letter may be its only copy).',
      props,
    );
    if (usesLease(subscriber.processingMode)) {
      // The runtime's metric is counted per batch line; over 5 minutes a single blocked message is a datapoint of 1.
      this.blockedAlarm = createThresholdAlarm(
        this,
        'Blocked',
        subscriber.metricBlocked({ period: BLOCKED_ALARM_PERIOD }),
        1,
        `Subscriber ${name}: a message is blocked because an effect's outcome is unknown. Check whether it took effect, ` +
          'resolve it with the operator CLI and redrive it from the dead-letter queue.',
        props,
      );
    }
    if (props.maxEndToEndLatency !== undefined) {
      this.endToEndLatencyAlarm = createThresholdAlarm(
        this,
        'EndToEndLatency',
        subscriber.metricEventAge({ period: LATENCY_ALARM_PERIOD }),
        props.maxEndToEndLatency.toMilliseconds(),
        `Subscriber ${name}: the p99 end-to-end latency (event time to commit) reached ${props.maxEndToEndLatency.toHumanString()}. ` +
          'Check the relay (pipe executions, throttles), the queue\'s oldest message age and the consumer\'s duration and throttles on the dashboard.',
        props,
      );
    }
    const alarms = [
      this.deadLetterAlarm,
      ...(this.subscriptionDeadLetterAlarm ? [this.subscriptionDeadLetterAlarm] : []),
      this.errorsAlarm,
      this.oldestMessageAgeAlarm,
      this.deadLetterExpiringAlarm,
      ...(this.blockedAlarm ? [this.blockedAlarm] : []),
      ...(this.endToEndLatencyAlarm ? [this.endToEndLatencyAlarm] : []),
    ];
    this.alarms = alarms;
    // A subscriber in another stack than its flow: names the flow's dashboard can show without referring to this stack.
    nameAlarms(subscriber, alarms);
  }
}
