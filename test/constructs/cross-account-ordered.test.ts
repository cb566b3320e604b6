/**
 * Issue 41, the ordered path: an OrderedSubscriber (SQS FIFO) in another account or Region than its OrderedRelay's SNS
 * FIFO topic, built as the standard path is (lib/private/remote-ordered-subscription.ts). Pins the topic grant, the
 * subscriber's own key and queue policy, the subscription's Region, and the refusal; cdk-nag and the CloudFormation
 * validation run on the same layout.
 */
import * as path from 'node:path';
import { Annotations, Stack, Stage } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, test } from 'vitest';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
import { OutboxTable } from '../../lib/outbox';
import { checkCompliance, type ComplianceResult, complianceApp, formatComplianceResult } from '../support/compliance';

const ORDERED_HANDLER = path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts');
// The repository's cdk.json flags write the partition of a stack with an explicit Region as a literal.
const TOPIC_ARN = Match.stringLikeRegexp('^arn:aws:sns:eu-west-1:111111111111:Fulfilment-Ordered-[A-F0-9]{8}\\.fifo$');

describe('ordered subscribers in another account and another Region', () => {
  let result: ComplianceResult;
  let fulfilment: Stack;
  let shippingStack: Stack;
  let trackingStack: Stack;
  let shipping: OrderedSubscriber;
  let relay: OrderedRelay;
  beforeAll(() => {
    const app = complianceApp();
    fulfilment = new Stack(app, 'Fulfilment', { env: { account: '111111111111', region: 'eu-west-1' } });
    relay = new OrderedRelay(fulfilment, 'Ordered', { outboxTable: new OutboxTable(fulfilment, 'Outbox') });
    shippingStack = new Stack(app, 'Shipping', { env: { account: '222222222222', region: 'eu-west-1' } });
    shipping = new OrderedSubscriber(shippingStack, 'Shipping', { relay, subscriberName: 'Shipping', entry: ORDERED_HANDLER });
    trackingStack = new Stack(app, 'Tracking', { env: { account: '111111111111', region: 'eu-central-1' } });
    new OrderedSubscriber(trackingStack, 'Tracking', { relay, subscriberName: 'Tracking', entry: ORDERED_HANDLER });
    for (const stack of [fulfilment, shippingStack, trackingStack]) Annotations.of(stack).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
    result = checkCompliance(app);
  });

  test('pass cdk-nag and the CloudFormation validation', () => {
    expect(result.unansweredFindings, formatComplianceResult(result)).toEqual([]);
    expect(result.cfnValidationErrors, formatComplianceResult(result)).toEqual([]);
  });

  test("the FIFO topic's policy lets the other account subscribe its FIFO queue only, over sqs, and no * principal is allowed", () => {
    const relayTemplate = Template.fromStack(fulfilment);
    const statements = Object.values(relayTemplate.findResources('AWS::SNS::TopicPolicy')).flatMap((r) => r.Properties.PolicyDocument.Statement);
    const grants = statements.filter((st: { Action: string }) => st.Action === 'sns:Subscribe');
    const queueName = Template.fromStack(shippingStack).toJSON().Resources[shippingStack.getLogicalId(shipping.queue.node.defaultChild as never)].Properties.QueueName;
    expect(queueName).toMatch(/^Shipping-Queue-[A-F0-9]{8}\.fifo$/);
    expect(grants).toEqual([
      {
        Sid: 'AllowSubscribeShippingad575143From222222222222', // the name's alphanumerics, 8 hex digits of its SHA-256, the account
        Effect: 'Allow',
        Action: 'sns:Subscribe',
        Principal: { AWS: 'arn:aws:iam::222222222222:root' },
        Resource: expect.anything(),
        Condition: { StringEquals: { 'sns:Protocol': 'sqs', 'sns:Endpoint': `arn:aws:sqs:eu-west-1:222222222222:${queueName}` } },
      },
    ]);
    for (const st of statements.filter((s: { Effect: string }) => s.Effect === 'Allow')) expect(JSON.stringify(st.Principal)).not.toMatch(/"\*"/);
    expect(fulfilment.dependencies).toEqual([]);
    expect(shippingStack.dependencies.map((d) => d.stackName)).toEqual(['Fulfilment']);
  });

  test("the other account's queues and inbox use a key of its own that lets SNS deliver from the FIFO topic; the subscription is its stack's", () => {
    const template = Template.fromStack(shippingStack);
    const [keyId] = Object.keys(template.findResources('AWS::KMS::Key'));
    template.hasResourceProperties('AWS::KMS::Key', {
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'sns.amazonaws.com' }, Action: ['kms:Decrypt', 'kms:GenerateDataKey*'], Condition: { ArnEquals: { 'aws:SourceArn': TOPIC_ARN } } })]) },
    });
    for (const queue of Object.values(template.findResources('AWS::SQS::Queue'))) expect(queue.Properties.KmsMasterKeyId).toEqual({ 'Fn::GetAtt': [keyId, 'Arn'] });
    template.hasResourceProperties('AWS::SQS::QueuePolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'sqs:SendMessage', Principal: { Service: 'sns.amazonaws.com' }, Condition: { ArnEquals: { 'aws:SourceArn': TOPIC_ARN } } })]) },
    });
    template.hasResourceProperties('AWS::SNS::Subscription', { TopicArn: TOPIC_ARN, Region: Match.absent(), RedrivePolicy: Match.objectLike({}) });
    const [output] = Object.values(template.findOutputs('*'));
    expect(JSON.stringify(output.Value)).not.toContain('outboxTable');
  });

  test("in another Region the subscription is created in the topic's Region, without a dead-letter queue", () => {
    const template = Template.fromStack(trackingStack);
    template.hasResourceProperties('AWS::SNS::Subscription', { TopicArn: TOPIC_ARN, Region: 'eu-west-1', RedrivePolicy: Match.absent() });
    const statements = Object.values(Template.fromStack(fulfilment).findResources('AWS::SNS::TopicPolicy')).flatMap((r) => r.Properties.PolicyDocument.Statement);
    expect(JSON.stringify(statements)).not.toContain('Tracking');
  });
});

describe("the FIFO topic's failed deliveries (a cross-Region subscription has no dead-letter queue)", () => {
  function layout(subscriberRegion: string): { relay: OrderedRelay; fulfilment: Stack } {
    const app = complianceApp();
    const fulfilment = new Stack(app, 'Fulfilment', { env: { account: '111111111111', region: 'eu-west-1' } });
    const relay = new OrderedRelay(fulfilment, 'Ordered', { outboxTable: new OutboxTable(fulfilment, 'Outbox') });
    const trackingStack = new Stack(app, 'Tracking', { env: { account: '111111111111', region: subscriberRegion } });
    new OrderedSubscriber(trackingStack, 'Tracking', { relay, subscriberName: 'Tracking', entry: ORDERED_HANDLER });
    return { relay, fulfilment };
  }

  test("a subscriber in another Region gives the relay's stack a DeliveryFailed alarm on the FIFO topic's NumberOfNotificationsFailed, in relay.alarms", () => {
    const { relay, fulfilment } = layout('eu-central-1');
    const template = Template.fromStack(fulfilment);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SNS',
      MetricName: 'NumberOfNotificationsFailed',
      Dimensions: [{ Name: 'TopicName', Value: Match.anyValue() }],
      Statistic: 'Sum',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(relay.deliveryFailedAlarm).toBeDefined();
    expect(relay.alarms).toContain(relay.deliveryFailedAlarm);
  });

  test('a subscriber in the Region of the relay adds none (its subscription has a dead-letter queue)', () => {
    const { relay, fulfilment } = layout('eu-west-1');
    expect(Object.values(Template.fromStack(fulfilment).findResources('AWS::CloudWatch::Alarm')).filter((alarm) => alarm.Properties.MetricName === 'NumberOfNotificationsFailed')).toEqual([]);
    expect(relay.deliveryFailedAlarm).toBeUndefined();
  });
});

test('an ordered subscriber fails in an environment-agnostic stack of a relay with an environment, naming both', () => {
  const app = complianceApp();
  const fulfilment = new Stack(app, 'Fulfilment', { env: { account: '111111111111', region: 'eu-west-1' } });
  const relay = new OrderedRelay(fulfilment, 'Ordered', { outboxTable: new OutboxTable(fulfilment, 'Outbox') });
  expect(() => new OrderedSubscriber(new Stack(app, 'Shipping'), 'Shipping', { relay, subscriberName: 'Shipping', entry: ORDERED_HANDLER })).toThrow(
    "OrderedSubscriber 'Shipping': its stack Shipping is in aws://unknown-account/unknown-region and the ordered relay Fulfilment/Ordered in aws://111111111111/eu-west-1",
  );
});

test('an ordered subscriber in a Stage of another account (CDK Pipelines layout) is constructed, with no cross-Stage dependency', () => {
  const app = complianceApp();
  const fulfilment = new Stack(new Stage(app, 'Prod', { env: { account: '111111111111', region: 'eu-west-1' } }), 'Fulfilment');
  const relay = new OrderedRelay(fulfilment, 'Ordered', { outboxTable: new OutboxTable(fulfilment, 'Outbox') });
  const shippingStack = new Stack(new Stage(app, 'ShippingProd', { env: { account: '222222222222', region: 'eu-west-1' } }), 'Shipping');
  expect(() => new OrderedSubscriber(shippingStack, 'Shipping', { relay, subscriberName: 'Shipping', entry: ORDERED_HANDLER })).not.toThrow();
  expect(shippingStack.dependencies).toEqual([]);
});
