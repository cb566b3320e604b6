/**
 * The `DeadLetterExpiring` alarm (issue 28, finding 9): SQS deletes a dead letter at the dead-letter queue's retention,
 * and a blocked message's dead letter may be its only copy, while its record waits indefinitely. The alarm fires at
 * least 2 days before: on the dead-letter queue's ApproximateAgeOfOldestMessage, which on a standard queue counts from
 * the move into it while SQS deletes by the first send, so its threshold also allows for the queue's own retention.
 */
import { Duration, Stack, type CfnElement } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, test } from 'vitest';
import { ProcessingMode, Subscriber, type SubscriberProps } from '../../lib/consumer';
import { SubscriberAlarms } from '../../lib/monitoring';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

const DAY_SECONDS = 86_400;

function alarmProperties(alarm: cloudwatch.Alarm): Record<string, any> {
  const stack = Stack.of(alarm);
  return Template.fromStack(stack).toJSON().Resources[stack.getLogicalId(alarm.node.defaultChild as CfnElement)].Properties;
}

function create(props: Partial<SubscriberProps> = {}): { stack: Stack; subscriber: Subscriber; alarms: SubscriberAlarms } {
  const stack = newStack();
  const subscriber = new Subscriber(stack, 'Billing', { topic: new sns.Topic(stack, 'Topic'), entry: HANDLER_ENTRY, processingMode: ProcessingMode.MULTI_STEP, ...props });
  return { stack, subscriber, alarms: new SubscriberAlarms(subscriber, 'Alarms', { subscriber }) };
}

describe('SubscriberAlarms: DeadLetterExpiring', () => {
  test('fires when a dead letter has waited long enough that SQS deletes it within 2 days: 14 days - 4 days (the queue\'s retention) - 2 days by default', () => {
    const { stack, subscriber, alarms } = create();

    expect(alarms.alarms).toContain(alarms.deadLetterExpiringAlarm);
    expect(alarmProperties(alarms.deadLetterExpiringAlarm)).toMatchObject({
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: stack.resolve(subscriber.deadLetterQueue.queueName) }],
      Statistic: 'Maximum',
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Threshold: 8 * DAY_SECONDS,
      AlarmDescription: expect.stringMatching(/^Subscriber Billing: a message has waited 8 days in its dead-letter queue: SQS deletes it within 2 days .*only copy/),
    });
  });

  test('follows the retentions; never below one minute', () => {
    expect(alarmProperties(create({ retentionPeriod: Duration.days(1), deadLetterRetentionPeriod: Duration.days(7) }).alarms.deadLetterExpiringAlarm).Threshold).toBe(4 * DAY_SECONDS);
    expect(alarmProperties(create({ retentionPeriod: Duration.days(14), deadLetterRetentionPeriod: Duration.days(14), deduplicationWindow: Duration.days(40) }).alarms.deadLetterExpiringAlarm).Threshold).toBe(60);
  });
});
