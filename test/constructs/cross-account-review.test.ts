/**
 * Review r2 of issue 41 (branch s4-h8): findings written as failing tests, fixed on s4-f4. Each test says what it
 * expects, which AWS or CDK fact it rests on, and the severity the review gave it.
 */
import { Annotations as CdkAnnotations, App, Stack, Stage } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow, Subscriber } from '../../lib';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';

const FLOW_ENV = { account: '111111111111', region: 'eu-west-1' };
const OTHER_ACCOUNT = { account: '222222222222', region: 'eu-west-1' };
const OTHER_REGION = { account: '111111111111', region: 'eu-central-1' };

function app(): App {
  return new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
}

function flowIn(a: App): { payments: Stack; flow: IdempotentEventFlow } {
  const payments = new Stack(a, 'Payments', { env: FLOW_ENV });
  const flow = new IdempotentEventFlow(payments, 'Payments', { dashboard: true });
  CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
  return { payments, flow };
}

describe('review r2, issue 41', () => {
  /**
   * HIGH. A subscriber in another Region has no subscription dead-letter queue (the construct's choice), so an event SNS
   * can not deliver because of a client-side error (the queue's policy or its key's policy changed, the queue deleted)
   * is discarded at once: "Amazon SNS doesn't retry the message delivery that fails as a result of a client-side
   * error" and "When the delivery policy is exhausted, Amazon SNS stops retrying the delivery and discards the
   * message—unless a dead-letter queue is attached" (SNS developer guide, "Amazon SNS message delivery retries" and
   * "Amazon SNS dead-letter queues"). The same-Region subscriber's loss is alarmed through its subscription dead-letter
   * queue; across Regions the only trace is the topic's `NumberOfNotificationsFailed` metric (AWS/SNS, TopicName) in
   * the topic's account and Region, and no alarm of either stack watches it: the loss is silent.
   */
  test('HIGH: a cross-Region subscription without a dead-letter queue has its failed deliveries alarmed somewhere', () => {
    const a = app();
    const { payments, flow } = flowIn(a);
    const reportsStack = new Stack(a, 'Reports', { env: OTHER_REGION });
    new Subscriber(reportsStack, 'Reports', { flow, entry: HANDLER_ENTRY });
    const alarms = [payments, reportsStack].flatMap((stack) => Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm')));
    const watchesFailedDeliveries = alarms.some((alarm) => JSON.stringify(alarm.Properties).includes('NumberOfNotificationsFailed'));
    expect(watchesFailedDeliveries).toBe(true);
  });

  /**
   * MEDIUM. `flow.alarms` is documented as "Every alarm of the flow: the relay's and each subscriber's", the natural
   * input of a CompositeAlarm in the flow's stack. With a subscriber in another account it now holds alarms of another
   * environment, which CDK can not refer to from the flow's stack (cross-environment references need physical names;
   * a CompositeAlarm's AlarmRule refers to each alarm's ARN): the app no longer synthesizes, a regression of a
   * same-account app the moment one subscriber moves to another account.
   */
  test('MEDIUM: a CompositeAlarm of flow.alarms in the flow\'s stack still synthesizes when a subscriber is in another account', () => {
    const a = app();
    const { payments, flow } = flowIn(a);
    const ledgerStack = new Stack(a, 'Ledger', { env: OTHER_ACCOUNT });
    new Subscriber(ledgerStack, 'Ledger', { flow, entry: HANDLER_ENTRY });
    new cloudwatch.CompositeAlarm(payments, 'AnyFlowAlarm', { alarmRule: cloudwatch.AlarmRule.anyOf(...flow.alarms) });
    expect(() => a.synth()).not.toThrow();
  });

  /**
   * LOW. The topic grant's Sid is the subscriber's name with everything but [A-Za-z0-9] dropped, plus the account, so
   * two subscribers of one flow whose names differ only in such characters ('Ledger-A' and 'LedgerA', both valid and
   * different subscriberNames) in the same account give two statements with the same Sid in one topic policy. IAM
   * policy grammar: "the Sid value must be unique within a JSON policy" (IAM User Guide, "IAM JSON policy elements:
   * Sid"); SNS rejects such a SetTopicAttributes/TopicPolicy.
   */
  test('LOW: two subscribers whose names differ only in punctuation get distinct Sids in the topic policy', () => {
    const a = app();
    const { payments, flow } = flowIn(a);
    const ledgerStack = new Stack(a, 'Ledger', { env: OTHER_ACCOUNT });
    new Subscriber(ledgerStack, 'LedgerDash', { flow, subscriberName: 'Ledger-A', entry: HANDLER_ENTRY });
    new Subscriber(ledgerStack, 'LedgerPlain', { flow, subscriberName: 'LedgerA', entry: HANDLER_ENTRY });
    const sids = Object.values(Template.fromStack(payments).findResources('AWS::SNS::TopicPolicy'))
      .flatMap((policy) => policy.Properties.PolicyDocument.Statement as Array<{ Sid?: string }>)
      .map((statement) => statement.Sid)
      .filter((sid): sid is string => sid !== undefined);
    expect(new Set(sids).size).toBe(sids.length);
  });

  /**
   * HIGH. CDK Pipelines, the way AWS documents deploying one app to several accounts, puts each account's stacks in a
   * Stage of their own (a pipeline stage per environment). A Subscriber in a Stage of account 222222222222 on a flow in
   * a Stage of account 111111111111 fails while it is constructed, with CDK's own NoCrossStageDependency (from
   * admitRemoteSubscriber's addStackDependency), not with a refusal naming the prop and both environments. The
   * reference itself would need no dependency: the topic ARN crosses as a literal (physical name). The issue's
   * "make the simple call work" is not met for the pipeline layout.
   */
  test('HIGH: a subscriber in a Stage of another account (the CDK Pipelines layout) synthesizes', () => {
    const a = app();
    const prod = new Stage(a, 'Prod', { env: FLOW_ENV });
    const ledgerProd = new Stage(a, 'LedgerProd', { env: OTHER_ACCOUNT });
    const payments = new Stack(prod, 'Payments');
    const flow = new IdempotentEventFlow(payments, 'Payments');
    CdkAnnotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
    const ledgerStack = new Stack(ledgerProd, 'Ledger');
    expect(() => {
      new Subscriber(ledgerStack, 'Ledger', { flow, entry: HANDLER_ENTRY });
      a.synth();
    }).not.toThrow();
  });

  /**
   * MEDIUM (part of the HIGH finding above). Across Regions the subscription has no RedrivePolicy, yet the subscriber
   * keeps its `SubscriptionDeadLetters` alarm ("SNS could not deliver messages to the consumer queue (check the queue
   * policy and KMS key policy)") on a queue SNS never writes to: an alarm that can not fire, where operators expect
   * exactly the failure it names to be caught. False assurance on the one failure that loses events.
   */
  test('MEDIUM: a cross-Region subscriber has no alarm on a subscription dead-letter queue its subscription does not use', () => {
    const a = app();
    const { flow } = flowIn(a);
    const reportsStack = new Stack(a, 'Reports', { env: OTHER_REGION });
    const reports = new Subscriber(reportsStack, 'Reports', { flow, entry: HANDLER_ENTRY });
    const template = Template.fromStack(reportsStack);
    const subscriptions = Object.values(template.findResources('AWS::SNS::Subscription'));
    expect(subscriptions).toHaveLength(1);
    expect(subscriptions[0].Properties.RedrivePolicy).toBeUndefined();
    // The queue SNS can not use is not created (subscriptionDeadLetterQueue undefined); if one were, no alarm may watch it.
    const unusedQueue = (reports as { subscriptionDeadLetterQueue?: { node: { defaultChild?: unknown } } }).subscriptionDeadLetterQueue;
    const unusedQueueId = unusedQueue === undefined ? undefined : reportsStack.getLogicalId(unusedQueue.node.defaultChild as never);
    const alarmsOnUnusedQueue = Object.values(template.findResources('AWS::CloudWatch::Alarm')).filter(
      (alarm) => unusedQueueId !== undefined && JSON.stringify(alarm.Properties.Dimensions ?? []).includes(`"${unusedQueueId}"`),
    );
    expect(alarmsOnUnusedQueue).toEqual([]);
    expect(Object.keys(template.findResources('AWS::CloudWatch::Alarm')).filter((id) => id.includes('SubscriptionDeadLetters'))).toEqual([]);
  });

  test("the fixes' shape: DeliveryFailedAlarm on the topic's TopicName in flow.alarms; a remote subscriber's alarms and inbox on itself, not the flow", () => {
    const a = app();
    const { payments, flow } = flowIn(a);
    const reports = new Subscriber(new Stack(a, 'Reports', { env: OTHER_REGION }), 'Reports', { flow, entry: HANDLER_ENTRY });
    const local = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    expect(flow.deliveryFailedAlarm).toBeDefined();
    expect(flow.alarms).toContain(flow.deliveryFailedAlarm);
    Template.fromStack(payments).hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SNS',
      MetricName: 'NumberOfNotificationsFailed',
      Dimensions: [{ Name: 'TopicName', Value: { 'Fn::GetAtt': [payments.getLogicalId(flow.eventTopic.topic.node.defaultChild as never), 'TopicName'] } }],
      Statistic: 'Sum',
      Threshold: 1,
    });
    expect(reports.alarms.length).toBe(4);
    for (const alarm of reports.alarms) expect(flow.alarms).not.toContain(alarm);
    for (const alarm of local.alarms) expect(flow.alarms).toContain(alarm);
    // the outbox and Billing's inbox; not Reports' inbox, of another Region
    expect(flow.tables.map((table) => table.node.path)).toEqual(['Payments/Payments/OutboxTable/Resource', 'Payments/Payments/Billing/InboxTable/Resource']);
  });

  test('no DeliveryFailedAlarm for subscribers in the flow\'s Region only; one with subscriberAccounts', () => {
    const a = app();
    const { flow } = flowIn(a);
    new Subscriber(new Stack(a, 'Ledger', { env: OTHER_ACCOUNT }), 'Ledger', { flow, entry: HANDLER_ENTRY });
    expect(flow.deliveryFailedAlarm).toBeUndefined();
    const listed = new IdempotentEventFlow(new Stack(a, 'Listed', { env: FLOW_ENV }), 'Listed', { subscriberAccounts: ['333333333333'] });
    expect(listed.deliveryFailedAlarm).toBeDefined();
  });
});
