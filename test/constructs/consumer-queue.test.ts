import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import { describe, expect, test } from 'vitest';
import { ConsumerQueue, ConsumerQueueProps } from '../../lib/consumer';
import { fewReceivesWarning } from '../../lib/consumer/private/few-receives-warning';
import { nagFindings, newStack } from '../fixtures/construct-test-kit';

function synth(props: ConsumerQueueProps = {}): { stack: Stack; queue: ConsumerQueue; template: Template } {
  const stack = newStack();
  const queue = new ConsumerQueue(stack, 'Queue', props);
  return { stack, queue, template: Template.fromStack(stack) };
}

const DLQ_ARN = { 'Fn::GetAtt': [Match.stringLikeRegexp('^QueueDeadLetterQueue'), 'Arn'] };

describe('ConsumerQueue: queues', () => {
  test('creates a queue and a dead-letter queue', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.resourceCountIs('AWS::SQS::Queue', 2);
  });

  test('moves a message to the dead-letter queue after 5 receives by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { deadLetterTargetArn: DLQ_ARN, maxReceiveCount: 5 },
    });
  });

  test('moves a message to the dead-letter queue after maxReceiveCount receives', () => {
    // WHEN
    const { template } = synth({ maxReceiveCount: 3 });
    // THEN
    template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: { deadLetterTargetArn: DLQ_ARN, maxReceiveCount: 3 } });
  });

  test('warns at synth when maxReceiveCount is below the 5 AWS recommends for a queue Lambda reads, and not from 5', () => {
    // a valid message that meets a transient failure at each of its few receives is dead-lettered (a crash fails a whole batch)
    for (const count of [1, 3, 4]) {
      const { stack } = synth({ maxReceiveCount: count });
      Annotations.fromStack(stack).hasWarning('/TestStack/Queue', Match.stringLikeRegexp(`^${fewReceivesWarning(count).slice(0, 40)}`));
      expect(fewReceivesWarning(count)).toMatch(/Set maxReceiveCount to 5 or more/);
    }
    for (const props of [{}, { maxReceiveCount: 5 }, { maxReceiveCount: 10 }]) Annotations.fromStack(synth(props).stack).hasNoWarning('*', Match.stringLikeRegexp('maxReceiveCount'));
  });

  test('gives the dead-letter queue no redrive policy of its own', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.resourcePropertiesCountIs('AWS::SQS::Queue', { RedrivePolicy: Match.absent() }, 1);
  });

  test('names the queue Resource and the dead-letter queue DeadLetterQueue', () => {
    // WHEN
    const { queue } = synth();
    // THEN
    expect(queue.node.defaultChild).toBe(queue.queue);
    expect(queue.node.findChild('DeadLetterQueue')).toBe(queue.deadLetterQueue);
  });
});

describe('ConsumerQueue: encryption and TLS', () => {
  test('encrypts both queues with SQS-managed keys by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.resourcePropertiesCountIs('AWS::SQS::Queue', { SqsManagedSseEnabled: true, KmsMasterKeyId: Match.absent() }, 2);
  });

  test('encrypts both queues with the given key', () => {
    // GIVEN
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    // WHEN
    new ConsumerQueue(stack, 'Queue', { encryptionKey: key });
    // THEN
    Template.fromStack(stack).resourcePropertiesCountIs(
      'AWS::SQS::Queue',
      { KmsMasterKeyId: { 'Fn::GetAtt': [stack.getLogicalId(key.node.defaultChild as kms.CfnKey), 'Arn'] } },
      2,
    );
  });

  test('exposes the key', () => {
    // GIVEN
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    // WHEN
    const queue = new ConsumerQueue(stack, 'Queue', { encryptionKey: key });
    // THEN
    expect(queue.encryptionKey).toBe(key);
  });

  test('denies requests without TLS on both queues', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.resourcePropertiesCountIs(
      'AWS::SQS::QueuePolicy',
      {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Action: 'sqs:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      },
      2,
    );
  });
});

describe('ConsumerQueue: timeouts, retention and removal', () => {
  test('sets a visibility timeout of 6 x 30 seconds by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.anyValue(), VisibilityTimeout: 180 });
  });

  test('sets the given visibility timeout', () => {
    // WHEN
    const { template } = synth({ visibilityTimeout: Duration.minutes(10) });
    // THEN
    template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.anyValue(), VisibilityTimeout: 600 });
  });

  test('keeps messages 4 days in the queue and 14 days in the dead-letter queue by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.anyValue(), MessageRetentionPeriod: 4 * 86400 });
    template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.absent(), MessageRetentionPeriod: 14 * 86400 });
  });

  test('sets the given retention periods', () => {
    // WHEN
    const { template } = synth({ retentionPeriod: Duration.days(2), deadLetterRetentionPeriod: Duration.days(3) });
    // THEN
    template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.anyValue(), MessageRetentionPeriod: 2 * 86400 });
    template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.absent(), MessageRetentionPeriod: 3 * 86400 });
  });

  test('retains both queues by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    expect(Object.keys(template.findResources('AWS::SQS::Queue', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' }))).toHaveLength(2);
  });

  test('applies the given removal policy to both queues', () => {
    // WHEN
    const { template } = synth({ removalPolicy: RemovalPolicy.DESTROY });
    // THEN
    expect(Object.keys(template.findResources('AWS::SQS::Queue', { DeletionPolicy: 'Delete' }))).toHaveLength(2);
  });

  test('exposes the effective settings', () => {
    // WHEN
    const { queue } = synth();
    // THEN
    expect(queue.maxReceiveCount).toBe(5);
    expect(queue.visibilityTimeout.toSeconds()).toBe(180);
    expect(queue.retentionPeriod.toDays()).toBe(4);
    expect(queue.deadLetterRetentionPeriod.toDays()).toBe(14);
  });
});

describe('ConsumerQueue: metrics', () => {
  test('metricApproximateAgeOfOldestMessage is the maximum age in the queue', () => {
    // GIVEN
    const { stack, queue } = synth();
    // WHEN
    const metric = queue.metricApproximateAgeOfOldestMessage();
    // THEN
    expect(metric.metricName).toBe('ApproximateAgeOfOldestMessage');
    expect(metric.statistic).toBe('Maximum');
    expect(stack.resolve(metric.dimensions)).toEqual({ QueueName: stack.resolve(queue.queue.queueName) });
  });

  test('metricDeadLetterMessagesVisible is the maximum number of messages in the dead-letter queue', () => {
    // GIVEN
    const { stack, queue } = synth();
    // WHEN
    const metric = queue.metricDeadLetterMessagesVisible();
    // THEN
    expect(metric.metricName).toBe('ApproximateNumberOfMessagesVisible');
    expect(metric.statistic).toBe('Maximum');
    expect(stack.resolve(metric.dimensions)).toEqual({ QueueName: stack.resolve(queue.deadLetterQueue.queueName) });
  });

  test('metric helpers accept overrides', () => {
    // GIVEN
    const { queue } = synth();
    // WHEN
    const metric = queue.metricDeadLetterMessagesVisible({ statistic: 'Sum', period: Duration.minutes(1) });
    // THEN
    expect(metric.statistic).toBe('Sum');
    expect(metric.period.toMinutes()).toBe(1);
  });
});

describe('ConsumerQueue: validation', () => {
  const create = (props: ConsumerQueueProps) => () => new ConsumerQueue(newStack(), 'Queue', props);

  test('fails if maxReceiveCount is below 1', () => {
    expect(create({ maxReceiveCount: 0 })).toThrow(/ConsumerQueue 'Queue': maxReceiveCount must be 1 or more, but 0 was provided/);
  });
  test('fails if maxReceiveCount is above 1000', () => {
    expect(create({ maxReceiveCount: 1001 })).toThrow(/maxReceiveCount must be 1000 or less, but 1001 was provided/);
  });
  test('fails if maxReceiveCount is not a whole number', () => {
    expect(create({ maxReceiveCount: 2.5 })).toThrow(/maxReceiveCount must be a whole number, but 2.5 was provided/);
  });
  test('fails if visibilityTimeout is above 12 hours', () => {
    expect(create({ visibilityTimeout: Duration.hours(13) })).toThrow(/visibilityTimeout must be 12 hours or less, but 13 hours was provided/);
  });
  test('fails if retentionPeriod is below 1 minute', () => {
    expect(create({ retentionPeriod: Duration.seconds(59) })).toThrow(/retentionPeriod must be 1 minute or more, but 59 seconds was provided/);
  });
  test('fails if retentionPeriod is above 14 days', () => {
    expect(create({ retentionPeriod: Duration.days(15) })).toThrow(/retentionPeriod must be 14 days or less, but 15 days was provided/);
  });
  test('fails if deadLetterRetentionPeriod is above 14 days', () => {
    expect(create({ deadLetterRetentionPeriod: Duration.days(15) })).toThrow(
      /deadLetterRetentionPeriod must be 14 days or less, but 15 days was provided/,
    );
  });
  test('fails if deadLetterRetentionPeriod is shorter than retentionPeriod', () => {
    expect(create({ retentionPeriod: Duration.days(5), deadLetterRetentionPeriod: Duration.days(4) })).toThrow(
      /deadLetterRetentionPeriod must be at least retentionPeriod \(5 days\), but 4 days was provided/,
    );
  });
  test('fails if the default deadLetterRetentionPeriod is shorter than retentionPeriod', () => {
    // The default retention is 4 days; a DLQ retention of 1 day would expire dead letters early.
    expect(create({ deadLetterRetentionPeriod: Duration.days(1) })).toThrow(
      /deadLetterRetentionPeriod must be at least retentionPeriod \(4 days\), but 1 day was provided/,
    );
  });
  test('accepts the bounds', () => {
    expect(create({ maxReceiveCount: 1, retentionPeriod: Duration.minutes(1), deadLetterRetentionPeriod: Duration.minutes(1) })).not.toThrow();
    expect(
      create({ maxReceiveCount: 1000, visibilityTimeout: Duration.hours(12), retentionPeriod: Duration.days(14), deadLetterRetentionPeriod: Duration.days(14) }),
    ).not.toThrow();
  });
});

describe('ConsumerQueue: cdk-nag', () => {
  test('has no unacknowledged AwsSolutions or Serverless findings', () => {
    // GIVEN
    const { queue } = synth();
    // THEN
    expect(nagFindings(queue)).toEqual([]);
  });
});
