import { CfnElement, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatchActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as pipes from 'aws-cdk-lib/aws-pipes';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';
import { describe, expect, test } from 'vitest';
import { ENV } from '../../lambda/contract/environment';
import { IdempotentEventFlow, type IdempotentEventFlowProps, OutboxTable, ProcessingMode, ProducerFunction, Subscriber } from '../../lib';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';
import { libraryStatementOrigin } from '../../lambda/contract/statement-ids';

interface Fixture {
  readonly stack: Stack;
  readonly flow: IdempotentEventFlow;
}

function fixture(props?: IdempotentEventFlowProps): Fixture {
  const stack = newStack();
  return { stack, flow: new IdempotentEventFlow(stack, 'Orders', props) };
}

function addSubscriber(flow: IdempotentEventFlow, id: string, options: Partial<Parameters<IdempotentEventFlow['addSubscriber']>[1]> = {}): Subscriber {
  return flow.addSubscriber(id, { entry: HANDLER_ENTRY, ...options });
}

function r(stack: Stack, value: unknown): unknown {
  return stack.resolve(value);
}

/** Properties of the only resource of `type`. */
function onlyProperties(template: Template, type: string): Record<string, any> {
  const resources = Object.values(template.findResources(type));
  expect(resources).toHaveLength(1);
  return (resources[0] as { Properties: Record<string, any> }).Properties;
}

/** Statements of the default policy attached to `role`. */
function policyStatements(stack: Stack, template: Template, role: iam.IRole): unknown[] {
  const policies = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [r(stack, role.roleName)] } }));
  expect(policies).toHaveLength(1);
  return (policies[0] as { Properties: { PolicyDocument: { Statement: unknown[] } } }).Properties.PolicyDocument.Statement;
}

function alarmsProperties(template: Template): Array<Record<string, any>> {
  return Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((a) => (a as { Properties: Record<string, any> }).Properties);
}

function logicalIdOf(construct: IConstruct): string {
  const cfn = (construct.node.defaultChild ?? construct) as CfnElement;
  return Stack.of(cfn).getLogicalId(cfn);
}

describe('IdempotentEventFlow: what a flow without props creates', () => {
  test('creates exactly one outbox table with a NEW_IMAGE stream, TTL and PITR, retained', () => {
    // WHEN
    const { stack } = fixture();
    // THEN
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    template.hasResource('AWS::DynamoDB::Table', {
      Properties: {
        StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
        TimeToLiveSpecification: { AttributeName: 'expiresAt', Enabled: true },
        PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
      },
      DeletionPolicy: 'Retain',
      UpdateReplacePolicy: 'Retain',
    });
  });

  test('creates exactly one topic, encrypted with a new rotating KMS key that is the flow key', () => {
    // WHEN
    const { stack, flow } = fixture();
    // THEN
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::SNS::Topic', 1);
    template.resourceCountIs('AWS::KMS::Key', 1);
    template.hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    expect(onlyProperties(template, 'AWS::SNS::Topic').KmsMasterKeyId).toEqual(r(stack, flow.encryptionKey.keyArn));
    expect(flow.encryptionKey).toBe(flow.eventTopic.encryptionKey);
    expect(flow.topic).toBe(flow.eventTopic.topic);
  });

  test('creates exactly one pipe from the outbox stream to the topic', () => {
    // WHEN
    const { stack, flow } = fixture();
    // THEN
    const pipe = onlyProperties(Template.fromStack(stack), 'AWS::Pipes::Pipe');
    expect(pipe.Source).toEqual(r(stack, flow.outboxTable.tableStreamArn));
    expect(pipe.Source).toEqual({ 'Fn::GetAtt': [logicalIdOf(flow.outboxTable.table), 'StreamArn'] });
    expect(pipe.Target).toEqual(r(stack, flow.topic.topicArn));
  });

  test('creates the relay dead-letter queue, encrypted with the flow key, as the pipe dead-letter target', () => {
    // WHEN
    const { stack, flow } = fixture();
    // THEN
    const template = Template.fromStack(stack);
    expect(onlyProperties(template, 'AWS::SQS::Queue').KmsMasterKeyId).toEqual(r(stack, flow.encryptionKey.keyArn));
    expect(onlyProperties(template, 'AWS::Pipes::Pipe').SourceParameters.DynamoDBStreamParameters.DeadLetterConfig).toEqual({
      Arn: r(stack, flow.relay.deadLetterQueue.queueArn),
    });
  });

  test('creates the two relay alarms and exposes them', () => {
    // WHEN
    const { stack, flow } = fixture();
    // THEN
    Template.fromStack(stack).resourceCountIs('AWS::CloudWatch::Alarm', 2);
    expect(flow.relayAlarms.alarms).toHaveLength(2);
    expect(flow.alarms).toEqual(flow.relayAlarms.alarms);
    expect(flow.subscribers).toEqual([]);
  });

  test('relays in batches of 10 with 10 retries and a maximum record age of 1 hour by default', () => {
    // WHEN
    const { stack } = fixture();
    // THEN
    Template.fromStack(stack).hasResourceProperties('AWS::Pipes::Pipe', {
      SourceParameters: { DynamoDBStreamParameters: { BatchSize: 10, MaximumRetryAttempts: 10, MaximumRecordAgeInSeconds: 3600 } },
    });
  });

  test('passes the relay props to the pipe', () => {
    // WHEN
    const { stack } = fixture({ relayBatchSize: 4, relayMaximumRetryAttempts: 3, relayMaximumRecordAge: Duration.hours(2) });
    // THEN
    Template.fromStack(stack).hasResourceProperties('AWS::Pipes::Pipe', {
      SourceParameters: { DynamoDBStreamParameters: { BatchSize: 4, MaximumRetryAttempts: 3, MaximumRecordAgeInSeconds: 7200 } },
    });
  });
});

describe('IdempotentEventFlow: construct ids', () => {
  test('keeps the paths and logical ids of the main children stable', () => {
    // GIVEN
    const { flow } = fixture();
    // WHEN
    addSubscriber(flow, 'Billing');
    // THEN
    const at = (path: string): IConstruct =>
      path.split('/').slice(1).reduce<IConstruct>((construct, id) => construct.node.findChild(id), flow);
    const children: Array<[string, abstract new (...args: never[]) => IConstruct, string]> = [
      ['Orders/OutboxTable/Resource', dynamodb.Table, 'OrdersOutboxTableDB76C437'],
      ['Orders/EventTopic/Resource', sns.Topic, 'OrdersEventTopic342BBAB9'],
      ['Orders/Relay/Resource', pipes.CfnPipe, 'OrdersRelayD0014337'],
      ['Orders/Billing/Queue/Resource', sqs.Queue, 'OrdersBillingQueue709EDEAA'],
      ['Orders/Billing/InboxTable/Resource', dynamodb.Table, 'OrdersBillingInboxTableAFC74B97'],
      ['Orders/Billing/Function/Resource', lambda.Function, 'OrdersBillingFunction2686737F'],
    ];
    for (const [path, type, logicalId] of children) {
      const child = at(path);
      expect(child, path).toBeInstanceOf(type);
      expect(logicalIdOf(child), path).toBe(logicalId);
    }
  });

  test('exposes the children it creates', () => {
    // WHEN
    const { flow } = fixture();
    // THEN
    expect(flow.outboxTable).toBe(flow.node.findChild('OutboxTable'));
    expect(flow.eventTopic).toBe(flow.node.findChild('EventTopic'));
    expect(flow.relay).toBe(flow.node.findChild('Relay'));
    expect(flow.relayAlarms).toBe(flow.node.findChild('RelayAlarms'));
  });
});

describe('IdempotentEventFlow: addSubscriber', () => {
  test('gives each subscriber its own queues, inbox table, consumer function and event source mapping', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    const billing = addSubscriber(flow, 'Billing');
    const shipping = addSubscriber(flow, 'Shipping');
    // THEN
    const template = Template.fromStack(stack);
    expect(flow.subscribers).toEqual([billing, shipping]);
    template.resourceCountIs('AWS::SQS::Queue', 1 + 2 * 3);
    template.resourceCountIs('AWS::SNS::Subscription', 2);
    template.resourceCountIs('AWS::DynamoDB::Table', 1 + 2);
    template.resourceCountIs('AWS::Lambda::Function', 2);
    template.resourceCountIs('AWS::Lambda::EventSourceMapping', 2);
    for (const subscriber of [billing, shipping]) {
      template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        EventSourceArn: r(stack, subscriber.queue.queueArn),
        FunctionName: r(stack, subscriber.consumerFunction.lambdaFunction.functionName),
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
      template.hasResourceProperties('AWS::SNS::Subscription', {
        TopicArn: r(stack, flow.topic.topicArn),
        Endpoint: r(stack, subscriber.queue.queueArn),
        Protocol: 'sqs',
        RawMessageDelivery: true,
        RedrivePolicy: { deadLetterTargetArn: r(stack, subscriber.subscriptionDeadLetterQueue!.queueArn) },
      });
    }
    expect(billing.inboxTable).not.toBe(shipping.inboxTable);
  });

  test.each([0, 1, 2, 3])('creates 2 + 5 x %i alarms for %i subscriber(s)', (n) => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    for (let i = 0; i < n; i++) {
      addSubscriber(flow, `Subscriber${i}`);
    }
    // THEN
    Template.fromStack(stack).resourceCountIs('AWS::CloudWatch::Alarm', 2 + 5 * n);
    expect(flow.alarms).toHaveLength(2 + 5 * n);
  });

  test('encrypts every queue of every subscriber with the flow key', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    addSubscriber(flow, 'Billing');
    addSubscriber(flow, 'Shipping');
    // THEN
    const queues = Object.values(Template.fromStack(stack).findResources('AWS::SQS::Queue'));
    expect(queues).toHaveLength(7);
    for (const queue of queues) {
      expect((queue as { Properties: { KmsMasterKeyId: unknown } }).Properties.KmsMasterKeyId).toEqual({
        'Fn::GetAtt': [logicalIdOf(flow.eventTopic.node.findChild('Key')), 'Arn'],
      });
    }
  });

  test('subscribes with the filter policy on the message body', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    const shipping = addSubscriber(flow, 'Shipping', {
      filterPolicyWithMessageBody: {
        type: sns.FilterOrPolicy.filter(sns.SubscriptionFilter.stringFilter({ allowlist: ['OrderPlaced'] })),
      },
    });
    // THEN
    Template.fromStack(stack).hasResourceProperties('AWS::SNS::Subscription', {
      Endpoint: r(stack, shipping.queue.queueArn),
      FilterPolicyScope: 'MessageBody',
      FilterPolicy: { type: ['OrderPlaced'] },
    });
  });

  test('passes subscriptionDeadLetterRetentionPeriod to the subscriber, and checks it against the deduplication window', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    const billing = addSubscriber(flow, 'Billing', { subscriptionDeadLetterRetentionPeriod: Duration.days(3) });
    // THEN
    const template = Template.fromStack(stack).toJSON();
    expect(template.Resources[logicalIdOf(billing.subscriptionDeadLetterQueue!)].Properties.MessageRetentionPeriod).toBe(3 * 86400);
    expect(() => addSubscriber(flow, 'Shipping', { subscriptionDeadLetterRetentionPeriod: Duration.days(14), deduplicationWindow: Duration.days(31) })).toThrow(
      "Subscriber 'Shipping': deduplicationWindow must be at least subscriptionDeadLetterRetentionPeriod + retentionPeriod + " +
        'deadLetterRetentionPeriod (14 days + 4 days + 14 days = 32 days), but 31 days was provided',
    );
  });

  test('subscribes without a filter policy by default', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    addSubscriber(flow, 'Billing');
    // THEN
    Template.fromStack(stack).hasResourceProperties('AWS::SNS::Subscription', {
      FilterPolicy: Match.absent(),
      FilterPolicyScope: Match.absent(),
    });
  });
});

describe('IdempotentEventFlow: producers', () => {
  test('grantAppendEvents gives exactly dynamodb:PutItem on the outbox table', () => {
    // GIVEN
    const { stack, flow } = fixture();
    const role = new iam.Role(stack, 'Producer', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    // WHEN
    const grant = flow.grantAppendEvents(role);
    // THEN
    expect(grant.success).toBe(true);
    expect(policyStatements(stack, Template.fromStack(stack), role)).toEqual([
      { Sid: 'IdempotentEventFlowGrantAppendEvents', Action: 'dynamodb:PutItem', Effect: 'Allow', Resource: r(stack, flow.outboxTable.table.tableArn), Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } } },
    ]);
  });

  test("producerEnvironment is the outbox table's producer environment", () => {
    // WHEN
    const { stack, flow } = fixture();
    // THEN
    expect(r(stack, flow.producerEnvironment)).toEqual(r(stack, flow.outboxTable.producerEnvironment));
    expect(r(stack, flow.producerEnvironment)).toEqual({
      [ENV.OUTBOX_TABLE_NAME]: { Ref: 'OrdersOutboxTableDB76C437' },
      [ENV.OUTBOX_PARTITION_KEY_NAME]: 'pk',
      [ENV.OUTBOX_SORT_KEY_NAME]: 'sk',
      [ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME]: 'expiresAt',
      [ENV.OUTBOX_EVENT_RETENTION_SECONDS]: String(7 * 86400),
      [ENV.EVENT_SOURCE]: '/TestStack/Orders/OutboxTable',
      // the relay's batches of 10 fit one 262,144-byte PublishBatch
      [ENV.MAX_EVENT_BYTES]: '26214',
    });
  });

  test('uses the given eventSource in the producer environment', () => {
    // WHEN
    const { flow } = fixture({ eventSource: 'urn:example:orders' });
    // THEN
    expect(flow.producerEnvironment[ENV.EVENT_SOURCE]).toBe('urn:example:orders');
  });

  test('addProducer creates a function with the producer environment and permission to append events', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    const producer = flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY, environment: { ORDERS_TABLE_NAME: 'orders' } });
    // THEN
    const template = Template.fromStack(stack);
    expect(producer).toBeInstanceOf(ProducerFunction);
    expect(producer.node.scope).toBe(flow);
    template.resourceCountIs('AWS::Lambda::Function', 1);
    expect(onlyProperties(template, 'AWS::Lambda::Function').Environment.Variables).toEqual({
      ORDERS_TABLE_NAME: 'orders',
      ...(r(stack, flow.producerEnvironment) as object),
    });
    expect(policyStatements(stack, template, producer.role)).toContainEqual({
      Sid: 'IdempotentEventFlowGrantAppendEvents',
      Action: 'dynamodb:PutItem',
      Effect: 'Allow',
      Resource: r(stack, flow.outboxTable.table.tableArn),
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } },
    });
  });
});

describe('IdempotentEventFlow: processing modes', () => {
  test('gives each subscriber the mode it asks for', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    const subscribers = Object.values(ProcessingMode).map((processingMode) => addSubscriber(flow, `S${processingMode.replace('-', '')}`, { processingMode }));
    // THEN
    const template = Template.fromStack(stack);
    expect(subscribers.map((s) => s.processingMode)).toEqual(Object.values(ProcessingMode));
    for (const subscriber of subscribers) {
      template.hasResourceProperties('AWS::Lambda::Function', {
        Environment: { Variables: { [ENV.SUBSCRIBER_NAME]: subscriber.subscriberName, [ENV.PROCESSING_MODE]: subscriber.processingMode } },
      });
    }
  });

  test('creates no inbox table for an aggregate subscriber', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    const ledger = addSubscriber(flow, 'Ledger', { processingMode: ProcessingMode.AGGREGATE });
    // THEN
    expect(ledger.inboxTable).toBeUndefined();
    Template.fromStack(stack).resourceCountIs('AWS::DynamoDB::Table', 1); // the outbox only
  });

  test.each([
    [ProcessingMode.TRANSACTIONAL, 5],
    [ProcessingMode.LEASE, 6],
    [ProcessingMode.MULTI_STEP, 6],
    [ProcessingMode.AGGREGATE, 5],
  ])('adds the alarms of a %s subscriber (%i) to the flow alarms', (processingMode, subscriberAlarms) => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    addSubscriber(flow, 'Billing', { processingMode });
    // THEN
    expect(flow.alarms).toHaveLength(2 + subscriberAlarms);
    Template.fromStack(stack).resourceCountIs('AWS::CloudWatch::Alarm', 2 + subscriberAlarms);
  });
});

describe('IdempotentEventFlow: subscribers that publish events', () => {
  test('gives a publishing subscriber the producer environment of the flow', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    const billing = addSubscriber(flow, 'Billing', { publishesEvents: true });
    // THEN
    const template = Template.fromStack(stack);
    const fn = template.findResources('AWS::Lambda::Function')[logicalIdOf(billing.consumerFunction.lambdaFunction)];
    expect(fn.Properties.Environment.Variables).toMatchObject(r(stack, flow.producerEnvironment) as object);
  });

  test('lets a publishing subscriber append events to the flow outbox, as grantPublish does', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    const billing = addSubscriber(flow, 'Billing', { publishesEvents: true });
    // THEN
    expect(policyStatements(stack, Template.fromStack(stack), billing.consumerFunction.role)).toContainEqual({
      Sid: 'IdempotentEventFlowGrantAppendEvents',
      Action: 'dynamodb:PutItem',
      Effect: 'Allow',
      Resource: r(stack, flow.outboxTable.table.tableArn),
      Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } },
    });
  });

  test('gives a subscriber that does not publish neither the producer environment nor the outbox grant', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    const billing = addSubscriber(flow, 'Billing');
    // THEN
    const template = Template.fromStack(stack);
    const fn = template.findResources('AWS::Lambda::Function')[logicalIdOf(billing.consumerFunction.lambdaFunction)];
    expect(fn.Properties.Environment.Variables).not.toHaveProperty(ENV.OUTBOX_TABLE_NAME);
    expect(JSON.stringify(policyStatements(stack, template, billing.consumerFunction.role))).not.toContain(
      JSON.stringify(r(stack, flow.outboxTable.table.tableArn)),
    );
  });

  test('publishes from an existing outbox table with its event source', () => {
    // GIVEN
    const stack = newStack();
    const table = new dynamodb.Table(stack, 'SingleTable', {
      partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING },
      stream: dynamodb.StreamViewType.NEW_IMAGE,
    });
    const outboxTable = OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK', eventSource: 'urn:orders' });
    const flow = new IdempotentEventFlow(stack, 'Orders', { outboxTable });
    // WHEN
    addSubscriber(flow, 'Billing', { publishesEvents: true });
    // THEN
    Template.fromStack(stack).hasResourceProperties('AWS::Lambda::Function', {
      Environment: { Variables: { [ENV.OUTBOX_TABLE_NAME]: r(stack, table.tableName), [ENV.EVENT_SOURCE]: 'urn:orders' } },
    });
  });
});

describe('IdempotentEventFlow: alarms', () => {
  test('attaches alarmActions to every alarm, including those of subscribers added later', () => {
    // GIVEN
    const stack = newStack();
    const ops = new sns.Topic(stack, 'Ops');
    const flow = new IdempotentEventFlow(stack, 'Orders', { alarmActions: [new cloudwatchActions.SnsAction(ops)] });
    // WHEN
    addSubscriber(flow, 'Billing');
    addSubscriber(flow, 'Shipping');
    // THEN
    const alarms = alarmsProperties(Template.fromStack(stack));
    expect(alarms).toHaveLength(2 + 5 * 2);
    for (const alarm of alarms) {
      expect(alarm.AlarmActions).toEqual([r(stack, ops.topicArn)]);
      expect(alarm.OKActions).toEqual([r(stack, ops.topicArn)]);
    }
  });

  test('creates the alarms without actions by default, and warns on the flow that nobody is notified', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    addSubscriber(flow, 'Billing');
    // THEN
    for (const alarm of alarmsProperties(Template.fromStack(stack))) {
      expect(alarm.AlarmActions).toBeUndefined();
      expect(alarm.OKActions).toBeUndefined();
    }
    const warnings = Annotations.fromStack(stack).findWarning(`/${stack.stackName}/Orders`, Match.stringLikeRegexp('alarmActions'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]!.entry.data).toMatch(/no alarmActions.*notif/i);
  });

  test('does not warn about alarm actions when alarmActions are given', () => {
    const stack = newStack();
    new IdempotentEventFlow(stack, 'Flow', { alarmActions: [new cloudwatchActions.SnsAction(new sns.Topic(stack, 'Ops'))] });
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('alarmActions'))).toEqual([]);
  });

  test('alarms when the oldest message is 300 seconds old by default', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    addSubscriber(flow, 'Billing');
    // THEN
    Template.fromStack(stack).hasResourceProperties('AWS::CloudWatch::Alarm', {
      MetricName: 'ApproximateAgeOfOldestMessage',
      Threshold: 300,
    });
  });

  test('alarms when the oldest message reaches maxMessageAge', () => {
    // GIVEN
    const { stack, flow } = fixture({ maxMessageAge: Duration.minutes(15) });
    // WHEN
    addSubscriber(flow, 'Billing');
    addSubscriber(flow, 'Shipping');
    // THEN
    // the work queues' (the dead-letter queues' oldest message is the DeadLetterExpiring alarm's, on its own threshold)
    const ageAlarms = alarmsProperties(Template.fromStack(stack)).filter((a) => a.MetricName === 'ApproximateAgeOfOldestMessage' && String(a.AlarmDescription).includes('the oldest message waited'));
    expect(ageAlarms.map((a) => a.Threshold)).toEqual([900, 900]);
  });
});

describe('IdempotentEventFlow: removal policy', () => {
  const STATEFUL = ['AWS::DynamoDB::Table', 'AWS::SQS::Queue', 'AWS::Logs::LogGroup'];

  function flowWithEverything(props?: IdempotentEventFlowProps): Template {
    const { stack, flow } = fixture(props);
    addSubscriber(flow, 'Billing');
    flow.addProducer('PlaceOrder', { entry: HANDLER_ENTRY });
    return Template.fromStack(stack);
  }

  test('retains the tables, queues, log groups and the key by default', () => {
    // WHEN
    const template = flowWithEverything();
    // THEN
    for (const type of [...STATEFUL, 'AWS::KMS::Key']) {
      expect(Object.keys(template.findResources(type)).length, type).toBeGreaterThan(0);
      expect(Object.keys(template.findResources(type, { DeletionPolicy: Match.not('Retain') })), type).toEqual([]);
    }
  });

  test('applies removalPolicy DESTROY to the tables, queues and log groups of the relay, subscribers and producers', () => {
    // WHEN
    const template = flowWithEverything({ removalPolicy: RemovalPolicy.DESTROY });
    // THEN
    const counts = Object.fromEntries(STATEFUL.map((type) => [type, Object.keys(template.findResources(type, { DeletionPolicy: 'Delete' })).length]));
    expect(counts).toEqual({ 'AWS::DynamoDB::Table': 2, 'AWS::SQS::Queue': 4, 'AWS::Logs::LogGroup': 3 });
    for (const type of STATEFUL) {
      expect(Object.keys(template.findResources(type, { DeletionPolicy: Match.not('Delete') })), type).toEqual([]);
    }
    // The key is documented as retained on stack deletion whatever removalPolicy says.
    template.hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain' });
  });
});

describe('IdempotentEventFlow: existing outbox table', () => {
  function existingTable(stack: Stack): dynamodb.Table {
    return new dynamodb.Table(stack, 'SingleTable', {
      partitionKey: { name: 'PK', type: dynamodb.AttributeType.STRING },
      sortKey: { name: 'SK', type: dynamodb.AttributeType.STRING },
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
    });
  }

  test('relays the stream of the given table and creates no table of its own', () => {
    // GIVEN
    const stack = newStack();
    const table = existingTable(stack);
    const outboxTable = OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK', sortKeyName: 'SK' });
    // WHEN
    const flow = new IdempotentEventFlow(stack, 'Orders', { outboxTable });
    // THEN
    const template = Template.fromStack(stack);
    expect(flow.outboxTable).toBe(outboxTable);
    expect(flow.node.tryFindChild('OutboxTable')).toBeUndefined();
    template.resourceCountIs('AWS::DynamoDB::Table', 1);
    expect(onlyProperties(template, 'AWS::Pipes::Pipe').Source).toEqual({ 'Fn::GetAtt': [logicalIdOf(table), 'StreamArn'] });
  });

  test('grants and describes the given table to producers', () => {
    // GIVEN
    const stack = newStack();
    const table = existingTable(stack);
    const outboxTable = OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'PK', sortKeyName: 'SK', eventSource: 'urn:orders' });
    const flow = new IdempotentEventFlow(stack, 'Orders', { outboxTable });
    const role = new iam.Role(stack, 'Producer', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    // WHEN
    flow.grantAppendEvents(role);
    // THEN
    expect(policyStatements(stack, Template.fromStack(stack), role)).toEqual([
      { Sid: 'IdempotentEventFlowGrantAppendEvents', Action: 'dynamodb:PutItem', Effect: 'Allow', Resource: r(stack, table.tableArn), Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['OUTBOX#*'] } } },
    ]);
    expect(r(stack, flow.producerEnvironment)).toEqual({
      [ENV.OUTBOX_TABLE_NAME]: r(stack, table.tableName),
      [ENV.OUTBOX_PARTITION_KEY_NAME]: 'PK',
      [ENV.OUTBOX_SORT_KEY_NAME]: 'SK',
      [ENV.OUTBOX_EVENT_RETENTION_SECONDS]: String(7 * 86400),
      [ENV.EVENT_SOURCE]: 'urn:orders',
      [ENV.MAX_EVENT_BYTES]: '26214',
    });
  });

  test('encrypts the topic and queues with the given key instead of creating one', () => {
    // GIVEN
    const stack = newStack();
    const key = new kms.Key(stack, 'Key', { enableKeyRotation: true });
    // WHEN
    const flow = new IdempotentEventFlow(stack, 'Orders', { encryptionKey: key });
    addSubscriber(flow, 'Billing');
    // THEN
    const template = Template.fromStack(stack);
    expect(flow.encryptionKey).toBe(key);
    template.resourceCountIs('AWS::KMS::Key', 1);
    expect(onlyProperties(template, 'AWS::SNS::Topic').KmsMasterKeyId).toEqual(r(stack, key.keyArn));
    template.allResourcesProperties('AWS::SQS::Queue', { KmsMasterKeyId: r(stack, key.keyArn) });
  });
});

describe('IdempotentEventFlow: validation', () => {
  const build = (props: IdempotentEventFlowProps) => () => fixture(props);

  test('fails if eventSource is combined with outboxTable', () => {
    // GIVEN
    const stack = newStack();
    const table = new dynamodb.Table(stack, 'Table', {
      partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING },
      stream: dynamodb.StreamViewType.NEW_IMAGE,
    });
    const outboxTable = OutboxTable.fromTableAttributes(stack, 'Outbox', { table, partitionKeyName: 'pk' });
    // THEN
    expect(() => new IdempotentEventFlow(stack, 'Orders', { outboxTable, eventSource: 'urn:orders' })).toThrow(
      /IdempotentEventFlow 'Orders': eventSource can not be combined with outboxTable; set eventSource on the outbox table/,
    );
  });
  test('fails if relayBatchSize is above 10', () => {
    expect(build({ relayBatchSize: 11 })).toThrow(/IdempotentEventFlow 'Orders': relayBatchSize must be 10 or less, but 11 was provided/);
  });
  test('fails if relayBatchSize is below 1', () => {
    expect(build({ relayBatchSize: 0 })).toThrow(/IdempotentEventFlow 'Orders': relayBatchSize must be 1 or more, but 0 was provided/);
  });
  test('fails if relayBatchSize is not a whole number', () => {
    expect(build({ relayBatchSize: 2.5 })).toThrow(/relayBatchSize must be a whole number, but 2.5 was provided/);
  });
  test('fails if relayMaximumRetryAttempts is above 185', () => {
    expect(build({ relayMaximumRetryAttempts: 186 })).toThrow(
      /IdempotentEventFlow 'Orders': relayMaximumRetryAttempts must be 185 or less, but 186 was provided/,
    );
  });
  test('fails if relayMaximumRetryAttempts is negative', () => {
    expect(build({ relayMaximumRetryAttempts: -1 })).toThrow(/relayMaximumRetryAttempts must be 0 or more, but -1 was provided/);
  });
  test('fails if relayMaximumRecordAge is 24 hours', () => {
    expect(build({ relayMaximumRecordAge: Duration.hours(24) })).toThrow(
      /IdempotentEventFlow 'Orders': relayMaximumRecordAge must be 23 hours or less, but 1 day was provided/,
    );
  });
  test('fails if relayMaximumRecordAge is below 1 minute', () => {
    expect(build({ relayMaximumRecordAge: Duration.seconds(59) })).toThrow(
      /relayMaximumRecordAge must be 1 minute or more, but 59 seconds was provided/,
    );
  });
  test('fails if maxMessageAge is above 14 days, before any subscriber is added', () => {
    expect(build({ maxMessageAge: Duration.days(15) })).toThrow(
      /IdempotentEventFlow 'Orders': maxMessageAge must be 14 days or less, but 15 days was provided/,
    );
  });
  test('fails if maxMessageAge is below 1 minute', () => {
    expect(build({ maxMessageAge: Duration.seconds(30) })).toThrow(/maxMessageAge must be 1 minute or more, but 30 seconds was provided/);
  });
  test('accepts the bounds', () => {
    expect(build({ relayBatchSize: 1, relayMaximumRetryAttempts: 0, relayMaximumRecordAge: Duration.minutes(1), maxMessageAge: Duration.minutes(1) })).not.toThrow();
    expect(build({ relayBatchSize: 10, relayMaximumRetryAttempts: 185, relayMaximumRecordAge: Duration.hours(23), maxMessageAge: Duration.days(14) })).not.toThrow();
  });
});

describe('IdempotentEventFlow: template snapshot', () => {
  test('synthesizes a minimal flow with one subscriber to the recorded template', () => {
    // GIVEN
    const { stack, flow } = fixture();
    // WHEN
    addSubscriber(flow, 'Billing');
    // THEN asset hashes depend on the bundled files, not on the constructs: replace them
    const json = JSON.stringify(Template.fromStack(stack).toJSON(), null, 2).replace(/\b[0-9a-f]{64}\b/g, '<asset-hash>');
    expect(json).toContain('"S3Key": "<asset-hash>.zip"');
    // and what the snapshot records of IAM: every statement of the flow's roles is marked as the library's (its Sid),
    // but the X-Ray statement aws-lambda adds for tracing
    const template = Template.fromStack(stack);
    const statements = [
      ...Object.values(template.findResources('AWS::IAM::Policy')).flatMap((policy) => policy.Properties.PolicyDocument.Statement as { Sid?: string; Action: string | string[] }[]),
      ...Object.values(template.findResources('AWS::IAM::Role')).flatMap((role) =>
        ((role.Properties.Policies ?? []) as { PolicyDocument: { Statement: { Sid?: string; Action: string | string[] }[] } }[]).flatMap((inline) => inline.PolicyDocument.Statement),
      ),
    ];
    const unmarked = statements.filter((statement) => libraryStatementOrigin(statement.Sid) === undefined);
    expect(unmarked.flatMap((statement) => [statement.Action].flat()).sort()).toEqual(['xray:PutTelemetryRecords', 'xray:PutTraceSegments']);
    expect(new Set(statements.map((statement) => libraryStatementOrigin(statement.Sid)))).toEqual(new Set(['Function', 'grantRecordMessages', 'ConsumerFunction', 'Subscriber', 'OutboxRelay', undefined]));
    expect(JSON.parse(json)).toMatchSnapshot();
  });
});
