/**
 * Issue 41: a subscriber in another account or Region than its flow, as first-class as one in another stack of the
 * same account. Pins the topic policy (the flow's account), the queue and key policies and the subscription (the
 * subscriber's), and the refusals at synth. (test/compliance/cross-account.test.ts runs cdk-nag and the CloudFormation
 * validation on the same layouts.)
 */
import { Annotations as CdkAnnotations, App, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as sns from 'aws-cdk-lib/aws-sns';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import { beforeAll, describe, expect, test } from 'vitest';
import { IdempotentEventFlow, Subscriber } from '../../lib';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';

const FLOW_ENV = { account: '111111111111', region: 'eu-west-1' };
const OTHER_ACCOUNT = { account: '222222222222', region: 'eu-west-1' };
const OTHER_REGION = { account: '111111111111', region: 'eu-central-1' };
const TOPIC_ARN = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, Match.stringLikeRegexp('^:sns:eu-west-1:111111111111:Payments-EventTopic-[A-F0-9]{8}$')]] };

function app(): App {
  return new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
}

interface Layout {
  readonly app: App;
  readonly payments: Stack;
  readonly flow: IdempotentEventFlow;
  readonly ledgerStack: Stack;
  readonly ledger: Subscriber;
  readonly reportsStack: Stack;
  readonly reports: Subscriber;
}

/** A flow in 111111111111/eu-west-1, Ledger in another account (with alarm actions of its own), Reports in another Region. */
function layout(): Layout {
  const a = app();
  const payments = new Stack(a, 'Payments', { env: FLOW_ENV });
  const flow = new IdempotentEventFlow(payments, 'Payments', { dashboard: true });
  CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
  const ledgerStack = new Stack(a, 'Ledger', { env: OTHER_ACCOUNT });
  const ledgerOps = new sns.Topic(ledgerStack, 'LedgerOps');
  const ledger = new Subscriber(ledgerStack, 'Ledger', { flow, entry: HANDLER_ENTRY, alarmActions: [new SnsAction(ledgerOps)] });
  const reportsStack = new Stack(a, 'Reports', { env: OTHER_REGION });
  const reports = new Subscriber(reportsStack, 'Reports', { flow, entry: HANDLER_ENTRY });
  return { app: a, payments, flow, ledgerStack, ledger, reportsStack, reports };
}

/** Every statement of the resources of `type` in `template`. */
function statements(template: Template, type: string, property: 'PolicyDocument' | 'KeyPolicy'): Array<Record<string, unknown>> {
  return Object.values(template.findResources(type)).flatMap((r) => r.Properties[property].Statement as Array<Record<string, unknown>>);
}

describe('a subscriber in another account', () => {
  let s: Layout;
  let flowTemplate: Template;
  let ledgerTemplate: Template;
  beforeAll(() => {
    s = layout();
    flowTemplate = Template.fromStack(s.payments);
    ledgerTemplate = Template.fromStack(s.ledgerStack);
  });

  test("the topic policy lets that account's root subscribe that queue only, over sqs", () => {
    const grants = statements(flowTemplate, 'AWS::SNS::TopicPolicy', 'PolicyDocument').filter((st) => st.Action === 'sns:Subscribe');
    expect(grants).toHaveLength(1);
    expect(grants[0]).toEqual({
      Sid: 'AllowSubscribeLedgeree69eb4aFrom222222222222', // the name's alphanumerics, 8 hex digits of its SHA-256, the account
      Effect: 'Allow',
      Action: 'sns:Subscribe',
      Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::222222222222:root']] } },
      Resource: { Ref: flowTemplate.toJSON() && s.payments.getLogicalId(s.flow.eventTopic.topic.node.defaultChild as never) },
      Condition: {
        StringEquals: {
          'sns:Protocol': 'sqs',
          'sns:Endpoint': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, expect.stringMatching(/^:sqs:eu-west-1:222222222222:Ledger-Queue-[A-F0-9]{8}$/)]] },
        },
      },
    });
  });

  test('the sns:Endpoint of the grant is the name the queue is created with', () => {
    const grant = statements(flowTemplate, 'AWS::SNS::TopicPolicy', 'PolicyDocument').find((st) => st.Action === 'sns:Subscribe')!;
    const endpoint = JSON.stringify((grant.Condition as { StringEquals: Record<string, unknown> }).StringEquals['sns:Endpoint']);
    const queue = ledgerTemplate.toJSON().Resources[s.ledgerStack.getLogicalId(s.ledger.queue.node.defaultChild as never)];
    expect(endpoint).toContain(`:sqs:eu-west-1:222222222222:${queue.Properties.QueueName}"`);
  });

  test('no Allow statement of either stack has a * principal', () => {
    for (const template of [flowTemplate, ledgerTemplate]) {
      const allows = [
        ...statements(template, 'AWS::SNS::TopicPolicy', 'PolicyDocument'),
        ...statements(template, 'AWS::SQS::QueuePolicy', 'PolicyDocument'),
        ...statements(template, 'AWS::KMS::Key', 'KeyPolicy'),
      ].filter((st) => st.Effect === 'Allow');
      expect(allows.length).toBeGreaterThan(0);
      for (const st of allows) expect(JSON.stringify(st.Principal)).not.toMatch(/"\*"/);
    }
  });

  test("the queue policy lets SNS send from the flow's topic only", () => {
    ledgerTemplate.hasResourceProperties('AWS::SQS::QueuePolicy', {
      Queues: [{ Ref: s.ledgerStack.getLogicalId(s.ledger.queue.node.defaultChild as never) }],
      PolicyDocument: {
        Statement: Match.arrayWith([
          {
            Effect: 'Allow',
            Action: 'sqs:SendMessage',
            Principal: { Service: 'sns.amazonaws.com' },
            Resource: { 'Fn::GetAtt': [s.ledgerStack.getLogicalId(s.ledger.queue.node.defaultChild as never), 'Arn'] },
            Condition: { ArnEquals: { 'aws:SourceArn': TOPIC_ARN } },
          },
        ]),
      },
    });
  });

  test("its queues and inbox are encrypted with a key of its own account that lets SNS deliver from the flow's topic", () => {
    const keys = ledgerTemplate.findResources('AWS::KMS::Key');
    expect(Object.keys(keys)).toHaveLength(1);
    const [keyId, key] = Object.entries(keys)[0];
    expect(key.DeletionPolicy).toBe('Retain');
    expect(key.Properties.EnableKeyRotation).toBe(true);
    expect(key.Properties.KeyPolicy.Statement).toContainEqual({
      Sid: 'AllowFlowTopicToDeliverToQueuesEncryptedWithThisKey',
      Effect: 'Allow',
      Action: ['kms:GenerateDataKey*', 'kms:Decrypt'],
      Principal: { Service: 'sns.amazonaws.com' },
      Resource: '*',
      Condition: { ArnEquals: { 'aws:SourceArn': expect.objectContaining({ 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, expect.stringMatching(/^:sns:eu-west-1:111111111111:/)]] }) } },
    });
    const queues = Object.values(ledgerTemplate.findResources('AWS::SQS::Queue'));
    expect(queues).toHaveLength(3);
    for (const queue of queues) expect(queue.Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    ledgerTemplate.hasResourceProperties('AWS::DynamoDB::Table', { SSESpecification: { KMSMasterKeyId: { 'Fn::GetAtt': [keyId, 'Arn'] } } });
    // nothing of the subscriber's is added to the flow's key
    expect(JSON.stringify(flowTemplate.findResources('AWS::KMS::Key'))).not.toContain('222222222222');
  });

  test("the subscription is created in its stack, in the topic's Region (the same here), with its dead-letter queue", () => {
    ledgerTemplate.hasResourceProperties('AWS::SNS::Subscription', {
      TopicArn: TOPIC_ARN,
      Protocol: 'sqs',
      Endpoint: { 'Fn::GetAtt': [s.ledgerStack.getLogicalId(s.ledger.queue.node.defaultChild as never), 'Arn'] },
      Region: Match.absent(),
      RedrivePolicy: { deadLetterTargetArn: { 'Fn::GetAtt': [s.ledgerStack.getLogicalId(s.ledger.subscriptionDeadLetterQueue!.node.defaultChild as never), 'Arn'] } },
    });
    flowTemplate.resourceCountIs('AWS::SNS::Subscription', 0);
  });

  test("its stack is deployed after the flow's, its alarms use its own actions, its Operator output names no outbox", () => {
    expect(s.ledgerStack.dependencies.map((d) => d.stackName)).toEqual(['Payments']);
    ledgerTemplate.resourceCountIs('AWS::CloudWatch::Alarm', 5);
    for (const alarm of Object.values(ledgerTemplate.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmActions).toEqual([{ Ref: s.ledgerStack.getLogicalId(s.ledgerStack.node.findChild('LedgerOps').node.defaultChild as never) }]);
    }
    const [output] = Object.entries(ledgerTemplate.findOutputs('*')).filter(([id]) => id.startsWith('LedgerOperator'));
    const value = JSON.stringify(output[1].Value);
    expect(value).toContain('"subscriberName\\":\\"Ledger\\"');
    expect(value).not.toContain('outboxTable');
    // but it names the flow's topic by its literal ARN: the flow's account and Region, which replay --flow-profile
    // proves the profile reaches (RX14-3)
    expect(value).toMatch(/topicArn\\":\\"arn:", *\{"Ref":"AWS::Partition"\},":sns:eu-west-1:111111111111:Payments-EventTopic-[A-F0-9]{8}/);
    expect(s.flow.subscribers).toEqual([s.ledger, s.reports]);
  });

  test("the flow's dashboard names it and says where its metrics are, without a graph of it", () => {
    const body = JSON.stringify(Object.values(flowTemplate.findResources('AWS::CloudWatch::Dashboard'))[0].Properties.DashboardBody);
    expect(body).toContain('## Subscriber Ledger (transactional), in aws://222222222222/eu-west-1');
    expect(body).toContain('Not shown here');
    expect(body).not.toContain('Ledger-Queue-');
  });
});

describe('a subscriber in another Region', () => {
  let s: Layout;
  let reportsTemplate: Template;
  beforeAll(() => {
    s = layout();
    reportsTemplate = Template.fromStack(s.reportsStack);
  });

  test("the subscription is created in the topic's Region, without a dead-letter queue (AWS wants it in the subscription's Region)", () => {
    reportsTemplate.hasResourceProperties('AWS::SNS::Subscription', { TopicArn: TOPIC_ARN, Region: 'eu-west-1', RedrivePolicy: Match.absent() });
    const [output] = Object.entries(reportsTemplate.findOutputs('*')).filter(([id]) => id.startsWith('ReportsOperator'));
    expect(JSON.stringify(output[1].Value)).not.toContain('subscriptionDeadLetterQueueUrl');
  });

  test('the same account needs no topic grant; its key lets SNS deliver from the topic; nobody is notified, and a warning says so', () => {
    const grants = statements(Template.fromStack(s.payments), 'AWS::SNS::TopicPolicy', 'PolicyDocument').filter((st) => JSON.stringify(st).includes('Reports'));
    expect(grants).toEqual([]);
    reportsTemplate.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'sns.amazonaws.com' }, Condition: { ArnEquals: { 'aws:SourceArn': TOPIC_ARN } } })]) },
    });
    Annotations.fromStack(s.reportsStack).hasWarning(
      '/Reports/Reports',
      Match.stringLikeRegexp("in aws://111111111111/eu-central-1, its flow in aws://111111111111/eu-west-1: the flow's alarmActions can not be used here"),
    );
  });
});

describe('subscriberAccounts and fromFlowAttributes: a flow and subscribers of different pipelines', () => {
  test('the flow lets each listed account subscribe queues of its own, over sqs', () => {
    const stack = new Stack(app(), 'Payments', { env: FLOW_ENV });
    new IdempotentEventFlow(stack, 'Payments', { subscriberAccounts: ['222222222222', '333333333333'] });
    const grants = statements(Template.fromStack(stack), 'AWS::SNS::TopicPolicy', 'PolicyDocument').filter((st) => st.Action === 'sns:Subscribe');
    expect(grants.map((g) => g.Sid)).toEqual(['AllowSubscribeFromAccount222222222222', 'AllowSubscribeFromAccount333333333333']);
    expect(grants[1]).toMatchObject({
      Principal: { AWS: { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':iam::333333333333:root']] } },
      Condition: {
        StringEquals: { 'sns:Protocol': 'sqs' },
        StringLike: { 'sns:Endpoint': { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':sqs:*:333333333333:*']] } },
      },
    });
  });

  test('a subscriber of the imported flow subscribes its queue in the topic\'s Region, with a key of its own', () => {
    const a = app();
    const ledgerStack = new Stack(a, 'Ledger', { env: { account: '222222222222', region: 'eu-central-1' } });
    const topicArn = 'arn:aws:sns:eu-west-1:111111111111:Payments-EventTopic-674D61B3';
    const flow = IdempotentEventFlow.fromFlowAttributes(ledgerStack, 'Payments', { topicArn });
    const ledger = new Subscriber(ledgerStack, 'Ledger', { flow, entry: HANDLER_ENTRY });
    const template = Template.fromStack(ledgerStack);
    template.hasResourceProperties('AWS::SNS::Subscription', { TopicArn: topicArn, Region: 'eu-west-1', Endpoint: { 'Fn::GetAtt': [ledgerStack.getLogicalId(ledger.queue.node.defaultChild as never), 'Arn'] } });
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'sns.amazonaws.com' }, Condition: { ArnEquals: { 'aws:SourceArn': topicArn } } })]) },
    });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'sqs:SendMessage', Condition: { ArnEquals: { 'aws:SourceArn': topicArn } } })]) },
    });
    // DeadLetters, Errors, OldestMessageAge, DeadLetterExpiring: no SubscriptionDeadLetters across Regions (no such queue)
    template.resourceCountIs('AWS::CloudWatch::Alarm', 4);
    template.resourceCountIs('AWS::SQS::Queue', 2);
    expect(ledger.subscriptionDeadLetterQueue).toBeUndefined();
    Annotations.fromStack(ledgerStack).hasWarning('/Ledger/Ledger', Match.stringLikeRegexp('alarms notify nobody'));
  });

  test.each([
    ['a token', (stack: Stack) => new sns.Topic(stack, 'T').topicArn, /topicArn must be a literal ARN/],
    ['not an SNS topic ARN', () => 'arn:aws:sqs:eu-west-1:111111111111:queue', /topicArn must be an SNS topic ARN .* but 'arn:aws:sqs:eu-west-1:111111111111:queue' was provided/],
    ['a FIFO topic', () => 'arn:aws:sns:eu-west-1:111111111111:Ordered.fifo', /topicArn must name a standard topic/],
  ])('fromFlowAttributes fails for a topicArn that is %s', (_what, arn, message) => {
    const stack = new Stack(app(), 'Ledger', { env: OTHER_ACCOUNT });
    expect(() => IdempotentEventFlow.fromFlowAttributes(stack, 'Payments', { topicArn: arn(stack) })).toThrow(message);
  });
});

describe('refusals at synth', () => {
  test('fails for an environment-agnostic subscriber stack of a flow with an environment, naming both', () => {
    const a = app();
    const flow = new IdempotentEventFlow(new Stack(a, 'Payments', { env: FLOW_ENV }), 'Payments');
    expect(() => new Subscriber(new Stack(a, 'Ledger'), 'Ledger', { flow, entry: HANDLER_ENTRY })).toThrow(
      "Subscriber 'Ledger': its stack Ledger is in aws://unknown-account/unknown-region and the flow Payments/Payments in aws://111111111111/eu-west-1; " +
        'the account and region must be known on both sides (or on neither)',
    );
  });

  test('fails for a subscriber stack with an environment of an environment-agnostic flow', () => {
    const a = app();
    const flow = new IdempotentEventFlow(new Stack(a, 'Payments'), 'Payments');
    expect(() => new Subscriber(new Stack(a, 'Ledger', { env: OTHER_ACCOUNT }), 'Ledger', { flow, entry: HANDLER_ENTRY })).toThrow(
      /its stack Ledger is in aws:\/\/222222222222\/eu-west-1 and the flow Payments\/Payments in aws:\/\/unknown-account\/unknown-region/,
    );
  });

  test('fails for publishesEvents across environments (one DynamoDB transaction can not span them)', () => {
    const a = app();
    const flow = new IdempotentEventFlow(new Stack(a, 'Payments', { env: FLOW_ENV }), 'Payments');
    expect(() => new Subscriber(new Stack(a, 'Ledger', { env: OTHER_REGION }), 'Ledger', { flow, entry: HANDLER_ENTRY, publishesEvents: true })).toThrow(
      "Subscriber 'Ledger': publishesEvents can not be used with a flow in another environment (the subscriber is in aws://111111111111/eu-central-1, the flow in aws://111111111111/eu-west-1)",
    );
  });

  test('fails for publishesEvents with an imported flow', () => {
    const stack = new Stack(app(), 'Ledger', { env: OTHER_ACCOUNT });
    const flow = IdempotentEventFlow.fromFlowAttributes(stack, 'Payments', { topicArn: 'arn:aws:sns:eu-west-1:222222222222:Payments' });
    expect(() => new Subscriber(stack, 'Ledger', { flow, entry: HANDLER_ENTRY, publishesEvents: true })).toThrow(/publishesEvents can not be used with a flow imported by fromFlowAttributes/);
  });

  test("fails for a subscriber whose account the flow's subscriberAccounts does not list, naming both environments and the prop", () => {
    const a = app();
    const flow = new IdempotentEventFlow(new Stack(a, 'Payments', { env: FLOW_ENV }), 'Payments', { subscriberAccounts: ['333333333333'] });
    expect(() => new Subscriber(new Stack(a, 'Ledger', { env: OTHER_ACCOUNT }), 'Ledger', { flow, entry: HANDLER_ENTRY })).toThrow(
      "IdempotentEventFlow 'Payments': the subscriber Ledger/Ledger is in aws://222222222222/eu-west-1, the flow in aws://111111111111/eu-west-1, " +
        'but subscriberAccounts (333333333333) does not list 222222222222',
    );
  });

  test('fails for a subscriberAccounts entry that is no account id', () => {
    const stack = new Stack(app(), 'Payments', { env: FLOW_ENV });
    expect(() => new IdempotentEventFlow(stack, 'Payments', { subscriberAccounts: ['2222'] })).toThrow(
      "IdempotentEventFlow 'Payments': subscriberAccounts must be AWS account ids (12 digits), but '2222' was provided",
    );
  });

  test('fails for alarmActions without a flow', () => {
    const stack = new Stack(app(), 'Ledger');
    const topic = new sns.Topic(stack, 'Topic');
    expect(() => new Subscriber(stack, 'Ledger', { topic, entry: HANDLER_ENTRY, alarmActions: [new SnsAction(topic)] })).toThrow(
      "Subscriber 'Ledger': alarmActions can only be used with flow",
    );
  });

  test('a listed account adds no grant of its own for its in-app subscriber', () => {
    const a = app();
    const payments = new Stack(a, 'Payments', { env: FLOW_ENV });
    const flow = new IdempotentEventFlow(payments, 'Payments', { subscriberAccounts: ['222222222222'] });
    new Subscriber(new Stack(a, 'Ledger', { env: OTHER_ACCOUNT }), 'Ledger', { flow, entry: HANDLER_ENTRY, alarmActions: [] as cloudwatch.IAlarmAction[] });
    const grants = statements(Template.fromStack(payments), 'AWS::SNS::TopicPolicy', 'PolicyDocument').filter((st) => st.Action === 'sns:Subscribe');
    expect(grants.map((g) => g.Sid)).toEqual(['AllowSubscribeFromAccount222222222222']);
  });
});
