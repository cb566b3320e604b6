import { App, CfnElement, Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, test } from 'vitest';
import { ProcessingMode, Subscriber, type SubscriberProps } from '../../lib/consumer';
import { RelayAlarms, SubscriberAlarms, type SubscriberAlarmsProps } from '../../lib/monitoring';
import { OutboxRelay, OutboxTable } from '../../lib/outbox';
import { CONSUMER_METRICS } from '../../lambda/contract/metric-names';
import { IdempotentEventFlow } from '../../lib/idempotent-event-flow';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

/** What every alarm of the library shares: fires on the first breaching one-minute datapoint, no data is OK. */
const ALARM_SHAPE = {
  EvaluationPeriods: 1,
  DatapointsToAlarm: 1,
  Period: 60,
  ComparisonOperator: 'GreaterThanOrEqualToThreshold',
  TreatMissingData: 'notBreaching',
};

function r(stack: Stack, value: unknown): unknown {
  return stack.resolve(value);
}

/** The synthesized properties of `alarm`. */
function alarmProperties(alarm: cloudwatch.Alarm): Record<string, any> {
  const stack = Stack.of(alarm);
  const logicalId = stack.getLogicalId(alarm.node.defaultChild as CfnElement);
  return Template.fromStack(stack).toJSON().Resources[logicalId].Properties;
}

function opsAction(stack: Stack): { action: cloudwatch.IAlarmAction; topic: sns.Topic } {
  const topic = new sns.Topic(stack, 'Ops');
  return { action: new cloudwatchActions.SnsAction(topic), topic };
}

describe('RelayAlarms', () => {
  function relayFixture(): { stack: Stack; relay: OutboxRelay } {
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    const relay = new OutboxRelay(stack, 'Relay', {
      outboxTable: new OutboxTable(stack, 'Outbox'),
      topic: new sns.Topic(stack, 'Topic', { masterKey: key }),
    });
    return { stack, relay };
  }

  test('alarms when the pipe dead-letter queue holds a message', () => {
    // GIVEN
    const { stack, relay } = relayFixture();
    // WHEN
    const alarms = new RelayAlarms(stack, 'RelayAlarms', { relay });
    // THEN
    expect(alarmProperties(alarms.deadLetterAlarm)).toEqual({
      ...ALARM_SHAPE,
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: r(stack, relay.deadLetterQueue.queueName) }],
      Statistic: 'Maximum',
      Threshold: 1,
      AlarmDescription: expect.stringMatching(/^Outbox relay TestStack\/Relay: the pipe dead-letter queue holds events/),
    });
  });

  test('alarms when a pipe execution failed', () => {
    // GIVEN
    const { stack, relay } = relayFixture();
    // WHEN
    const alarms = new RelayAlarms(stack, 'RelayAlarms', { relay });
    // THEN
    expect(alarmProperties(alarms.executionFailedAlarm)).toEqual({
      ...ALARM_SHAPE,
      Namespace: 'AWS/EventBridge/Pipes',
      MetricName: 'ExecutionFailed',
      Dimensions: [{ Name: 'PipeName', Value: r(stack, relay.pipeName) }],
      Statistic: 'Sum',
      Threshold: 1,
      AlarmDescription: expect.stringMatching(/^Outbox relay TestStack\/Relay: a pipe execution failed/),
    });
  });

  test('creates exactly these two alarms', () => {
    // GIVEN
    const { stack, relay } = relayFixture();
    // WHEN
    const alarms = new RelayAlarms(stack, 'RelayAlarms', { relay });
    // THEN
    Template.fromStack(stack).resourceCountIs('AWS::CloudWatch::Alarm', 2);
    expect(alarms.alarms).toEqual([alarms.deadLetterAlarm, alarms.executionFailedAlarm]);
  });

  test('notifies the alarm actions on ALARM and on OK', () => {
    // GIVEN
    const { stack, relay } = relayFixture();
    const ops = opsAction(stack);
    // WHEN
    const alarms = new RelayAlarms(stack, 'RelayAlarms', { relay, alarmActions: [ops.action] });
    // THEN
    for (const alarm of alarms.alarms) {
      expect(alarmProperties(alarm as cloudwatch.Alarm)).toMatchObject({
        AlarmActions: [r(stack, ops.topic.topicArn)],
        OKActions: [r(stack, ops.topic.topicArn)],
      });
    }
  });
});

describe('SubscriberAlarms', () => {
  function subscriberFixture(subscriberProps: Partial<SubscriberProps> = {}): { stack: Stack; subscriber: Subscriber } {
    const stack = newStack();
    const subscriber = new Subscriber(stack, 'Billing', { topic: new sns.Topic(stack, 'Topic'), entry: HANDLER_ENTRY, ...subscriberProps });
    return { stack, subscriber };
  }

  function create(
    props: Partial<SubscriberAlarmsProps> = {},
    subscriberProps: Partial<SubscriberProps> = {},
  ): { stack: Stack; subscriber: Subscriber; alarms: SubscriberAlarms } {
    const { stack, subscriber } = subscriberFixture(subscriberProps);
    return { stack, subscriber, alarms: new SubscriberAlarms(subscriber, 'Alarms', { subscriber, ...props }) };
  }

  test('alarms when the consumer dead-letter queue holds a message', () => {
    // WHEN
    const { stack, subscriber, alarms } = create();
    // THEN
    expect(alarmProperties(alarms.deadLetterAlarm)).toEqual({
      ...ALARM_SHAPE,
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: r(stack, subscriber.deadLetterQueue.queueName) }],
      Statistic: 'Maximum',
      Threshold: 1,
      AlarmDescription: expect.stringMatching(/^Subscriber Billing: its dead-letter queue holds messages/),
    });
  });

  test('alarms when the subscription dead-letter queue holds a message', () => {
    // WHEN
    const { stack, subscriber, alarms } = create();
    // THEN
    expect(alarmProperties(alarms.subscriptionDeadLetterAlarm!)).toEqual({
      ...ALARM_SHAPE,
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateNumberOfMessagesVisible',
      Dimensions: [{ Name: 'QueueName', Value: r(stack, subscriber.subscriptionDeadLetterQueue!.queueName) }],
      Statistic: 'Maximum',
      Threshold: 1,
      AlarmDescription: expect.stringMatching(/^Subscriber Billing: SNS could not deliver messages/),
    });
  });

  test('alarms when the consumer function reports an error', () => {
    // WHEN
    const { stack, subscriber, alarms } = create();
    // THEN
    expect(alarmProperties(alarms.errorsAlarm)).toEqual({
      ...ALARM_SHAPE,
      Namespace: 'AWS/Lambda',
      MetricName: 'Errors',
      Dimensions: [{ Name: 'FunctionName', Value: r(stack, subscriber.consumerFunction.lambdaFunction.functionName) }],
      Statistic: 'Sum',
      Threshold: 1,
      AlarmDescription: expect.stringMatching(/^Subscriber Billing: the consumer function reported errors/),
    });
  });

  test('alarms when the oldest message in the consumer queue is 5 minutes old by default', () => {
    // WHEN
    const { stack, subscriber, alarms } = create();
    // THEN
    expect(alarmProperties(alarms.oldestMessageAgeAlarm)).toEqual({
      ...ALARM_SHAPE,
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: r(stack, subscriber.queue.queueName) }],
      Statistic: 'Maximum',
      Threshold: 300,
      AlarmDescription: expect.stringMatching(/^Subscriber Billing: the oldest message waited 5 minutes or more/),
    });
  });

  test('alarms when the oldest message reaches maxMessageAge', () => {
    // WHEN
    const { alarms } = create({ maxMessageAge: Duration.minutes(10) });
    // THEN
    expect(alarmProperties(alarms.oldestMessageAgeAlarm)).toMatchObject({ Threshold: 600, MetricName: 'ApproximateAgeOfOldestMessage' });
  });

  test('names the subscriber by its subscriber name', () => {
    // GIVEN
    const stack = newStack();
    const subscriber = new Subscriber(stack, 'Billing', {
      topic: new sns.Topic(stack, 'Topic'),
      entry: HANDLER_ENTRY,
      subscriberName: 'billing-v2',
    });
    // WHEN
    const alarms = new SubscriberAlarms(subscriber, 'Alarms', { subscriber });
    // THEN
    expect(alarmProperties(alarms.errorsAlarm).AlarmDescription).toMatch(/^Subscriber billing-v2: /);
  });

  test('creates exactly these five alarms', () => {
    // WHEN
    const { stack, alarms } = create();
    // THEN
    Template.fromStack(stack).resourceCountIs('AWS::CloudWatch::Alarm', 5);
    expect(alarms.alarms).toEqual([alarms.deadLetterAlarm, alarms.subscriptionDeadLetterAlarm, alarms.errorsAlarm, alarms.oldestMessageAgeAlarm, alarms.deadLetterExpiringAlarm]);
  });

  test.each([
    [ProcessingMode.LEASE, 'lease'],
    [ProcessingMode.MULTI_STEP, 'multi-step'],
  ])('in mode %s, alarms when a message is blocked within 5 minutes', (processingMode, runtimeName) => {
    // WHEN
    const { stack, alarms, subscriber } = create({}, { processingMode });
    // THEN
    expect(alarms.blockedAlarm).toBeDefined();
    expect(alarmProperties(alarms.blockedAlarm!)).toEqual({
      ...ALARM_SHAPE,
      Period: 300,
      Namespace: 'IdempotentEventFlow',
      MetricName: 'Blocked',
      Dimensions: [
        { Name: 'FunctionName', Value: r(stack, subscriber.consumerFunction.lambdaFunction.functionName) },
        { Name: 'ProcessingMode', Value: runtimeName },
        { Name: 'Subscriber', Value: 'Billing' },
      ],
      Statistic: 'Sum',
      Threshold: 1,
      AlarmDescription: expect.stringMatching(/^Subscriber Billing: a message is blocked because an effect's outcome is unknown/),
    });
  });

  test('watches only its own deployment: the Blocked alarms of two stages with one subscriber name differ by function name', () => {
    // GIVEN two stages of one app in one account and region, each with a lease subscriber named Billing
    const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
    const env = { account: '111111111111', region: 'eu-west-1' };
    const stages = ['Staging', 'Prod'].map((name) => {
      const stack = new Stack(app, name, { env });
      const flow = new IdempotentEventFlow(stack, 'Orders');
      const subscriber = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.LEASE });
      return { stack, subscriber };
    });
    // THEN each Blocked alarm has the function of its own stage as a dimension
    for (const { stack, subscriber } of stages) {
      const functionLogicalId = stack.getLogicalId(subscriber.consumerFunction.lambdaFunction.node.defaultChild as CfnElement);
      Template.fromStack(stack).hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: CONSUMER_METRICS.NAMESPACE,
        MetricName: CONSUMER_METRICS.BLOCKED,
        Dimensions: Match.arrayWith([
          { Name: CONSUMER_METRICS.FUNCTION_NAME_DIMENSION, Value: { Ref: functionLogicalId } },
          { Name: CONSUMER_METRICS.SUBSCRIBER_DIMENSION, Value: 'Billing' },
        ]),
      });
    }
  });

  test.each([ProcessingMode.LEASE, ProcessingMode.MULTI_STEP])('in mode %s, creates the Blocked alarm as a sixth alarm', (processingMode) => {
    // WHEN
    const { stack, alarms } = create({}, { processingMode });
    // THEN
    Template.fromStack(stack).resourceCountIs('AWS::CloudWatch::Alarm', 6);
    expect(alarms.node.tryFindChild('Blocked')).toBe(alarms.blockedAlarm);
    expect(alarms.alarms).toEqual([
      alarms.deadLetterAlarm,
      alarms.subscriptionDeadLetterAlarm,
      alarms.errorsAlarm,
      alarms.oldestMessageAgeAlarm,
      alarms.deadLetterExpiringAlarm,
      alarms.blockedAlarm,
    ]);
  });

  test.each([ProcessingMode.TRANSACTIONAL, ProcessingMode.AGGREGATE])('in mode %s, has no Blocked alarm', (processingMode) => {
    // WHEN
    const { stack, alarms } = create({}, { processingMode });
    // THEN
    expect(alarms.blockedAlarm).toBeUndefined();
    expect(alarms.node.tryFindChild('Blocked')).toBeUndefined();
    Template.fromStack(stack).resourceCountIs('AWS::CloudWatch::Alarm', 5);
  });

  test('notifies the alarm actions of the Blocked alarm on ALARM and on OK', () => {
    // GIVEN
    const { stack, subscriber } = subscriberFixture({ processingMode: ProcessingMode.LEASE });
    const ops = opsAction(stack);
    // WHEN
    const alarms = new SubscriberAlarms(subscriber, 'Alarms', { subscriber, alarmActions: [ops.action] });
    // THEN
    expect(alarmProperties(alarms.blockedAlarm!)).toMatchObject({
      AlarmActions: [r(stack, ops.topic.topicArn)],
      OKActions: [r(stack, ops.topic.topicArn)],
    });
  });

  test('notifies the alarm actions on ALARM and on OK', () => {
    // GIVEN
    const { stack, subscriber } = subscriberFixture();
    const ops = opsAction(stack);
    // WHEN
    const alarms = new SubscriberAlarms(subscriber, 'Alarms', { subscriber, alarmActions: [ops.action] });
    // THEN
    for (const alarm of alarms.alarms) {
      expect(alarmProperties(alarm as cloudwatch.Alarm)).toMatchObject({
        AlarmActions: [r(stack, ops.topic.topicArn)],
        OKActions: [r(stack, ops.topic.topicArn)],
      });
    }
  });

  test('fails if maxMessageAge is below 1 minute', () => {
    expect(() => create({ maxMessageAge: Duration.seconds(59) })).toThrow(
      /SubscriberAlarms 'Alarms': maxMessageAge must be 1 minute or more, but 59 seconds was provided/,
    );
  });

  test('fails if maxMessageAge is above 14 days', () => {
    expect(() => create({ maxMessageAge: Duration.days(15) })).toThrow(
      /SubscriberAlarms 'Alarms': maxMessageAge must be 14 days or less, but 15 days was provided/,
    );
  });

  test('accepts the bounds of maxMessageAge', () => {
    expect(alarmProperties(create({ maxMessageAge: Duration.minutes(1) }).alarms.oldestMessageAgeAlarm).Threshold).toBe(60);
    expect(alarmProperties(create({ maxMessageAge: Duration.days(14) }).alarms.oldestMessageAgeAlarm).Threshold).toBe(14 * 86400);
  });
});
