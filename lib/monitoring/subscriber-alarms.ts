import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { Construct } from 'constructs';
import { Subscriber } from '../consumer/subscriber';
import { validateMaxMessageAge } from '../private/shared-limits';
import { ALARM_PERIOD, createThresholdAlarm } from '../private/threshold-alarm';
import { AlarmOptions } from './alarm-options';

/** Options of {@link SubscriberAlarms} that {@link IdempotentEventFlow} passes through. */
export interface SubscriberAlarmOptions extends AlarmOptions {
  /**
   * Age of the oldest message in the consumer queue at which the consumer counts as falling behind.
   *
   * @default Duration.minutes(5)
   */
  readonly maxMessageAge?: Duration;
}

/** Properties of {@link SubscriberAlarms}. */
export interface SubscriberAlarmsProps extends SubscriberAlarmOptions {
  /** The subscriber to watch. */
  readonly subscriber: Subscriber;
}

/**
 * Alarms for one subscriber, so no message is lost or stuck silently:
 * - `DeadLetters`: the consumer queue's dead-letter queue holds a message;
 * - `SubscriptionDeadLetters`: SNS could not deliver a message to the queue;
 * - `Errors`: the consumer function reported an error;
 * - `OldestMessageAge`: the oldest message waited longer than `maxMessageAge`.
 */
export class SubscriberAlarms extends Construct {
  /** Fires as soon as the consumer queue's dead-letter queue holds a message. */
  public readonly deadLetterAlarm: cloudwatch.Alarm;
  /** Fires as soon as the subscription's dead-letter queue holds a message. */
  public readonly subscriptionDeadLetterAlarm: cloudwatch.Alarm;
  /** Fires when the consumer function reports an error. */
  public readonly errorsAlarm: cloudwatch.Alarm;
  /** Fires when the oldest message in the consumer queue is older than `maxMessageAge`. */
  public readonly oldestMessageAgeAlarm: cloudwatch.Alarm;
  /** Every alarm of this construct. */
  public readonly alarms: cloudwatch.IAlarm[];

  public constructor(scope: Construct, id: string, props: SubscriberAlarmsProps) {
    super(scope, id);
    const maxMessageAge = props.maxMessageAge ?? Duration.minutes(5);
    validateMaxMessageAge(`SubscriberAlarms '${id}'`, maxMessageAge);
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
    this.subscriptionDeadLetterAlarm = createThresholdAlarm(
      this,
      'SubscriptionDeadLetters',
      subscriber.subscriptionDeadLetterQueue.metricApproximateNumberOfMessagesVisible(visible),
      1,
      `Subscriber ${name}: SNS could not deliver messages to the consumer queue (check the queue policy and KMS key policy).`,
      props,
    );
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
    this.alarms = [this.deadLetterAlarm, this.subscriptionDeadLetterAlarm, this.errorsAlarm, this.oldestMessageAgeAlarm];
  }
}
