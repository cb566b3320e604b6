import { App, Duration, Lazy, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, ServerlessChecks } from 'cdk-nag';
import { describe, expect, test } from 'vitest';
import { ConsumerFunction, ConsumerQueue, InboxTable, ProcessingMode, Subscriber, SubscriberProps } from '../../lib/consumer';
import { OutboxTable } from '../../lib/outbox';
import { ENV, PROCESSING_MODE } from '../../lambda/contract/environment';
import { CONSUMER_METRICS } from '../../lambda/contract/metric-names';
import { HANDLER_ENTRY, nagFindings, newStack } from '../fixtures/construct-test-kit';
import { viaService } from '../fixtures/kms-conditions';

interface Fixture {
  readonly stack: Stack;
  readonly topic: sns.Topic;
}

function fixture(): Fixture {
  const stack = newStack();
  return { stack, topic: new sns.Topic(stack, 'Topic') };
}

function create(f: Fixture, props: Partial<SubscriberProps> = {}, id = 'Billing'): Subscriber {
  return new Subscriber(f.stack, id, { topic: f.topic, entry: HANDLER_ENTRY, ...props });
}

function synth(props: Partial<SubscriberProps> = {}): { f: Fixture; subscriber: Subscriber; template: Template } {
  const f = fixture();
  const subscriber = create(f, props);
  return { f, subscriber, template: Template.fromStack(f.stack) };
}

function r(stack: Stack, value: unknown): unknown {
  return stack.resolve(value);
}

/** The statements of the consumer role's default policy. */
function consumerPolicyStatements(template: Template): unknown[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy'));
  expect(policies).toHaveLength(1);
  return (policies[0] as { Properties: { PolicyDocument: { Statement: unknown[] } } }).Properties.PolicyDocument.Statement;
}

describe('Subscriber: composition', () => {
  test('composes a queue, a subscription with its dead-letter queue, an inbox and a function under stable ids', () => {
    // WHEN
    const { subscriber } = synth();
    // THEN
    expect(subscriber.node.children.map((c) => c.node.id)).toEqual([
      'Queue',
      'SubscriptionDeadLetterQueue',
      'Subscription',
      'InboxTable',
      'Function',
    ]);
    expect(subscriber.node.findChild('Queue')).toBeInstanceOf(ConsumerQueue);
    expect(subscriber.node.findChild('InboxTable')).toBeInstanceOf(InboxTable);
    expect(subscriber.node.findChild('Function')).toBeInstanceOf(ConsumerFunction);
  });

  test('exposes every resource', () => {
    // WHEN
    const { subscriber } = synth();
    // THEN
    expect(subscriber.queue).toBe(subscriber.consumerQueue.queue);
    expect(subscriber.deadLetterQueue).toBe(subscriber.consumerQueue.deadLetterQueue);
    expect(subscriber.subscriptionDeadLetterQueue).toBe(subscriber.node.findChild('SubscriptionDeadLetterQueue'));
    expect(subscriber.subscription).toBe(subscriber.node.findChild('Subscription'));
    expect(subscriber.inboxTable).toBe(subscriber.node.findChild('InboxTable'));
    expect(subscriber.consumerFunction).toBe(subscriber.node.findChild('Function'));
  });

  test('synthesizes without warnings', () => {
    // WHEN
    const { f } = synth();
    // THEN
    Annotations.fromStack(f.stack).hasNoWarning('*', Match.anyValue());
  });

  test('creates three queues, one table, one function and one event source mapping', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.resourceCountIs('AWS::SQS::Queue', 3);
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.resourceCountIs('AWS::Lambda::Function', 1);
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 1);
    template.resourceCountIs('AWS::SNS::Subscription', 1);
  });
});

describe('Subscriber: subscription', () => {
  test('subscribes the queue to the topic with raw message delivery', () => {
    // WHEN
    const { f, subscriber, template } = synth();
    // THEN
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Protocol: 'sqs',
      TopicArn: r(f.stack, f.topic.topicArn),
      Endpoint: r(f.stack, subscriber.queue.queueArn),
      RawMessageDelivery: true,
    });
  });

  test('delivers every message when no filter is given', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::SNS::Subscription', { FilterPolicy: Match.absent(), FilterPolicyScope: Match.absent() });
  });

  test('applies the filter policy to the message body', () => {
    // WHEN
    const { template } = synth({
      filterPolicyWithMessageBody: {
        type: sns.FilterOrPolicy.filter(sns.SubscriptionFilter.stringFilter({ allowlist: ['OrderPlaced'] })),
      },
    });
    // THEN
    template.hasResourceProperties('AWS::SNS::Subscription', {
      FilterPolicyScope: 'MessageBody',
      FilterPolicy: { type: ['OrderPlaced'] },
    });
  });

  test('redrives undeliverable messages to the subscription dead-letter queue', () => {
    // WHEN
    const { f, subscriber, template } = synth();
    // THEN
    template.hasResourceProperties('AWS::SNS::Subscription', {
      RedrivePolicy: { deadLetterTargetArn: r(f.stack, subscriber.subscriptionDeadLetterQueue!.queueArn) },
    });
  });

  test('keeps messages in the subscription dead-letter queue for 7 days by default', () => {
    // WHEN
    const { f, subscriber, template } = synth();
    // THEN
    const logicalId = f.stack.getLogicalId((subscriber.subscriptionDeadLetterQueue as sqs.Queue).node.defaultChild as sqs.CfnQueue);
    expect(template.toJSON().Resources[logicalId].Properties.MessageRetentionPeriod).toBe(7 * 86400);
  });

  test('keeps messages in the subscription dead-letter queue for subscriptionDeadLetterRetentionPeriod', () => {
    // WHEN
    const { f, subscriber, template } = synth({ subscriptionDeadLetterRetentionPeriod: Duration.hours(36) });
    // THEN
    const logicalId = f.stack.getLogicalId((subscriber.subscriptionDeadLetterQueue as sqs.Queue).node.defaultChild as sqs.CfnQueue);
    expect(template.toJSON().Resources[logicalId].Properties.MessageRetentionPeriod).toBe(36 * 3600);
    // and the queue and its dead-letter queue keep theirs
    template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.anyValue(), MessageRetentionPeriod: 4 * 86400 });
    template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.absent(), MessageRetentionPeriod: 14 * 86400 });
  });

  test('lets only this topic send to the queue, and subscribes after that permission exists', () => {
    // WHEN
    const { f, subscriber, template } = synth();
    // THEN
    const policy = template.findResources('AWS::SQS::QueuePolicy', {
      Properties: { Queues: [r(f.stack, subscriber.queue.queueUrl)] },
    });
    const [policyId] = Object.keys(policy);
    expect(policy[policyId].Properties.PolicyDocument.Statement).toContainEqual({
      Action: 'sqs:SendMessage',
      Effect: 'Allow',
      Principal: { Service: 'sns.amazonaws.com' },
      Resource: r(f.stack, subscriber.queue.queueArn),
      Condition: { ArnEquals: { 'aws:SourceArn': r(f.stack, f.topic.topicArn) } },
    });
    template.hasResource('AWS::SNS::Subscription', { DependsOn: Match.arrayWith([policyId]) });
  });

  test('lets only this topic send to the subscription dead-letter queue', () => {
    // WHEN
    const { f, subscriber, template } = synth();
    // THEN
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [r(f.stack, subscriber.subscriptionDeadLetterQueue!.queueUrl)],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Action: 'sqs:SendMessage',
            Effect: 'Allow',
            Principal: { Service: 'sns.amazonaws.com' },
            Resource: r(f.stack, subscriber.subscriptionDeadLetterQueue!.queueArn),
            Condition: { ArnEquals: { 'aws:SourceArn': r(f.stack, f.topic.topicArn) } },
          },
        ]),
      },
    });
  });
});

describe('Subscriber: queues', () => {
  test('encrypts all three queues with SQS-managed keys when no key is given', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.resourcePropertiesCountIs('AWS::SQS::Queue', { SqsManagedSseEnabled: true, KmsMasterKeyId: Match.absent() }, 3);
  });

  test('encrypts all three queues with the given key', () => {
    // GIVEN
    const f = fixture();
    const key = new kms.Key(f.stack, 'Key');
    // WHEN
    create(f, { encryptionKey: key });
    // THEN
    Template.fromStack(f.stack).resourcePropertiesCountIs('AWS::SQS::Queue', { KmsMasterKeyId: r(f.stack, key.keyArn) }, 3);
  });

  test('encrypts the inbox table it creates with the given key, and lets the function use it through DynamoDB only', () => {
    const f = fixture();
    const key = new kms.Key(f.stack, 'Key');
    create(f, { encryptionKey: key });
    const template = Template.fromStack(f.stack);
    template.hasResourceProperties('AWS::DynamoDB::Table', { SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: r(f.stack, key.keyArn) } });
    expect(consumerPolicyStatements(template)).toContainEqual({
      Sid: 'IdempotentEventFlowGrantRecordMessages2',
      Action: ['kms:Decrypt', 'kms:GenerateDataKey'],
      Condition: viaService(f.stack, key, 'dynamodb'),
      Effect: 'Allow',
      Resource: r(f.stack, key.keyArn),
    });
  });

  test('does not change the key policy (the topic owns its key)', () => {
    // GIVEN
    const f = fixture();
    const key = new kms.Key(f.stack, 'Key');
    // WHEN
    create(f, { encryptionKey: key });
    // THEN only the default statement (the account administers the key) is in the key policy
    Template.fromStack(f.stack).hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: { Statement: [Match.objectLike({ Action: 'kms:*', Effect: 'Allow' })] },
    });
  });

  test('denies requests without TLS on all three queues', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.resourcePropertiesCountIs(
      'AWS::SQS::QueuePolicy',
      {
        PolicyDocument: {
          Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
        },
      },
      3,
    );
  });

  test('sets the visibility timeout to 6 x the function timeout by default', () => {
    // WHEN
    const { template } = synth({ timeout: Duration.minutes(1) });
    // THEN
    template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.anyValue(), VisibilityTimeout: 360 });
  });

  test('passes the queue settings to the consumer queue', () => {
    // WHEN
    const { template } = synth({
      maxReceiveCount: 8,
      visibilityTimeout: Duration.minutes(5),
      retentionPeriod: Duration.days(2),
      deadLetterRetentionPeriod: Duration.days(10),
    });
    // THEN
    template.hasResourceProperties('AWS::SQS::Queue', {
      RedrivePolicy: { maxReceiveCount: 8, deadLetterTargetArn: Match.anyValue() },
      VisibilityTimeout: 300,
      MessageRetentionPeriod: 2 * 86400,
    });
    template.hasResourceProperties('AWS::SQS::Queue', { RedrivePolicy: Match.absent(), MessageRetentionPeriod: 10 * 86400 });
  });
});

describe('Subscriber: inbox and function', () => {
  test('creates an inbox table by default and points the runtime at it', () => {
    // WHEN
    const { f, subscriber, template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [ENV.INBOX_TABLE_NAME]: r(f.stack, subscriber.inboxTable!.tableName) } },
    });
  });

  test('uses the given inbox table instead of creating one', () => {
    // GIVEN
    const f = fixture();
    const shared = InboxTable.fromTableName(f.stack, 'Shared', 'shared-inbox');
    // WHEN
    const subscriber = create(f, { inboxTable: shared });
    // THEN
    const template = Template.fromStack(f.stack);
    template.resourceCountIs('AWS::DynamoDB::Table', 0);
    expect(subscriber.inboxTable).toBe(shared);
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [ENV.INBOX_TABLE_NAME]: 'shared-inbox' } },
    });
    expect(consumerPolicyStatements(template)).toContainEqual({
      Sid: 'IdempotentEventFlowGrantRecordMessages',
      Action: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'],
      Effect: 'Allow',
      Resource: r(f.stack, shared.tableArn),
    });
  });

  test('names the subscriber after the construct id by default', () => {
    // WHEN
    const { subscriber, template } = synth();
    // THEN
    expect(subscriber.subscriberName).toBe('Billing');
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: { [ENV.SUBSCRIBER_NAME]: 'Billing' } } });
  });

  test('uses the given subscriber name', () => {
    // WHEN
    const { subscriber, template } = synth({ subscriberName: 'billing-v2' });
    // THEN
    expect(subscriber.subscriberName).toBe('billing-v2');
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: { [ENV.SUBSCRIBER_NAME]: 'billing-v2' } } });
  });

  test('deduplicates for 30 days by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [ENV.DEDUPLICATION_WINDOW_SECONDS]: String(30 * 86400) } },
    });
  });

  test('deduplicates for the given window', () => {
    // WHEN
    const { template } = synth({ deduplicationWindow: Duration.days(45) });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [ENV.DEDUPLICATION_WINDOW_SECONDS]: String(45 * 86400) } },
    });
  });

  test('gives the runtime the consumer dead-letter queue URL', () => {
    // WHEN
    const { f, subscriber, template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [ENV.DEAD_LETTER_QUEUE_URL]: r(f.stack, subscriber.deadLetterQueue.queueUrl) } },
    });
  });

  test('passes the function settings to the consumer function', () => {
    // WHEN
    const { template } = synth({ timeout: Duration.seconds(20), memorySize: 512, handler: 'consume', environment: { STAGE: 'prod' } });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Timeout: 20,
      MemorySize: 512,
      Handler: 'index.consume',
      Environment: { Variables: { STAGE: 'prod' } },
    });
  });
});

describe('Subscriber: event source mapping', () => {
  test('consumes the queue in batches of 10 and reports batch item failures', () => {
    // WHEN
    const { f, subscriber, template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      EventSourceArn: r(f.stack, subscriber.queue.queueArn),
      FunctionName: r(f.stack, subscriber.consumerFunction.lambdaFunction.functionName),
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      MaximumBatchingWindowInSeconds: Match.absent(),
      ScalingConfig: Match.absent(),
    });
  });

  test('uses the given batch size, batching window and maximum concurrency', () => {
    // WHEN
    const { template } = synth({ batchSize: 100, maxBatchingWindow: Duration.seconds(5), maxConcurrency: 5 });
    // THEN
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 5,
      ScalingConfig: { MaximumConcurrency: 5 },
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
  });
});

describe('Subscriber: least privilege', () => {
  test('lets the function trace, record in its inbox, dead-letter and consume its queue, nothing else', () => {
    // WHEN
    const { f, subscriber, template } = synth();
    // THEN
    expect(consumerPolicyStatements(template)).toEqual([
      { Action: ['xray:PutTraceSegments', 'xray:PutTelemetryRecords'], Effect: 'Allow', Resource: '*' },
      { Sid: 'IdempotentEventFlowGrantRecordMessages', Action: ['dynamodb:BatchGetItem', 'dynamodb:PutItem'], Effect: 'Allow', Resource: r(f.stack, subscriber.inboxTable!.tableArn) },
      { Sid: 'IdempotentEventFlowConsumerFunction', Action: 'sqs:SendMessage', Effect: 'Allow', Resource: r(f.stack, subscriber.deadLetterQueue.queueArn) },
      {
        Sid: 'IdempotentEventFlowSubscriber',
        Action: ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueUrl', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'],
        Effect: 'Allow',
        Resource: r(f.stack, subscriber.queue.queueArn),
      },
    ]);
  });

  test('lets the function use the key to read the queue and write the dead-letter queue', () => {
    // GIVEN
    const f = fixture();
    const key = new kms.Key(f.stack, 'Key');
    // WHEN
    create(f, { encryptionKey: key });
    // THEN
    const statements = consumerPolicyStatements(Template.fromStack(f.stack));
    const throughSqs = viaService(f.stack, key, 'sqs');
    expect(statements).toContainEqual({ Sid: 'IdempotentEventFlowConsumerFunction2', Action: ['kms:Decrypt', 'kms:GenerateDataKey'], Condition: throughSqs, Effect: 'Allow', Resource: r(f.stack, key.keyArn) });
    expect(statements).toContainEqual({ Sid: 'IdempotentEventFlowSubscriber2', Action: 'kms:Decrypt', Condition: throughSqs, Effect: 'Allow', Resource: r(f.stack, key.keyArn) });
    // and never without a service: every statement on the key is conditioned on kms:ViaService (SQS, or DynamoDB for the inbox)
    const onTheKey = statements.filter((s) => JSON.stringify((s as { Resource: unknown }).Resource) === JSON.stringify(r(f.stack, key.keyArn)));
    expect(onTheKey.length).toBeGreaterThan(0);
    for (const statement of onTheKey) {
      expect([throughSqs, viaService(f.stack, key, 'dynamodb')]).toContainEqual((statement as { Condition: unknown }).Condition);
    }
  });
});

describe('Subscriber: processing modes', () => {
  /** The consumer function's environment variables. */
  function variables(template: Template): Record<string, unknown> {
    const functions = Object.values(template.findResources('AWS::Lambda::Function'));
    expect(functions).toHaveLength(1);
    return (functions[0] as { Properties: { Environment: { Variables: Record<string, unknown> } } }).Properties.Environment.Variables;
  }

  test('is transactional by default', () => {
    // WHEN
    const { subscriber, template } = synth();
    // THEN
    expect(subscriber.processingMode).toBe(ProcessingMode.TRANSACTIONAL);
    expect(variables(template)[ENV.PROCESSING_MODE]).toBe(PROCESSING_MODE.TRANSACTIONAL);
    expect(variables(template)).not.toHaveProperty(ENV.LEASE_DURATION_SECONDS);
  });

  test.each([
    [ProcessingMode.LEASE, PROCESSING_MODE.LEASE],
    [ProcessingMode.MULTI_STEP, PROCESSING_MODE.MULTI_STEP],
  ])('in mode %s, tells the runtime the mode and a lease of the function timeout', (processingMode, runtimeName) => {
    // WHEN
    const { subscriber, template } = synth({ processingMode, timeout: Duration.seconds(40) });
    // THEN
    expect(subscriber.processingMode).toBe(processingMode);
    expect(variables(template)).toMatchObject({
      [ENV.PROCESSING_MODE]: runtimeName,
      [ENV.LEASE_DURATION_SECONDS]: '40',
      [ENV.DEDUPLICATION_WINDOW_SECONDS]: String(30 * 86400),
    });
  });

  test('passes the given lease duration to the function', () => {
    // WHEN
    const { template } = synth({ processingMode: ProcessingMode.LEASE, leaseDuration: Duration.seconds(90) });
    // THEN
    expect(variables(template)[ENV.LEASE_DURATION_SECONDS]).toBe('90');
  });

  test.each([ProcessingMode.LEASE, ProcessingMode.MULTI_STEP])(
    'in mode %s, lets the function batch-get, get, put and update its inbox records, nothing more on it',
    (processingMode) => {
      // WHEN
      const { f, subscriber, template } = synth({ processingMode });
      // THEN
      const dynamodbStatements = consumerPolicyStatements(template).filter((st) => JSON.stringify(st).includes('dynamodb:'));
      expect(dynamodbStatements).toEqual([
        {
          Sid: 'IdempotentEventFlowGrantProcessingRecords',
          Action: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem'],
          Effect: 'Allow',
          Resource: r(f.stack, subscriber.inboxTable!.tableArn),
        },
      ]);
    },
  );

  test('in aggregate mode, creates no inbox table', () => {
    // WHEN
    const { subscriber, template } = synth({ processingMode: ProcessingMode.AGGREGATE });
    // THEN
    expect(subscriber.inboxTable).toBeUndefined();
    expect(subscriber.node.tryFindChild('InboxTable')).toBeUndefined();
    expect(subscriber.node.children.map((c) => c.node.id)).toEqual(['Queue', 'SubscriptionDeadLetterQueue', 'Subscription', 'Function']);
    template.resourceCountIs('AWS::DynamoDB::Table', 0);
  });

  test('in aggregate mode, gives the function no inbox, window or lease variables', () => {
    // WHEN
    const { f, subscriber, template } = synth({ processingMode: ProcessingMode.AGGREGATE });
    // THEN
    expect(variables(template)).toEqual({
      [ENV.SUBSCRIBER_NAME]: 'Billing',
      [ENV.PROCESSING_MODE]: PROCESSING_MODE.AGGREGATE,
      [ENV.DEAD_LETTER_QUEUE_URL]: r(f.stack, subscriber.deadLetterQueue.queueUrl),
    });
  });

  test('in aggregate mode, grants the function nothing on DynamoDB', () => {
    // WHEN
    const { template } = synth({ processingMode: ProcessingMode.AGGREGATE });
    // THEN
    expect(JSON.stringify(consumerPolicyStatements(template))).not.toContain('dynamodb:');
  });

  test('warns if the lease is shorter than the timeout', () => {
    // WHEN
    const { f } = synth({ processingMode: ProcessingMode.MULTI_STEP, timeout: Duration.seconds(60), leaseDuration: Duration.seconds(30) });
    // THEN
    Annotations.fromStack(f.stack).hasWarning(
      '/TestStack/Billing/Function',
      Match.stringLikeRegexp('leaseDuration \\(30 seconds\\) is shorter than timeout \\(1 minute\\)'),
    );
  });

  test('does not warn with the default lease', () => {
    // WHEN
    const { f } = synth({ processingMode: ProcessingMode.LEASE });
    // THEN
    Annotations.fromStack(f.stack).hasNoWarning('*', Match.anyValue());
  });
});

describe('Subscriber: publishing events', () => {
  function publishing(props: Partial<SubscriberProps> = {}): { f: Fixture; outbox: OutboxTable; subscriber: Subscriber; template: Template } {
    const f = fixture();
    const outbox = new OutboxTable(f.stack, 'Outbox');
    const subscriber = create(f, { publishesEvents: true, outboxTable: outbox, ...props });
    return { f, outbox, subscriber, template: Template.fromStack(f.stack) };
  }

  test('does not publish by default: no producer environment and no outbox permission', () => {
    // WHEN
    const { template } = synth();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [ENV.OUTBOX_TABLE_NAME]: Match.absent(), [ENV.EVENT_SOURCE]: Match.absent() } },
    });
    expect(consumerPolicyStatements(template).filter((st) => JSON.stringify(st).includes('dynamodb:'))).toHaveLength(1);
  });

  test('gives the function the outbox producer environment', () => {
    // WHEN
    const { f, outbox, template } = publishing();
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: r(f.stack, outbox.producerEnvironment) as Record<string, unknown> },
    });
  });

  test('lets the function append events to the outbox', () => {
    // WHEN
    const { f, outbox, template } = publishing();
    // THEN
    expect(consumerPolicyStatements(template)).toContainEqual({
      Sid: 'IdempotentEventFlowGrantAppendEvents',
      Action: 'dynamodb:PutItem',
      Effect: 'Allow',
      Resource: r(f.stack, outbox.table.tableArn),
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } },
    });
  });

  test('uses the given event source', () => {
    // WHEN
    const { template } = publishing({ eventSource: 'urn:example:billing' });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: { [ENV.EVENT_SOURCE]: 'urn:example:billing' } } });
  });

  test('publishes from any processing mode', () => {
    // WHEN
    const { f, outbox, template } = publishing({ processingMode: ProcessingMode.AGGREGATE });
    // THEN
    expect(consumerPolicyStatements(template)).toContainEqual({
      Sid: 'IdempotentEventFlowGrantAppendEvents',
      Action: 'dynamodb:PutItem',
      Effect: 'Allow',
      Resource: r(f.stack, outbox.table.tableArn),
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } },
    });
  });
});

describe('Subscriber: metrics', () => {
  test.each([
    ['metricProcessed', CONSUMER_METRICS.PROCESSED],
    ['metricDuplicates', CONSUMER_METRICS.DUPLICATES],
    ['metricFailed', CONSUMER_METRICS.FAILED],
    ['metricBlocked', CONSUMER_METRICS.BLOCKED],
    ['metricDeadLettered', CONSUMER_METRICS.DEAD_LETTERED],
    ['metricAlreadyBlocked', CONSUMER_METRICS.ALREADY_BLOCKED],
  ] as const)('%s is the %s sum over 5 minutes with the Subscriber, ProcessingMode and FunctionName dimensions', (method, metricName) => {
    // GIVEN
    const { subscriber } = synth({ subscriberName: 'billing-v2', processingMode: ProcessingMode.MULTI_STEP });
    // WHEN
    const metric = subscriber[method]();
    // THEN
    expect(metric.namespace).toBe('IdempotentEventFlow');
    expect(metric.metricName).toBe(metricName);
    expect(metric.dimensions).toEqual({
      Subscriber: 'billing-v2',
      ProcessingMode: 'multi-step',
      FunctionName: subscriber.consumerFunction.lambdaFunction.functionName,
    });
    expect(metric.statistic).toBe('Sum');
    expect(metric.period.toSeconds()).toBe(300);
  });

  test('uses the runtime names of namespace, dimensions and metrics', () => {
    // GIVEN
    const { subscriber } = synth();
    // WHEN
    const metric = subscriber.metricProcessed();
    // THEN
    expect(metric.namespace).toBe(CONSUMER_METRICS.NAMESPACE);
    expect(metric.dimensions).toEqual({
      [CONSUMER_METRICS.SUBSCRIBER_DIMENSION]: 'Billing',
      [CONSUMER_METRICS.PROCESSING_MODE_DIMENSION]: PROCESSING_MODE.TRANSACTIONAL,
      [CONSUMER_METRICS.FUNCTION_NAME_DIMENSION]: subscriber.consumerFunction.lambdaFunction.functionName,
    });
  });

  test('takes the given metric options', () => {
    // GIVEN
    const { subscriber } = synth();
    // WHEN
    const metric = subscriber.metricFailed({ statistic: 'Maximum', period: Duration.minutes(1), label: 'failed' });
    // THEN
    expect(metric.statistic).toBe('Maximum');
    expect(metric.period.toSeconds()).toBe(60);
    expect(metric.label).toBe('failed');
    expect(metric.metricName).toBe('Failed');
  });
});

describe('Subscriber: removal policy', () => {
  test('retains the queues, the inbox table and the log group by default', () => {
    // WHEN
    const { template } = synth();
    // THEN
    for (const type of ['AWS::SQS::Queue', 'AWS::DynamoDB::Table', 'AWS::Logs::LogGroup']) {
      expect(Object.keys(template.findResources(type, { DeletionPolicy: Match.not('Retain') }))).toEqual([]);
    }
  });

  test('applies the given removal policy to the queues, the inbox table and the log group', () => {
    // WHEN
    const { template } = synth({ removalPolicy: RemovalPolicy.DESTROY });
    // THEN
    expect(Object.keys(template.findResources('AWS::SQS::Queue', { DeletionPolicy: 'Delete' }))).toHaveLength(3);
    expect(Object.keys(template.findResources('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete' }))).toHaveLength(1);
    expect(Object.keys(template.findResources('AWS::Logs::LogGroup', { DeletionPolicy: 'Delete' }))).toHaveLength(1);
  });
});

describe('Subscriber: validation', () => {
  const build = (props: Partial<SubscriberProps>, id = 'Billing') => () => create(fixture(), props, id);

  test('fails if the construct id is not a valid subscriber name', () => {
    expect(build({}, 'Billing#EU')).toThrow(
      /Subscriber 'Billing#EU': subscriberName \(the construct id\) must be 1 to 64 letters, digits, '_', '\.' or '-' \(it becomes part of the inbox keys\), but 'Billing#EU' was provided/,
    );
  });
  test('fails if subscriberName is not valid', () => {
    expect(build({ subscriberName: 'billing eu' })).toThrow(/Subscriber 'Billing': subscriberName must be 1 to 64 letters.*but 'billing eu' was provided/);
  });
  test('fails if subscriberName is longer than 64 characters', () => {
    expect(build({ subscriberName: 'b'.repeat(65) })).toThrow(/subscriberName must be 1 to 64 letters/);
  });
  test('fails if visibilityTimeout is less than 6 x timeout', () => {
    expect(build({ timeout: Duration.minutes(1), visibilityTimeout: Duration.minutes(5) })).toThrow(
      /Subscriber 'Billing': visibilityTimeout must be at least 6 x timeout \(6 minutes\), but 5 minutes was provided/,
    );
  });
  test('fails if visibilityTimeout is less than 6 x the default timeout', () => {
    expect(build({ visibilityTimeout: Duration.seconds(179) })).toThrow(
      /visibilityTimeout must be at least 6 x timeout \(3 minutes\), but 2 minutes 59 seconds was provided/,
    );
  });
  test('fails if deduplicationWindow is shorter than the three retention periods with their defaults', () => {
    expect(build({ deduplicationWindow: Duration.days(18) })).toThrow(
      "Subscriber 'Billing': deduplicationWindow must be at least subscriptionDeadLetterRetentionPeriod + retentionPeriod + " +
        'deadLetterRetentionPeriod (7 days + 4 days + 14 days = 25 days), but 18 days was provided',
    );
  });
  test('fails if deduplicationWindow is shorter than the given retention periods', () => {
    expect(
      build({
        subscriptionDeadLetterRetentionPeriod: Duration.days(1),
        retentionPeriod: Duration.days(14),
        deadLetterRetentionPeriod: Duration.days(14),
        deduplicationWindow: Duration.days(28),
      }),
    ).toThrow(/deduplicationWindow must be at least .* \(1 day \+ 14 days \+ 14 days = 29 days\), but 28 days was provided/);
  });
  test('fails if the subscription dead-letter queue keeps messages for 14 days (the SQS maximum) with the default window', () => {
    // 14 + 4 + 14 = 32 days: a message SNS could not deliver, redriven at the end of each retention, outlives its inbox record
    expect(build({ subscriptionDeadLetterRetentionPeriod: Duration.days(14) })).toThrow(
      "Subscriber 'Billing': deduplicationWindow must be at least subscriptionDeadLetterRetentionPeriod + retentionPeriod + " +
        'deadLetterRetentionPeriod (14 days + 4 days + 14 days = 32 days), but the default of 30 days applies',
    );
  });
  test('fails if the given retention periods exceed the default window', () => {
    expect(build({ retentionPeriod: Duration.days(14), deadLetterRetentionPeriod: Duration.days(14) })).toThrow(
      /deduplicationWindow must be at least .* \(7 days \+ 14 days \+ 14 days = 35 days\), but the default of 30 days applies/,
    );
  });
  test('accepts a deduplicationWindow equal to the three retention periods', () => {
    expect(build({ deduplicationWindow: Duration.days(25) })).not.toThrow();
    expect(build({ subscriptionDeadLetterRetentionPeriod: Duration.days(12) })).not.toThrow();
    expect(
      build({
        subscriptionDeadLetterRetentionPeriod: Duration.days(14),
        retentionPeriod: Duration.days(14),
        deadLetterRetentionPeriod: Duration.days(14),
        deduplicationWindow: Duration.days(42),
      }),
    ).not.toThrow();
  });
  test('does not add up the retention periods in aggregate mode (no inbox, no window)', () => {
    expect(
      build({
        processingMode: ProcessingMode.AGGREGATE,
        subscriptionDeadLetterRetentionPeriod: Duration.days(14),
        retentionPeriod: Duration.days(14),
        deadLetterRetentionPeriod: Duration.days(14),
      }),
    ).not.toThrow();
  });
  test('does not add up the retention periods when one is a token', () => {
    // GIVEN 14 + 4 + 14 days, more than the default window, but known only at deployment
    const subscriptionDeadLetterRetentionPeriod = Duration.seconds(Lazy.number({ produce: () => 14 * 86400 }));
    // WHEN
    const { f, subscriber, template } = synth({ subscriptionDeadLetterRetentionPeriod });
    // THEN
    const logicalId = f.stack.getLogicalId((subscriber.subscriptionDeadLetterQueue as sqs.Queue).node.defaultChild as sqs.CfnQueue);
    expect(template.toJSON().Resources[logicalId].Properties.MessageRetentionPeriod).toBe(14 * 86400);
  });
  test('fails if subscriptionDeadLetterRetentionPeriod is above 14 days', () => {
    expect(build({ subscriptionDeadLetterRetentionPeriod: Duration.days(15), deduplicationWindow: Duration.days(60) })).toThrow(
      "Subscriber 'Billing': subscriptionDeadLetterRetentionPeriod must be 14 days or less, but 15 days was provided",
    );
  });
  test('fails if subscriptionDeadLetterRetentionPeriod is below 1 minute', () => {
    expect(build({ subscriptionDeadLetterRetentionPeriod: Duration.seconds(59) })).toThrow(
      "Subscriber 'Billing': subscriptionDeadLetterRetentionPeriod must be 1 minute or more, but 59 seconds was provided",
    );
  });
  test('fails if subscriptionDeadLetterRetentionPeriod is not a whole number of seconds', () => {
    expect(build({ subscriptionDeadLetterRetentionPeriod: Duration.millis(120_500) })).toThrow(
      /Subscriber 'Billing': subscriptionDeadLetterRetentionPeriod must be a whole number of seconds, but 2 minutes 500 millis was provided/,
    );
  });
  test('fails if maxReceiveCount is below 1', () => {
    expect(build({ maxReceiveCount: 0 })).toThrow(/Subscriber 'Billing': maxReceiveCount must be 1 or more, but 0 was provided/);
  });
  test('fails if retentionPeriod is above 14 days', () => {
    expect(build({ retentionPeriod: Duration.days(15) })).toThrow(/Subscriber 'Billing': retentionPeriod must be 14 days or less, but 15 days was provided/);
  });
  test('fails if deadLetterRetentionPeriod is shorter than retentionPeriod', () => {
    expect(build({ retentionPeriod: Duration.days(10), deadLetterRetentionPeriod: Duration.days(9) })).toThrow(
      /Subscriber 'Billing': deadLetterRetentionPeriod must be at least retentionPeriod \(10 days\), but 9 days was provided/,
    );
  });
  test('fails if timeout is above 15 minutes', () => {
    expect(build({ timeout: Duration.minutes(16) })).toThrow(/Subscriber 'Billing': timeout must be 15 minutes or less, but 16 minutes was provided/);
  });
  test('fails if memorySize is below 128', () => {
    expect(build({ memorySize: 64 })).toThrow(/Subscriber 'Billing': memorySize must be 128 or more, but 64 was provided/);
  });
  test('fails if the environment sets a runtime contract variable', () => {
    expect(build({ environment: { [ENV.SUBSCRIBER_NAME]: 'x' } })).toThrow(/Subscriber 'Billing': environment must not set IEF_SUBSCRIBER_NAME/);
  });
  test('fails if batchSize is below 1', () => {
    expect(build({ batchSize: 0 })).toThrow(/Subscriber 'Billing': batchSize must be 1 or more, but 0 was provided/);
  });
  test('fails if batchSize is above 10000', () => {
    expect(build({ batchSize: 10001, maxBatchingWindow: Duration.seconds(1) })).toThrow(/batchSize must be 10000 or less, but 10001 was provided/);
  });
  test('fails if batchSize is not a whole number', () => {
    expect(build({ batchSize: 2.5 })).toThrow(/batchSize must be a whole number, but 2.5 was provided/);
  });
  test('fails if batchSize is above 10 without a batching window', () => {
    expect(build({ batchSize: 11 })).toThrow(
      /Subscriber 'Billing': batchSize must be 10 or less unless maxBatchingWindow is at least 1 second, but 11 was provided/,
    );
  });
  test('fails if batchSize is above 10 with a zero batching window', () => {
    expect(build({ batchSize: 11, maxBatchingWindow: Duration.seconds(0) })).toThrow(/batchSize must be 10 or less unless maxBatchingWindow/);
  });
  test('fails if maxBatchingWindow is above 5 minutes', () => {
    expect(build({ maxBatchingWindow: Duration.seconds(301) })).toThrow(
      /Subscriber 'Billing': maxBatchingWindow must be 5 minutes or less, but 5 minutes 1 second was provided/,
    );
  });
  test('fails if maxConcurrency is below 2', () => {
    expect(build({ maxConcurrency: 1 })).toThrow(/Subscriber 'Billing': maxConcurrency must be 2 or more, but 1 was provided/);
  });
  test('fails if maxConcurrency is above 1000', () => {
    expect(build({ maxConcurrency: 1001 })).toThrow(/maxConcurrency must be 1000 or less, but 1001 was provided/);
  });
  test('fails if leaseDuration is given in transactional mode', () => {
    expect(build({ leaseDuration: Duration.seconds(30) })).toThrow(
      /Subscriber 'Billing': leaseDuration can only be used with processingMode ProcessingMode\.LEASE or ProcessingMode\.MULTI_STEP, but it was provided with ProcessingMode\.TRANSACTIONAL/,
    );
  });
  test('fails if leaseDuration is given in aggregate mode', () => {
    expect(build({ processingMode: ProcessingMode.AGGREGATE, leaseDuration: Duration.seconds(30) })).toThrow(
      /Subscriber 'Billing': leaseDuration can only be used with .*but it was provided with ProcessingMode\.AGGREGATE/,
    );
  });
  test('fails if leaseDuration is below 1 second', () => {
    expect(build({ processingMode: ProcessingMode.LEASE, leaseDuration: Duration.seconds(0) })).toThrow(
      /Subscriber 'Billing': leaseDuration must be 1 second or more, but 0 seconds was provided/,
    );
  });
  test('fails if leaseDuration is not a whole number of seconds', () => {
    expect(build({ processingMode: ProcessingMode.LEASE, leaseDuration: Duration.millis(2500) })).toThrow(
      /Subscriber 'Billing': leaseDuration must be a whole number of seconds, but 2 seconds 500 millis was provided/,
    );
  });
  test('fails if leaseDuration equals the default visibilityTimeout', () => {
    expect(build({ processingMode: ProcessingMode.LEASE, leaseDuration: Duration.minutes(3) })).toThrow(
      /Subscriber 'Billing': leaseDuration must be less than visibilityTimeout less the runtime's 5 s clock-skew allowance \(2 minutes 55 seconds\) \(so that a redelivery after a crash finds the lease expired\), but 3 minutes was provided/,
    );
  });
  test('fails if leaseDuration is longer than the given visibilityTimeout', () => {
    expect(build({ processingMode: ProcessingMode.MULTI_STEP, visibilityTimeout: Duration.minutes(10), leaseDuration: Duration.minutes(11) })).toThrow(
      /Subscriber 'Billing': leaseDuration must be less than visibilityTimeout less the runtime's 5 s clock-skew allowance \(9 minutes 55 seconds\).*but 11 minutes was provided/,
    );
  });
  test("fails if leaseDuration ends within the runtime's 5 s clock-skew allowance of visibilityTimeout (a redelivery then finds the lease still held and spends a receive)", () => {
    expect(build({ processingMode: ProcessingMode.LEASE, visibilityTimeout: Duration.minutes(10), leaseDuration: Duration.seconds(597) })).toThrow(
      /Subscriber 'Billing': leaseDuration must be less than visibilityTimeout less the runtime's 5 s clock-skew allowance \(9 minutes 55 seconds\) \(so that a redelivery after a crash finds the lease expired\), but 9 minutes 57 seconds was provided/,
    );
    expect(build({ processingMode: ProcessingMode.MULTI_STEP, visibilityTimeout: Duration.minutes(10), leaseDuration: Duration.seconds(595) })).toThrow(/but 9 minutes 55 seconds was provided/);
    expect(build({ processingMode: ProcessingMode.MULTI_STEP, visibilityTimeout: Duration.minutes(10), leaseDuration: Duration.seconds(594) })).not.toThrow();
  });
  test('fails if inboxTable is given in aggregate mode', () => {
    // GIVEN
    const f = fixture();
    const shared = InboxTable.fromTableName(f.stack, 'Shared', 'shared-inbox');
    // THEN
    expect(() => create(f, { processingMode: ProcessingMode.AGGREGATE, inboxTable: shared })).toThrow(
      /Subscriber 'Billing': inboxTable can not be used with processingMode ProcessingMode\.AGGREGATE \(an aggregate consumer keeps the ids of applied messages on the aggregate item and has no inbox\), but an inbox table was provided/,
    );
  });
  test('fails if deduplicationWindow is given in aggregate mode', () => {
    expect(build({ processingMode: ProcessingMode.AGGREGATE, deduplicationWindow: Duration.days(30) })).toThrow(
      /Subscriber 'Billing': deduplicationWindow can not be used with processingMode ProcessingMode\.AGGREGATE .*but 30 days was provided/,
    );
  });
  test('fails if publishesEvents is true without outboxTable', () => {
    expect(build({ publishesEvents: true })).toThrow(
      /Subscriber 'Billing': publishesEvents requires outboxTable \(the outbox the handler appends events to\), but none was provided/,
    );
  });
  test('fails if outboxTable is given without publishesEvents', () => {
    // GIVEN
    const f = fixture();
    const outbox = new OutboxTable(f.stack, 'Outbox');
    // THEN
    expect(() => create(f, { outboxTable: outbox })).toThrow(
      /Subscriber 'Billing': outboxTable can only be used with publishesEvents: true, but publishesEvents is false/,
    );
  });
  test('fails if eventSource is given without publishesEvents', () => {
    expect(build({ eventSource: 'urn:example:billing' })).toThrow(
      /Subscriber 'Billing': eventSource can only be used with publishesEvents: true, but publishesEvents is false/,
    );
  });
  test('fails if eventSource has whitespace', () => {
    // GIVEN
    const f = fixture();
    const outbox = new OutboxTable(f.stack, 'Outbox');
    // THEN
    expect(() => create(f, { publishesEvents: true, outboxTable: outbox, eventSource: 'a b' })).toThrow(
      /Subscriber 'Billing': eventSource must be a non-empty URI-reference without whitespace, but 'a b' was provided/,
    );
  });
  test('fails if a publishing subscriber sets a producer variable in its environment', () => {
    // GIVEN
    const f = fixture();
    const outbox = new OutboxTable(f.stack, 'Outbox');
    // THEN
    expect(() => create(f, { publishesEvents: true, outboxTable: outbox, environment: { [ENV.EVENT_SOURCE]: 'x' } })).toThrow(
      /Subscriber 'Billing': environment must not set IEF_EVENT_SOURCE/,
    );
  });
  test('does not check a lease duration that is a token, and passes it to the runtime', () => {
    // GIVEN
    const leaseDuration = Duration.seconds(Lazy.number({ produce: () => 200 }));
    // WHEN
    const { f, template } = synth({ processingMode: ProcessingMode.LEASE, leaseDuration });
    // THEN
    template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: { [ENV.LEASE_DURATION_SECONDS]: '200' } } });
    Annotations.fromStack(f.stack).hasNoWarning('*', Match.anyValue());
  });
  test("accepts a lease that ends, with the runtime's 5 s clock-skew allowance, just before the visibility timeout", () => {
    expect(build({ processingMode: ProcessingMode.LEASE, leaseDuration: Duration.seconds(174) })).not.toThrow();
    expect(build({ processingMode: ProcessingMode.MULTI_STEP, leaseDuration: Duration.seconds(1) })).not.toThrow();
  });
  test('accepts the bounds', () => {
    expect(
      build({
        subscriberName: 'a'.repeat(64),
        timeout: Duration.minutes(1),
        visibilityTimeout: Duration.minutes(6),
        // 1 minute + 4 days + 14 days
        deduplicationWindow: Duration.seconds(18 * 86400 + 60),
        subscriptionDeadLetterRetentionPeriod: Duration.minutes(1),
        batchSize: 10000,
        maxBatchingWindow: Duration.minutes(5),
        maxConcurrency: 2,
        maxReceiveCount: 1,
      }),
    ).not.toThrow();
    expect(build({ batchSize: 1, maxConcurrency: 1000, maxBatchingWindow: Duration.seconds(0) })).not.toThrow();
  });
});

describe('Subscriber: cdk-nag and CloudFormation validation', () => {
  test('has no unacknowledged AwsSolutions or Serverless findings with SQS-managed encryption', () => {
    // GIVEN
    const { subscriber } = synth();
    // THEN
    expect(nagFindings(subscriber)).toEqual([]);
  });

  test('has no unacknowledged AwsSolutions or Serverless findings with the topic key', () => {
    // GIVEN
    const f = fixture();
    const key = new kms.Key(f.stack, 'Key', { enableKeyRotation: true });
    // WHEN
    const subscriber = create(f, { encryptionKey: key, maxBatchingWindow: Duration.seconds(1), batchSize: 50, maxConcurrency: 10 });
    // THEN
    expect(nagFindings(subscriber)).toEqual([]);
  });

  test('synthesizes with the cdk-nag packs and the built-in CloudFormation validation registered on the app', () => {
    // GIVEN an app that fails synthesis on any finding, including CloudFormation schema warnings
    const app = new App({
      context: { 'aws:cdk:bundling-stacks': [], '@aws-cdk/core:strictCfnValidateErrors': true },
    });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
    const stack = new Stack(app, 'SubscriberStack');
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    const topic = new sns.Topic(stack, 'Topic', { masterKey: key, enforceSSL: true });
    new Subscriber(stack, 'Billing', { topic, encryptionKey: key, entry: HANDLER_ENTRY });
    // THEN
    expect(() => app.synth()).not.toThrow();
  });

  test.each([ProcessingMode.LEASE, ProcessingMode.MULTI_STEP, ProcessingMode.AGGREGATE])(
    'has no unacknowledged AwsSolutions or Serverless findings in mode %s',
    (processingMode) => {
      // GIVEN
      const { subscriber } = synth({ processingMode });
      // THEN
      expect(nagFindings(subscriber)).toEqual([]);
    },
  );
});
