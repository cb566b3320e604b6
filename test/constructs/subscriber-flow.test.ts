/**
 * Issue 30: `new Subscriber(scope, id, { flow, entry })` joins a flow from anywhere, and gets what `addSubscriber` gives.
 * (test/compliance/split-stacks.test.ts synthesizes the layout across stacks with cdk-nag and CloudFormation validation.)
 */
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, test } from 'vitest';
import { ENV } from '../../lambda/contract/environment';
import { IdempotentEventFlow, OutboxTable, Subscriber } from '../../lib';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';

function app(): App {
  return new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
}

describe('Subscriber with flow', () => {
  test('in the flow\'s stack: the same resources, alarms and Operator output as addSubscriber, and no names of its own', () => {
    const a = app();
    const stack = new Stack(a, 'Orders');
    const flow = new IdempotentEventFlow(stack, 'Orders', { removalPolicy: RemovalPolicy.DESTROY });
    const billing = new Subscriber(stack, 'Billing', { flow, entry: HANDLER_ENTRY, publishesEvents: true });
    expect(flow.subscribers).toEqual([billing]);
    expect(billing.flow).toBe(flow);
    const template = Template.fromStack(stack);
    template.resourceCountIs('AWS::CloudWatch::Alarm', 2 + 5);
    expect(Object.keys(template.findOutputs('*')).filter((id) => id.startsWith('BillingOperator'))).toHaveLength(1);
    // the flow's topic, key and outbox; its removal policy
    template.hasResourceProperties('AWS::SNS::Subscription', { TopicArn: stack.resolve(flow.topic.topicArn), Endpoint: stack.resolve(billing.queue.queueArn) });
    template.hasResourceProperties('AWS::SQS::Queue', { KmsMasterKeyId: stack.resolve(flow.encryptionKey.keyArn), QueueName: Match.absent() });
    template.hasResource('AWS::DynamoDB::Table', { DeletionPolicy: 'Delete', Properties: { KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }] } });
    const fn = template.toJSON().Resources[stack.getLogicalId(billing.consumerFunction.lambdaFunction.node.defaultChild as never)];
    expect(fn.Properties.FunctionName).toBeUndefined();
    expect(fn.Properties.Environment.Variables[ENV.OUTBOX_TABLE_NAME]).toEqual(stack.resolve(flow.outboxTable.table.tableName));
  });

  test('in another stack: alarms and Operator output there, the flow lists it and its alarms', () => {
    const a = app();
    const flow = new IdempotentEventFlow(new Stack(a, 'Payments'), 'Payments');
    const ledgerStack = new Stack(a, 'Ledger');
    const ledger = new Subscriber(ledgerStack, 'Ledger', { flow, entry: HANDLER_ENTRY });
    expect(flow.subscribers).toEqual([ledger]);
    expect(flow.alarms).toHaveLength(2 + 5);
    const template = Template.fromStack(ledgerStack);
    template.resourceCountIs('AWS::CloudWatch::Alarm', 5);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: Match.stringLikeRegexp('^Ledger-Alarms-DeadLetters-') });
    expect(Object.keys(template.findOutputs('*')).filter((id) => id.startsWith('LedgerOperator'))).toHaveLength(1);
  });

  test.each([
    ['topic', (stack: Stack) => ({ topic: new sns.Topic(stack, 'Other') })],
    ['encryptionKey', (stack: Stack) => ({ encryptionKey: new kms.Key(stack, 'Key') })],
    ['outboxTable', (stack: Stack) => ({ outboxTable: new OutboxTable(stack, 'Outbox'), publishesEvents: true })],
  ])('refuses %s beside flow', (prop, extra) => {
    const stack = new Stack(app(), 'Orders');
    const flow = new IdempotentEventFlow(stack, 'Orders');
    expect(() => new Subscriber(stack, 'Billing', { flow, entry: HANDLER_ENTRY, ...extra(stack) })).toThrow(
      `Subscriber 'Billing': ${prop} can not be combined with flow (the subscriber uses the flow's ${prop}), but both were provided`,
    );
  });

  test('refuses neither topic nor flow', () => {
    const stack = new Stack(app(), 'Orders');
    expect(() => new Subscriber(stack, 'Billing', { entry: HANDLER_ENTRY })).toThrow(
      "Subscriber 'Billing': topic or flow must be provided (the topic to subscribe to, or the IdempotentEventFlow whose topic it is), but neither was",
    );
  });

  test('refuses a second subscriber of the flow under the same name, wherever it is', () => {
    const a = app();
    const flow = new IdempotentEventFlow(new Stack(a, 'Payments'), 'Payments');
    flow.addSubscriber('Ledger', { entry: HANDLER_ENTRY });
    expect(() => new Subscriber(new Stack(a, 'Ledger'), 'Ledger', { flow, entry: HANDLER_ENTRY })).toThrow(
      "IdempotentEventFlow 'Payments': subscriberName 'Ledger' of Ledger/Ledger is already the name of Payments/Payments/Ledger; subscribers of one flow must have different names",
    );
  });

  test('registerSubscriber refuses a subscriber of another flow, of none, or one registered already', () => {
    const stack = new Stack(app(), 'Orders');
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const other = new IdempotentEventFlow(stack, 'Other');
    const billing = new Subscriber(stack, 'Billing', { flow, entry: HANDLER_ENTRY });
    const standalone = new Subscriber(stack, 'Audit', { topic: flow.topic, entry: HANDLER_ENTRY });
    expect(() => other.registerSubscriber(billing)).toThrow(
      "IdempotentEventFlow 'Other': registerSubscriber takes a subscriber created with flow: this flow (Orders/Other), but Orders/Billing was created with the flow Orders/Orders",
    );
    expect(() => flow.registerSubscriber(standalone)).toThrow(/but Orders\/Audit was created with no flow/);
    expect(() => flow.registerSubscriber(billing)).toThrow(
      "IdempotentEventFlow 'Orders': the subscriber Orders/Billing is registered already; a Subscriber created with flow registers itself",
    );
  });
});
