import type { App, CfnResource } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as sns from 'aws-cdk-lib/aws-sns';
import * as cxapi from 'aws-cdk-lib/cx-api';
import { beforeAll, describe, expect, test } from 'vitest';
import { addExampleStacks } from '../../example/example-app';
import type { LoyaltyExampleStack } from '../../example/loyalty-example-stack';
import type { OrdersExampleStack } from '../../example/orders-example-stack';
import { ENV } from '../../lambda/contract/environment';
import { ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import type { OrderedRelay, OrderedSubscriber, ProducerFunction, Subscriber, SubscriberAlarms } from '../../lib';
import { assertCompliant, checkCompliance, type ComplianceResult, complianceApp, formatComplianceResult } from '../support/compliance';

// The example app of bin/example-app.ts (both accounts' stacks, example/example-app.ts), synthesized once with both cdk-nag packs and strict CloudFormation validation.
let app: App;
let stack: OrdersExampleStack;
let loyaltyStack: LoyaltyExampleStack;
let loyaltyTemplate: Template;
let result: ComplianceResult;
let template: Template;

beforeAll(() => {
  app = complianceApp({ regulatoryPacks: true });
  ({ orders: stack, loyalty: loyaltyStack } = addExampleStacks(app));
  result = checkCompliance(app);
  // synth() is cached: this is the assembly checkCompliance validated.
  template = Template.fromJSON(app.synth().getStackByName(stack.stackName).template);
  loyaltyTemplate = Template.fromJSON(app.synth().getStackByName(loyaltyStack.stackName).template);
});

function r(value: unknown): unknown {
  return stack.resolve(value);
}

/** Statements of the default policy attached to the role named `roleName`. */
function roleStatements(roleName: string): Array<{ Action: string | string[]; Resource: unknown }> {
  const policies = Object.values(template.findResources('AWS::IAM::Policy', { Properties: { Roles: [r(roleName)] } }));
  expect(policies).toHaveLength(1);
  return (policies[0] as { Properties: { PolicyDocument: { Statement: Array<{ Action: string | string[]; Resource: unknown }> } } }).Properties
    .PolicyDocument.Statement;
}

function subscriber(name: string): Subscriber {
  const found = stack.flow.subscribers.find((s) => s.subscriberName === name);
  expect(found, `subscriber ${name}`).toBeDefined();
  return found as Subscriber;
}

/** The environment variables of a subscriber's function. */
function environmentOf(name: string): Record<string, unknown> {
  const fn = subscriber(name).consumerFunction.lambdaFunction.node.defaultChild as CfnResource;
  const resource = template.toJSON().Resources[stack.getLogicalId(fn)] as { Properties: { Environment: { Variables: Record<string, unknown> } } };
  return resource.Properties.Environment.Variables;
}

/** The body filter policy of a subscriber's subscription (undefined: none). */
function filterPolicyOf(name: string): unknown {
  const subscriptions = Object.values(
    template.findResources('AWS::SNS::Subscription', { Properties: { Endpoint: r(subscriber(name).queue.queueArn) } }),
  ) as Array<{ Properties: Record<string, unknown> }>;
  expect(subscriptions).toHaveLength(1);
  return subscriptions[0].Properties.FilterPolicy;
}

/** For a table of the stack: every action any role is allowed on it (or on its indexes), keyed by the role's reference. */
function grantsOnTable(tableId: string): Record<string, string[]> {
  const logicalId = stack.getLogicalId((stack.node.findChild(tableId) as dynamodb.Table).node.defaultChild as CfnResource);
  const byRole: Record<string, string[]> = {};
  const policies = Object.values(template.findResources('AWS::IAM::Policy')) as Array<{
    Properties: { Roles: unknown[]; PolicyDocument: { Statement: Array<{ Action: string | string[]; Resource: unknown }> } };
  }>;
  for (const policy of policies) {
    for (const [action, resource] of grants(policy.Properties.PolicyDocument.Statement)) {
      if (!JSON.stringify(resource).includes(`"${logicalId}"`)) continue;
      for (const role of policy.Properties.Roles) (byRole[JSON.stringify(role)] ??= []).push(action);
    }
  }
  for (const actions of Object.values(byRole)) actions.sort();
  return byRole;
}

function roleKey(name: string): string {
  return JSON.stringify(r(subscriber(name).consumerFunction.role.roleName));
}

function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}

/** Every (action, resource) pair the statements allow, whatever the policy minimization merged. */
function grants(statements: Array<{ Action: string | string[]; Resource: unknown }>): Array<[string, unknown]> {
  return statements.flatMap((s) => asList(s.Action).flatMap((action) => asList(s.Resource).map((resource): [string, unknown] => [action, resource])));
}

describe('example app: compliance', () => {
  test('has no unanswered AwsSolutions, Serverless, NIST 800-53 R5, HIPAA Security or PCI DSS 3.2.1 findings', () => {
    expect(result.unansweredFindings, formatComplianceResult(result)).toEqual([]);
    // Every pack really ran: each answered findings of its own.
    expect(new Set(result.acknowledged.map((a) => a.source))).toEqual(
      new Set(['AwsSolutions', 'Serverless', 'NIST.800.53.R5', 'HIPAA.Security', 'PCI.DSS.321']),
    );
  });

  test('answers the regulatory rules the docs say it answers, and only by acknowledgement where the docs say so', () => {
    const rules = (suffix: string) => new Set(result.acknowledged.filter((a) => a.ruleId.endsWith(`-${suffix}`)).map((a) => a.source));
    // acknowledged with reasons: inline policies (library and the example's operator role), Lambda DLQs
    expect(rules('IAMNoInlinePolicy')).toEqual(new Set(['NIST.800.53.R5', 'HIPAA.Security', 'PCI.DSS.321']));
    expect(rules('LambdaDLQ')).toEqual(new Set(['Serverless', 'NIST.800.53.R5', 'HIPAA.Security']));
    // opt-in props the example leaves off, acknowledged in the example
    expect(rules('LambdaConcurrency')).toEqual(new Set(['NIST.800.53.R5', 'HIPAA.Security']));
    expect(rules('LambdaInsideVPC')).toEqual(new Set(['NIST.800.53.R5', 'HIPAA.Security', 'PCI.DSS.321']));
    // fixed, not acknowledged: log groups under the logs key, every table in the backup plan
    expect(rules('CloudWatchLogGroupEncrypted')).toEqual(new Set());
    expect(rules('DynamoDBInBackupPlan')).toEqual(new Set());
    const logGroups = Object.values(template.findResources('AWS::Logs::LogGroup')) as Array<{ Properties: { KmsKeyId?: unknown } }>;
    // the flow's relay and six functions, the ordered relay's pipe and fan-out function, the fulfilment producer and
    // the order-tracking consumer
    expect(logGroups.length).toBe(11);
    for (const group of logGroups) expect(group.Properties.KmsKeyId).toBeDefined();
  });

  test('has no CloudFormation validation findings in strict mode', () => {
    expect(app.node.tryGetContext(cxapi.STRICT_CFN_VALIDATE_ERRORS)).toBe(true);
    expect(app.node.tryGetContext(cxapi.VALIDATE_AGAINST_DEFAULT_RULES)).toBe(true);
    expect(result.cfnValidationErrors, formatComplianceResult(result)).toEqual([]);
  });

  test('gives a reason for every acknowledgement', () => {
    expect(result.acknowledgementsWithoutReason).toEqual([]);
    expect(result.acknowledged.filter((a) => a.reason.trim().length < 20)).toEqual([]);
  });

  test('passes assertCompliant', () => {
    expect(() => assertCompliant(result)).not.toThrow();
  });
});

describe('example app: wiring', () => {
  test('delivers to shipping every OrderPlaced event, with no filter on data (the flow offloads large events, whose envelope has none)', () => {
    // GIVEN
    const shipping = stack.flow.subscribers.find((s) => s.subscriberName === 'Shipping')!;
    // THEN
    template.hasResourceProperties('AWS::SNS::Subscription', {
      Endpoint: r(shipping.queue.queueArn),
      FilterPolicyScope: 'MessageBody',
      FilterPolicy: { type: ['com.example.orders.OrderPlaced'] },
    });
  });

  test('offloads large events: a payload bucket, read by every subscriber (the loyalty account through its bucket and key policy grants)', () => {
    template.resourceCountIs('AWS::S3::Bucket', 1);
    template.hasResourceProperties('AWS::S3::BucketPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Sid: 'PayloadGetByLoyaltyFrom222222222222', Action: 's3:GetObject' })]) },
    });
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Sid: 'PayloadDecryptByLoyaltyFrom222222222222', Action: 'kms:Decrypt' })]) },
    });
  });

  test('delivers only OrderPlaced events to billing, invoicing and notifications, and only OrderBilled to customer stats', () => {
    for (const name of ['Billing', 'Invoicing', 'Notifications']) {
      expect(filterPolicyOf(name), name).toEqual({ type: ['com.example.orders.OrderPlaced'] });
    }
    expect(filterPolicyOf('CustomerStats')).toEqual({ type: ['com.example.billing.OrderBilled'] });
  });

  test('runs each subscriber in its processing mode', () => {
    const modes: Record<string, string> = {
      Billing: 'transactional',
      Invoicing: 'multi-step',
      Notifications: 'lease',
      Shipping: 'transactional',
      CustomerStats: 'aggregate',
    };
    // the flow's subscribers include Loyalty, of the loyalty account's stack (its function is in that stack's template)
    expect(stack.flow.subscribers.map((s) => s.subscriberName).sort()).toEqual([...Object.keys(modes), 'Loyalty'].sort());
    expect(loyaltyStack.subscriber.processingMode).toBe('transactional');
    for (const [name, mode] of Object.entries(modes)) {
      expect(subscriber(name).processingMode, name).toBe(mode);
      expect(environmentOf(name)[ENV.PROCESSING_MODE], name).toBe(mode);
    }
  });

  test('lets billing, and only billing, append the events it emits to the outbox', () => {
    // GIVEN
    const outboxArn = r(stack.flow.outboxTable.table.tableArn);
    // THEN
    expect(environmentOf('Billing')).toMatchObject(r(stack.flow.producerEnvironment) as Record<string, unknown>);
    const billingGrants = grants(roleStatements(subscriber('Billing').consumerFunction.role.roleName));
    expect(billingGrants.filter(([, resource]) => JSON.stringify(resource) === JSON.stringify(outboxArn))).toEqual([['dynamodb:PutItem', outboxArn]]);
    for (const name of ['Invoicing', 'Notifications', 'Shipping', 'CustomerStats']) {
      expect(environmentOf(name)[ENV.OUTBOX_TABLE_NAME], name).toBeUndefined();
      expect(JSON.stringify(roleStatements(subscriber(name).consumerFunction.role.roleName)), name).not.toContain(JSON.stringify(outboxArn));
    }
  });

  test('gives customer stats (aggregate) no inbox table', () => {
    // GIVEN
    const stats = subscriber('CustomerStats');
    // THEN
    expect(stats.inboxTable).toBeUndefined();
    expect(environmentOf('CustomerStats')[ENV.INBOX_TABLE_NAME]).toBeUndefined();
    expect(stats.node.tryFindChild('InboxTable')).toBeUndefined();
    // one inbox table for each of the other four subscribers, and no grant of the customer stats role names one
    const inboxIds = Object.keys(template.findResources('AWS::DynamoDB::Table')).filter((id) => id.includes('InboxTable'));
    expect(inboxIds).toHaveLength(4);
    const statsPolicy = JSON.stringify(roleStatements(stats.consumerFunction.role.roleName));
    for (const id of inboxIds) expect(statsPolicy).not.toContain(id);
  });

  test('alarms on blocked messages for the lease and multi-step subscribers only', () => {
    for (const name of ['Invoicing', 'Notifications', 'Billing', 'Shipping', 'CustomerStats']) {
      const alarms = subscriber(name).node.findChild('Alarms') as SubscriberAlarms;
      const expected = name === 'Invoicing' || name === 'Notifications';
      expect(alarms.blockedAlarm !== undefined, name).toBe(expected);
      const blocked = template.findResources('AWS::CloudWatch::Alarm', {
        Properties: { MetricName: 'Blocked', Dimensions: Match.arrayWith([{ Name: 'Subscriber', Value: name }]) },
      });
      expect(Object.keys(blocked), name).toHaveLength(expected ? 1 : 0);
    }
  });

  test('gives each function exactly the actions it needs on the stand-in and stats tables', () => {
    expect(grantsOnTable('AccountingInvoicesTable')).toEqual({ [roleKey('Invoicing')]: ['dynamodb:PutItem'] });
    expect(grantsOnTable('MailTable')).toEqual({ [roleKey('Invoicing')]: ['dynamodb:UpdateItem'], [roleKey('Notifications')]: ['dynamodb:UpdateItem'] });
    expect(grantsOnTable('CustomerStatsTable')).toEqual({ [roleKey('CustomerStats')]: ['dynamodb:GetItem', 'dynamodb:PutItem'] });
  });

  test('lets the billing function UpdateItem the ledger table and nothing else on it', () => {
    // GIVEN
    const billing = stack.flow.subscribers.find((s) => s.subscriberName === 'Billing')!;
    const ledgerArn = r((stack.node.findChild('LedgerTable') as dynamodb.Table).tableArn);
    // THEN
    const allowed = grants(roleStatements(billing.consumerFunction.role.roleName));
    expect(allowed.filter(([, resource]) => JSON.stringify(resource) === JSON.stringify(ledgerArn))).toEqual([['dynamodb:UpdateItem', ledgerArn]]);
    // and UpdateItem on no other resource
    expect(allowed.filter(([action]) => action === 'dynamodb:UpdateItem')).toEqual([['dynamodb:UpdateItem', ledgerArn]]);
  });

  test('gives the shipping function no access to the ledger table', () => {
    // GIVEN
    const shipping = stack.flow.subscribers.find((s) => s.subscriberName === 'Shipping')!;
    const ledger = stack.node.findChild('LedgerTable') as dynamodb.Table;
    // THEN
    const ledgerId = stack.getLogicalId(ledger.node.defaultChild as dynamodb.CfnTable);
    expect(JSON.stringify(roleStatements(shipping.consumerFunction.role.roleName))).not.toContain(ledgerId);
  });

  test('deploys one dashboard with the relay and the five subscribers, each with its end-to-end latency', () => {
    const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard')) as Array<{ Properties: { DashboardBody: { 'Fn::Join': [string, unknown[]] } } }>;
    expect(dashboards).toHaveLength(1);
    const body = dashboards[0]!.Properties.DashboardBody['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : '"token"')).join('');
    for (const name of ['Billing', 'Invoicing', 'Shipping', 'Notifications', 'CustomerStats']) expect(body).toContain(`${name}: end-to-end latency (ms)`);
    expect(body).toContain('Pipe executions');
  });

  test('notifies the ops topic from every alarm of the flow', () => {
    // GIVEN
    const ops = stack.node.findChild('OpsAlarms') as sns.Topic;
    // THEN
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm')) as Array<{ Properties: Record<string, unknown> }>;
    // relay: 2; Billing, Shipping, CustomerStats: 5 each; Invoicing, Notifications: 6 each (with Blocked); and each
    // subscriber's EndToEndLatency (maxEndToEndLatency); the ordered relay: 4 (its relay and pipe dead-letter queues, its
    // pipe's failed executions, a relay dead letter about to expire); OrderTracking: 5 (its dead-letter queue, its
    // function's errors, a held aggregate, its oldest message's age, a dead letter about to expire)
    expect(alarms).toHaveLength(2 + 5 * 3 + 6 * 2 + 5 + 4 + 5);
    // every one of them is in flow.alarms: the ordered relay and OrderTracking are registered with the flow
    expect(stack.flow.alarms).toHaveLength(alarms.length);
    for (const alarm of alarms) {
      expect(alarm.Properties.AlarmActions).toEqual([r(ops.topicArn)]);
      expect(alarm.Properties.OKActions).toEqual([r(ops.topicArn)]);
    }
  });

  test("lets CloudWatch use the ops topic's key only for alarms of this account and region", () => {
    const key = stack.node.findChild('OpsAlarmsKey') as kms.Key;
    const keyResource = template.toJSON().Resources[stack.getLogicalId(key.node.defaultChild as CfnResource)] as {
      Properties: { KeyPolicy: { Statement: Array<Record<string, unknown>> } };
    };
    const forCloudWatch = keyResource.Properties.KeyPolicy.Statement.filter(
      (s) => JSON.stringify(s.Principal).includes('cloudwatch.amazonaws.com'),
    );
    expect(forCloudWatch).toEqual([
      {
        Sid: 'AllowCloudWatchAlarmsOfThisAccountToPublish',
        Effect: 'Allow',
        Principal: { Service: 'cloudwatch.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        Resource: '*',
        Condition: {
          // the example's explicit environment (example/example-app.ts): CDK writes its account and Region literally
          StringEquals: { 'aws:SourceAccount': '111111111111' },
          ArnLike: { 'aws:SourceArn': 'arn:aws:cloudwatch:eu-west-1:111111111111:alarm:*' },
        },
      },
    ]);
  });

  test('lets the producer append events, put orders and read an order back (to answer a retried command), nothing more', () => {
    // GIVEN
    const placeOrder = stack.node.findChild('Orders').node.findChild('PlaceOrder') as ProducerFunction;
    const ordersArn = r((stack.node.findChild('OrdersTable') as dynamodb.Table).tableArn);
    // THEN
    const dynamoGrants = grants(roleStatements(placeOrder.role.roleName)).filter(([action]) => action.startsWith('dynamodb:'));
    expect(dynamoGrants).toEqual([
      ['dynamodb:PutItem', r(stack.flow.outboxTable.table.tableArn)],
      ['dynamodb:GetItem', ordersArn],
      ['dynamodb:PutItem', ordersArn],
    ]);
  });
});

describe('example app: the ordered path', () => {
  const relay = (): OrderedRelay => stack.node.findChild('OrderedRelay') as OrderedRelay;
  const orderTracking = (): OrderedSubscriber => stack.node.findChild('OrderTracking') as OrderedSubscriber;

  test("the outbox stream's second reader is a pipe to the SQS FIFO relay queue whose message group is the order (the aggregate attribute of the head item) and whose deduplication id is the event id", () => {
    const pipes = Object.values(template.findResources('AWS::Pipes::Pipe')) as Array<{ Properties: Record<string, unknown> }>;
    // two readers of the outbox stream, as many as a shard serves: the standard relay and the ordered relay
    expect(pipes.map((pipe) => pipe.Properties.Source)).toEqual([r(stack.flow.outboxTable.tableStreamArn), r(stack.flow.outboxTable.tableStreamArn)]);
    // the head item OrderedOutbox writes carries the aggregate (the order id) in this attribute
    expect(ORDERED_OUTBOX_ITEM.AGGREGATE_ATTRIBUTE).toBe('iefAggregateId');
    template.hasResourceProperties('AWS::Pipes::Pipe', {
      Source: r(stack.flow.outboxTable.tableStreamArn),
      Target: r(relay().relayQueue.queueArn),
      SourceParameters: Match.objectLike({ DynamoDBStreamParameters: Match.objectLike({ ParallelizationFactor: 1, BatchSize: 1 }) }),
      TargetParameters: Match.objectLike({
        SqsQueueParameters: { MessageGroupId: '$.dynamodb.NewImage.iefAggregateId.S', MessageDeduplicationId: '$.dynamodb.NewImage.iefEventId.S' },
      }),
    });
    const queues = template.toJSON().Resources as Record<string, { Properties: Record<string, unknown> }>;
    const relayQueue = queues[stack.getLogicalId(relay().relayQueue.node.defaultChild as CfnResource)]!;
    expect(relayQueue.Properties).toMatchObject({ FifoQueue: true, ContentBasedDeduplication: false, RedrivePolicy: { maxReceiveCount: 5 } });
  });

  test("the fan-out function publishes to the SNS FIFO topic, to which OrderTracking's own SQS FIFO queue (with a FIFO dead-letter queue) is subscribed with raw delivery", () => {
    const topicArn = r(relay().topic.topicArn);
    template.hasResourceProperties('AWS::SNS::Topic', { FifoTopic: true, ContentBasedDeduplication: false, KmsMasterKeyId: Match.anyValue() });
    template.hasResourceProperties('AWS::SNS::Subscription', { TopicArn: topicArn, Protocol: 'sqs', Endpoint: r(orderTracking().queue.queueArn), RawMessageDelivery: true });
    const resources = template.toJSON().Resources as Record<string, { Properties: Record<string, unknown> }>;
    const queue = resources[stack.getLogicalId(orderTracking().queue.node.defaultChild as CfnResource)]!;
    const deadLetterQueue = resources[stack.getLogicalId(orderTracking().deadLetterQueue.node.defaultChild as CfnResource)]!;
    expect(queue.Properties).toMatchObject({ FifoQueue: true, RedrivePolicy: { deadLetterTargetArn: r(orderTracking().deadLetterQueue.queueArn) } });
    expect(deadLetterQueue.Properties.FifoQueue).toBe(true);
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', { EventSourceArn: r(orderTracking().queue.queueArn), FunctionResponseTypes: ['ReportBatchItemFailures'] });
  });

  test('OrderTracking runs the transactional runtime under its subscriber name and may only UpdateItem the tracking table; the fulfilment producer may append ordered events and UpdateItem the fulfilment table, nothing more', () => {
    const consumer = orderTracking().consumerFunction;
    const consumerResource = template.toJSON().Resources[stack.getLogicalId(consumer.lambdaFunction.node.defaultChild as CfnResource)] as { Properties: { Environment: { Variables: Record<string, unknown> } } };
    expect(consumerResource.Properties.Environment.Variables).toMatchObject({ [ENV.SUBSCRIBER_NAME]: 'OrderTracking', [ENV.PROCESSING_MODE]: 'transactional' });
    expect(grantsOnTable('TrackingTable')).toEqual({ [JSON.stringify(r(consumer.role.roleName))]: ['dynamodb:UpdateItem'] });

    const fulfilment = stack.node.findChild('Orders').node.findChild('Fulfilment') as ProducerFunction;
    const dynamoGrants = grants(roleStatements(fulfilment.role.roleName)).filter(([action]) => action.startsWith('dynamodb:'));
    const outboxArn = r(stack.flow.outboxTable.table.tableArn);
    const fulfilmentArn = r((stack.node.findChild('FulfilmentTable') as dynamodb.Table).tableArn);
    expect(dynamoGrants.map(([action, resource]) => `${action} ${JSON.stringify(resource)}`).sort()).toEqual(
      [`dynamodb:GetItem ${JSON.stringify(outboxArn)}`, `dynamodb:PutItem ${JSON.stringify(outboxArn)}`, `dynamodb:UpdateItem ${JSON.stringify(fulfilmentArn)}`].sort(),
    );
  });
});

describe('example app: the Loyalty subscriber in a second account', () => {
  const TOPIC_ARN = 'arn:aws:sns:eu-west-1:111111111111:IdempotentEventFlowExample-Orders-EventTopic-F6AA008B';
  const QUEUE_ARN = /^arn:aws:sqs:eu-west-1:222222222222:IdempotentEventFlowExampleLoyalty-Queue-[0-9A-F]{8}$/;

  test('the stacks are in the example environments: the flow in 111111111111, Loyalty in 222222222222, one Region', () => {
    expect([stack.account, stack.region]).toEqual(['111111111111', 'eu-west-1']);
    expect([loyaltyStack.account, loyaltyStack.region]).toEqual(['222222222222', 'eu-west-1']);
    // CDK deploys the orders stack first: the subscription needs the topic and its grant
    expect(loyaltyStack.dependencies).toContain(stack);
  });

  test("the orders topic's policy lets account 222222222222 subscribe exactly Loyalty's queue, over SQS, and grants nothing to '*'", () => {
    const policies = Object.values(template.findResources('AWS::SNS::TopicPolicy', { Properties: { Topics: [r(stack.flow.eventTopic.topicArn)] } })) as Array<{
      Properties: { PolicyDocument: { Statement: Array<Record<string, unknown>> } };
    }>;
    expect(policies).toHaveLength(1);
    const statements = policies[0].Properties.PolicyDocument.Statement;
    const allows = statements.filter((statement) => statement.Effect === 'Allow');
    expect(allows).toEqual([
      {
        Sid: expect.stringMatching(/^AllowSubscribeLoyalty[0-9a-f]{8}From222222222222$/),
        Effect: 'Allow',
        Principal: { AWS: 'arn:aws:iam::222222222222:root' },
        Action: 'sns:Subscribe',
        Resource: { Ref: stack.getLogicalId(stack.flow.eventTopic.topic.node.defaultChild as CfnResource) },
        Condition: { StringEquals: { 'sns:Protocol': 'sqs', 'sns:Endpoint': expect.stringMatching(QUEUE_ARN) } },
      },
    ]);
    // the queue the grant names is the one the loyalty stack creates
    const queueName = (loyaltyTemplate.findResources('AWS::SQS::Queue', { Properties: { QueueName: Match.stringLikeRegexp('-Queue-') } }));
    expect(Object.values(queueName).map((queue) => `arn:aws:sqs:eu-west-1:222222222222:${String((queue as { Properties: { QueueName: string } }).Properties.QueueName)}`)).toContain(
      (allows[0].Condition as { StringEquals: Record<string, string> }).StringEquals['sns:Endpoint'],
    );
  });

  test("Loyalty's queue policy (in its account) lets SNS send only for the orders topic", () => {
    loyaltyTemplate.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: loyaltyStack.getLogicalId(loyaltyStack.subscriber.queue.node.defaultChild as CfnResource) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: 'Allow',
            Principal: { Service: 'sns.amazonaws.com' },
            Action: 'sqs:SendMessage',
            Resource: { 'Fn::GetAtt': [loyaltyStack.getLogicalId(loyaltyStack.subscriber.queue.node.defaultChild as CfnResource), 'Arn'] },
            Condition: { ArnEquals: { 'aws:SourceArn': TOPIC_ARN } },
          },
        ]),
      },
    });
  });

  test("Loyalty's queue key is in its account and lets SNS use it only for the orders topic; the orders account is not in it", () => {
    const keys = Object.entries(loyaltyTemplate.findResources('AWS::KMS::Key')).filter(([logicalId]) => logicalId.startsWith('LoyaltyQueueKey'));
    expect(keys).toHaveLength(1);
    const statements = (keys[0][1] as { Properties: { KeyPolicy: { Statement: Array<Record<string, unknown>> } } }).Properties.KeyPolicy.Statement;
    expect(statements).toEqual([
      { Effect: 'Allow', Principal: { AWS: 'arn:aws:iam::222222222222:root' }, Action: 'kms:*', Resource: '*' },
      {
        Sid: 'AllowFlowTopicToDeliverToQueuesEncryptedWithThisKey',
        Effect: 'Allow',
        Principal: { Service: 'sns.amazonaws.com' },
        Action: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        Resource: '*',
        Condition: { ArnEquals: { 'aws:SourceArn': TOPIC_ARN } },
      },
    ]);
    expect(JSON.stringify(statements)).not.toContain('111111111111:root');
  });

  test("Loyalty's subscription is created by its own stack, to the orders topic by its literal ARN, raw, OrderBilled only, with a dead-letter queue (one Region)", () => {
    const queue = loyaltyStack.getLogicalId(loyaltyStack.subscriber.queue.node.defaultChild as CfnResource);
    loyaltyTemplate.resourceCountIs('AWS::SNS::Subscription', 1);
    loyaltyTemplate.hasResourceProperties('AWS::SNS::Subscription', {
      TopicArn: TOPIC_ARN,
      Protocol: 'sqs',
      Endpoint: { 'Fn::GetAtt': [queue, 'Arn'] },
      RawMessageDelivery: true,
      FilterPolicyScope: 'MessageBody',
      FilterPolicy: { type: ['com.example.billing.OrderBilled'] },
      RedrivePolicy: { deadLetterTargetArn: Match.anyValue() },
      Region: Match.absent(),
    });
    // the orders stack subscribes none of the loyalty account's queues itself
    expect(Object.values(template.findResources('AWS::SNS::Subscription')).map((s) => JSON.stringify(s))).not.toEqual(expect.arrayContaining([expect.stringContaining('222222222222')]));
  });

  test("Loyalty's alarms notify the loyalty account's ops topic; the orders dashboard names it and shows no graph of it", () => {
    const alarms = Object.values(loyaltyTemplate.findResources('AWS::CloudWatch::Alarm')) as Array<{ Properties: { AlarmActions: unknown[] } }>;
    expect(alarms.length).toBeGreaterThan(0);
    const opsTopic = loyaltyStack.getLogicalId(loyaltyStack.node.findChild('OpsAlarms').node.defaultChild as CfnResource);
    for (const alarm of alarms) expect(alarm.Properties.AlarmActions).toEqual([{ Ref: opsTopic }]);
    const body = JSON.stringify(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(body).toContain('Subscriber Loyalty (transactional), in aws://222222222222/eu-west-1');
  });
});
