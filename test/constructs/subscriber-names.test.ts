import { App, Stack } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, test } from 'vitest';
import { ConsumerFunction, InboxTable, ProcessingMode, Subscriber, SubscriberProps } from '../../lib/consumer';
import { IdempotentEventFlow } from '../../lib/idempotent-event-flow';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

/**
 * Item 15 of issue 10: the subscriber name is part of every inbox key (`<subscriberName>#<eventId>`), so two
 * subscribers with one name on one inbox table would share their records: the second would skip as a duplicate every
 * message the first recorded. Refused at synth, naming both construct paths and the name.
 */

function subscriber(scope: Stack, id: string, topic: sns.ITopic, props: Partial<SubscriberProps> = {}): Subscriber {
  return new Subscriber(scope, id, { topic, entry: HANDLER_ENTRY, ...props });
}

describe('subscriber names: within one flow', () => {
  test('fails if two subscribers of one flow have the same subscriberName', () => {
    // GIVEN
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    // WHEN / THEN
    expect(() => flow.addSubscriber('BillingV2', { entry: HANDLER_ENTRY, subscriberName: 'Billing' })).toThrow(
      /IdempotentEventFlow 'Orders': subscriberName 'Billing' of TestStack\/Orders\/BillingV2 is already the name of TestStack\/Orders\/Billing/,
    );
  });

  test('fails if two subscribers of one flow share an inbox table under one name', () => {
    // GIVEN
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const first = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    // WHEN / THEN
    expect(() => flow.addSubscriber('Audit', { entry: HANDLER_ENTRY, subscriberName: 'Billing', inboxTable: first.inboxTable })).toThrow(
      /subscriberName 'Billing' of TestStack\/Orders\/Audit is already the name of TestStack\/Orders\/Billing/,
    );
  });

  test('accepts subscribers of one flow with different names on one inbox table', () => {
    // GIVEN
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const first = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    // WHEN / THEN
    expect(() => flow.addSubscriber('Audit', { entry: HANDLER_ENTRY, inboxTable: first.inboxTable })).not.toThrow();
  });
});

describe('subscriber names: on a shared inbox table', () => {
  test('fails if two flows share an InboxTable with subscribers of one name, naming both paths and the name', () => {
    // GIVEN
    const stack = newStack();
    const shared = new InboxTable(stack, 'SharedInbox');
    new IdempotentEventFlow(stack, 'Orders').addSubscriber('Billing', { entry: HANDLER_ENTRY, inboxTable: shared });
    const payments = new IdempotentEventFlow(stack, 'Payments');
    // WHEN / THEN
    expect(() => payments.addSubscriber('Billing', { entry: HANDLER_ENTRY, inboxTable: shared })).toThrow(
      /Subscriber 'Billing': subscriberName 'Billing' is already used on inbox table TestStack\/SharedInbox by TestStack\/Orders\/Billing; TestStack\/Payments\/Billing would skip every message TestStack\/Orders\/Billing recorded.*different subscriberName/,
    );
  });

  test('fails if a standalone subscriber reuses the name of another on the inbox table it created', () => {
    // GIVEN
    const stack = newStack();
    const topic = new sns.Topic(stack, 'Topic');
    const first = subscriber(stack, 'Billing', topic);
    // WHEN / THEN
    expect(() => subscriber(stack, 'Billing2', topic, { subscriberName: 'Billing', inboxTable: first.inboxTable })).toThrow(
      /Subscriber 'Billing2': subscriberName 'Billing' is already used on inbox table TestStack\/Billing\/InboxTable by TestStack\/Billing;/,
    );
  });

  test('fails if the inbox table is shared across stacks of one app', () => {
    // GIVEN
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const shared = new Stack(app, 'Shared');
    const inbox = new InboxTable(shared, 'Inbox');
    const orders = new Stack(app, 'Orders');
    const payments = new Stack(app, 'Payments');
    subscriber(orders, 'Billing', new sns.Topic(orders, 'Topic'), { inboxTable: inbox });
    // WHEN / THEN
    expect(() => subscriber(payments, 'Billing', new sns.Topic(payments, 'Topic'), { inboxTable: inbox })).toThrow(
      /subscriberName 'Billing' is already used on inbox table Shared\/Inbox by Orders\/Billing/,
    );
  });

  test('fails if one table is imported twice by name in one stack', () => {
    // GIVEN
    const stack = newStack();
    const topic = new sns.Topic(stack, 'Topic');
    subscriber(stack, 'Billing', topic, { inboxTable: InboxTable.fromTableName(stack, 'InboxA', 'shared-inbox') });
    // WHEN / THEN
    expect(() => subscriber(stack, 'Billing2', topic, { subscriberName: 'Billing', inboxTable: InboxTable.fromTableName(stack, 'InboxB', 'shared-inbox') })).toThrow(
      /subscriberName 'Billing' is already used on inbox table TestStack\/InboxA by TestStack\/Billing/,
    );
  });

  test('fails if one table is imported by name and by ARN in stacks of the same account and region', () => {
    // GIVEN
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const env = { account: '111111111111', region: 'eu-west-1' };
    const a = new Stack(app, 'A', { env });
    const b = new Stack(app, 'B', { env });
    subscriber(a, 'Billing', new sns.Topic(a, 'Topic'), { inboxTable: InboxTable.fromTableName(a, 'Inbox', 'shared-inbox') });
    const byArn = InboxTable.fromTableArn(b, 'Inbox', 'arn:aws:dynamodb:eu-west-1:111111111111:table/shared-inbox');
    // WHEN / THEN
    expect(() => subscriber(b, 'Billing', new sns.Topic(b, 'Topic'), { inboxTable: byArn })).toThrow(
      /subscriberName 'Billing' is already used on inbox table A\/Inbox by A\/Billing/,
    );
  });

  test('fails if an app table is imported by its ARN token', () => {
    // GIVEN
    const stack = newStack();
    const topic = new sns.Topic(stack, 'Topic');
    const inbox = new InboxTable(stack, 'Inbox');
    subscriber(stack, 'Billing', topic, { inboxTable: inbox });
    // WHEN / THEN
    expect(() => subscriber(stack, 'Billing2', topic, { subscriberName: 'Billing', inboxTable: InboxTable.fromTableArn(stack, 'Again', inbox.tableArn) })).toThrow(
      /subscriberName 'Billing' is already used on inbox table TestStack\/Inbox by TestStack\/Billing/,
    );
  });

  test('fails if a ConsumerFunction reuses the name of a subscriber on its inbox table', () => {
    // GIVEN
    const stack = newStack();
    const inbox = new InboxTable(stack, 'Inbox');
    subscriber(stack, 'Billing', new sns.Topic(stack, 'Topic'), { inboxTable: inbox });
    // WHEN / THEN
    expect(() => new ConsumerFunction(stack, 'Function', { entry: HANDLER_ENTRY, subscriberName: 'Billing', inboxTable: inbox })).toThrow(
      /ConsumerFunction 'Function': subscriberName 'Billing' is already used on inbox table TestStack\/Inbox by TestStack\/Billing/,
    );
  });

  test('accepts one name on different inbox tables (e.g. one subscriber per stage)', () => {
    // GIVEN
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const staging = new Stack(app, 'Staging');
    const prod = new Stack(app, 'Prod');
    new IdempotentEventFlow(staging, 'Orders').addSubscriber('Billing', { entry: HANDLER_ENTRY });
    // WHEN / THEN
    expect(() => new IdempotentEventFlow(prod, 'Orders').addSubscriber('Billing', { entry: HANDLER_ENTRY })).not.toThrow();
  });

  test('accepts one literal table name imported in stacks of different accounts', () => {
    // GIVEN
    const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
    const a = new Stack(app, 'A', { env: { account: '111111111111', region: 'eu-west-1' } });
    const b = new Stack(app, 'B', { env: { account: '222222222222', region: 'eu-west-1' } });
    subscriber(a, 'Billing', new sns.Topic(a, 'Topic'), { inboxTable: InboxTable.fromTableName(a, 'Inbox', 'shared-inbox') });
    // WHEN / THEN
    expect(() => subscriber(b, 'Billing', new sns.Topic(b, 'Topic'), { inboxTable: InboxTable.fromTableName(b, 'Inbox', 'shared-inbox') })).not.toThrow();
  });

  test('accepts aggregate subscribers of one name in different flows (they have no inbox)', () => {
    // GIVEN
    const stack = newStack();
    new IdempotentEventFlow(stack, 'Orders').addSubscriber('Billing', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.AGGREGATE });
    // WHEN / THEN
    expect(() =>
      new IdempotentEventFlow(stack, 'Payments').addSubscriber('Billing', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.AGGREGATE }),
    ).not.toThrow();
  });
});
