/**
 * Issues 38/41 (new user nu11, finding 1): an `OrderedSubscriber` in another stack than its flow, registered with
 * `flow.registerOrderedSubscriber` while the flow has its dashboard (`dashboard: true`). As a standard `Subscriber` in
 * another stack (lib/consumer/private/cross-stack-names.ts), its FIFO queues, function and alarms get literal names, so
 * the dashboard in the flow's stack names them without referring back to the subscriber's stack (which refers to the
 * flow's: a dependency cycle CDK refuses). In another account or Region its row says where to look instead. The layout
 * synthesizes, passes cdk-nag and the CloudFormation validation; the Template assertions pin the names and the metrics.
 */
import * as path from 'node:path';
import { Annotations, App, Stack } from 'aws-cdk-lib';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, test } from 'vitest';
import { Subscriber } from '../../lib/consumer/subscriber';
import { IdempotentEventFlow } from '../../lib/idempotent-event-flow';
import { FlowDashboard } from '../../lib/monitoring';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';
import { checkCompliance, type ComplianceResult, complianceApp, formatComplianceResult } from '../support/compliance';

const ORDERED_HANDLER = path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts');
const FLOW_ENV = { account: '111111111111', region: 'eu-west-1' };

interface Layout {
  readonly app: App;
  readonly flow: IdempotentEventFlow;
  readonly relay: OrderedRelay;
  readonly local: OrderedSubscriber;
  readonly ledger: OrderedSubscriber;
  readonly audit: OrderedSubscriber;
  readonly tracking: OrderedSubscriber;
  readonly stacks: { readonly orders: Stack; readonly subscribers: Stack; readonly audit: Stack; readonly tracking: Stack };
  readonly result: ComplianceResult;
}

/** nu11's layout: the flow (dashboard on) and its ordered relay in Orders; ordered subscribers in three other stacks. */
function layout(): Layout {
  const app = complianceApp();
  const orders = new Stack(app, 'Orders', { env: FLOW_ENV });
  const flow = new IdempotentEventFlow(orders, 'Payments', { dashboard: true });
  const relay = new OrderedRelay(orders, 'Ordered', { outboxTable: flow.outboxTable });
  flow.registerOrderedRelay(relay);
  const local = new OrderedSubscriber(orders, 'Statements', { relay, subscriberName: 'Statements', entry: ORDERED_HANDLER });
  flow.registerOrderedSubscriber(local);
  // the same account and Region, another stack
  const subscribers = new Stack(app, 'PaymentSubscribers', { env: FLOW_ENV });
  const ledger = new OrderedSubscriber(subscribers, 'AccountLedger', { relay, subscriberName: 'AccountLedger', entry: ORDERED_HANDLER });
  flow.registerOrderedSubscriber(ledger);
  // the subscriber team's operator role, in its own stack, given what `replay` reads of the flow's outbox
  const operator = new iam.Role(subscribers, 'LedgerOperator', { assumedBy: new iam.AccountRootPrincipal() });
  flow.grantOperator(operator);
  // another account; another Region
  const auditStack = new Stack(app, 'Audit', { env: { account: '222222222222', region: 'eu-west-1' } });
  const audit = new OrderedSubscriber(auditStack, 'Audit', { relay, subscriberName: 'Audit', entry: ORDERED_HANDLER });
  flow.registerOrderedSubscriber(audit);
  const trackingStack = new Stack(app, 'Tracking', { env: { account: '111111111111', region: 'eu-central-1' } });
  const tracking = new OrderedSubscriber(trackingStack, 'Tracking', { relay, subscriberName: 'Tracking', entry: ORDERED_HANDLER });
  flow.registerOrderedSubscriber(tracking);
  for (const stack of [orders, subscribers, auditStack, trackingStack]) Annotations.of(stack).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app.');
  const result = checkCompliance(app);
  return { app, flow, relay, local, ledger, audit, tracking, stacks: { orders, subscribers, audit: auditStack, tracking: trackingStack }, result };
}

function template(s: Layout, stack: Stack): Template {
  // synth() is cached: this is the assembly checkCompliance validated.
  return Template.fromJSON(s.app.synth().getStackByName(stack.stackName).template);
}

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;

function named(s: Layout, stack: Stack, type: string, property: string): string[] {
  const resources = template(s, stack).toJSON().Resources as Resources;
  return Object.values(resources)
    .filter((r) => r.Type === type)
    .map((r) => r.Properties[property] as string);
}

/** The dashboard body of the flow's stack, a JSON string with its references in place. */
function dashboardBody(s: Layout): string {
  const dashboards = Object.values(template(s, s.stacks.orders).findResources('AWS::CloudWatch::Dashboard'));
  expect(dashboards).toHaveLength(1);
  return JSON.stringify(dashboards[0].Properties.DashboardBody);
}

describe('ordered subscribers in other stacks than their flow, the dashboard in the flow stack', () => {
  let s: Layout;
  beforeAll(() => {
    s = layout();
  });

  test('has no unanswered cdk-nag findings and no CloudFormation validation findings', () => {
    expect(s.result.unansweredFindings, formatComplianceResult(s.result)).toEqual([]);
    expect(s.result.cfnValidationErrors, formatComplianceResult(s.result)).toEqual([]);
  });

  test('has no dependency cycle: the subscribers’ stacks depend on the flow’s, the flow’s on none', () => {
    const dependencies = (stack: Stack) => stack.dependencies.map((d) => d.stackName).sort();
    expect(dependencies(s.stacks.orders)).toEqual([]);
    expect(dependencies(s.stacks.subscribers)).toEqual(['Orders']);
    expect(dependencies(s.stacks.audit)).toEqual(['Orders']);
    expect(dependencies(s.stacks.tracking)).toEqual(['Orders']);
  });

  test('the subscriber in another stack has literal FIFO queue names, a function name and alarm names', () => {
    const ledger = template(s, s.stacks.subscribers);
    ledger.resourceCountIs('AWS::SQS::Queue', 2);
    expect(named(s, s.stacks.subscribers, 'AWS::SQS::Queue', 'QueueName').sort()).toEqual([
      expect.stringMatching(/^PaymentSubscribers-AccountLedger-Queue-[A-F0-9]{8}\.fifo$/),
      expect.stringMatching(/^PaymentSubscribers-AccountLedger-Queue-DeadLetterQueue-[A-F0-9]{8}\.fifo$/),
    ].sort((a, b) => String(a).localeCompare(String(b))));
    expect(named(s, s.stacks.subscribers, 'AWS::Lambda::Function', 'FunctionName')).toEqual([expect.stringMatching(/^PaymentSubscribers-AccountLedger-Consumer-[A-F0-9]{8}$/)]);
    const alarmNames = named(s, s.stacks.subscribers, 'AWS::CloudWatch::Alarm', 'AlarmName');
    expect(alarmNames).toHaveLength(5);
    for (const name of alarmNames) expect(name).toMatch(/^PaymentSubscribers-AccountLedger-(DeadLetters|Errors|HeldAggregate|OldestMessageAge|DeadLetterExpiring)-[A-F0-9]{8}$/);
    // The ordered subscriber in the flow's own stack keeps the names CloudFormation generates.
    expect(s.stacks.orders.resolve((s.local.queue.node.defaultChild as { queueName?: string }).queueName)).toBeUndefined();
  });

  test("the dashboard's row of the subscriber in another stack names its queues, function and alarms by their literal names", () => {
    const body = dashboardBody(s);
    expect(body).not.toContain('Fn::ImportValue');
    expect(body).toContain('## Ordered subscriber AccountLedger');
    const queueNames = named(s, s.stacks.subscribers, 'AWS::SQS::Queue', 'QueueName');
    expect(queueNames).toHaveLength(2);
    for (const queueName of queueNames) expect(body).toContain(`\\"QueueName\\",\\"${queueName}\\"`);
    const [functionName] = named(s, s.stacks.subscribers, 'AWS::Lambda::Function', 'FunctionName');
    expect(body).toContain(`\\"AWS/Lambda\\",\\"Errors\\",\\"FunctionName\\",\\"${functionName}\\"`);
    expect(body).toContain(`\\"AWS/Lambda\\",\\"Duration\\",\\"FunctionName\\",\\"${functionName}\\"`);
    for (const alarmName of named(s, s.stacks.subscribers, 'AWS::CloudWatch::Alarm', 'AlarmName')) {
      expect(body).toContain(`arn:aws:cloudwatch:eu-west-1:111111111111:alarm:${alarmName}`);
    }
    expect(body).toContain('ApproximateAgeOfOldestMessage');
  });

  test('the subscribers in another account or Region get a row saying where to look, and their alarms stay on them', () => {
    const body = dashboardBody(s);
    expect(body).toContain('## Ordered subscriber Audit, in aws://222222222222/eu-west-1');
    expect(body).toContain('## Ordered subscriber Tracking, in aws://111111111111/eu-central-1');
    for (const name of named(s, s.stacks.audit, 'AWS::SQS::Queue', 'QueueName')) expect(body).not.toContain(name);
    // Alarms of another environment can not be referred to from the flow's: they stay on the subscriber.
    expect(s.flow.alarms).toEqual(expect.arrayContaining([...s.local.alarms, ...s.ledger.alarms]));
    for (const alarm of [...s.audit.alarms, ...s.tracking.alarms]) expect(s.flow.alarms).not.toContain(alarm);
    expect(s.flow.orderedSubscribers).toEqual([s.local, s.ledger, s.audit, s.tracking]);
  });

  test("the operator role in the subscriber's stack reads the flow's outbox", () => {
    const statements = Object.values(template(s, s.stacks.subscribers).findResources('AWS::IAM::Policy')).flatMap(
      (p) => (p.Properties as { PolicyDocument: { Statement: { Action: unknown }[] } }).PolicyDocument.Statement,
    );
    expect(statements.some((st) => JSON.stringify(st.Action).includes('dynamodb:Scan'))).toBe(true);
  });
});

describe('an ordered relay in another stack than its flow, the dashboard on', () => {
  test("registerOrderedRelay refuses it, naming the relay, both stacks and what to do, instead of CDK's dependency cycle at synth", () => {
    const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
    const orders = new Stack(app, 'Orders', { env: FLOW_ENV });
    const flow = new IdempotentEventFlow(orders, 'Payments', { dashboard: true });
    const relayStack = new Stack(app, 'OrderedRelays', { env: FLOW_ENV });
    const relay = new OrderedRelay(relayStack, 'Ordered', { outboxTable: flow.outboxTable });
    expect(() => flow.registerOrderedRelay(relay)).toThrow(
      "IdempotentEventFlow 'Payments': the ordered relay OrderedRelays/Ordered is in the stack OrderedRelays, the flow and its dashboard (dashboard: true) in the stack Orders; " +
        "the relay's stack refers to the flow's (the outbox stream), so the relay's dashboard row would make the two stacks depend on each other, a cycle CDK refuses. " +
        "Create the OrderedRelay in the flow's stack (its ordered subscribers may be in other stacks), or set dashboard: false and create a FlowDashboard with " +
        'orderedRelays and orderedSubscribers in a stack of its own',
    );
  });

  test('without the dashboard it registers, and a FlowDashboard in an ops stack shows it and its subscriber in a third stack', () => {
    const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
    const orders = new Stack(app, 'Orders', { env: FLOW_ENV });
    const flow = new IdempotentEventFlow(orders, 'Payments');
    const relayStack = new Stack(app, 'OrderedRelays', { env: FLOW_ENV });
    const relay = new OrderedRelay(relayStack, 'Ordered', { outboxTable: flow.outboxTable });
    flow.registerOrderedRelay(relay);
    const subscribers = new Stack(app, 'PaymentSubscribers', { env: FLOW_ENV });
    const ledger = new OrderedSubscriber(subscribers, 'AccountLedger', { relay, subscriberName: 'AccountLedger', entry: ORDERED_HANDLER });
    flow.registerOrderedSubscriber(ledger);
    const ops = new Stack(app, 'Ops', { env: FLOW_ENV });
    new FlowDashboard(ops, 'Dashboard', { orderedRelays: flow.orderedRelays, orderedSubscribers: flow.orderedSubscribers });
    const assembly = app.synth();
    const body = JSON.stringify(Template.fromJSON(assembly.getStackByName('Ops').template).findResources('AWS::CloudWatch::Dashboard'));
    expect(body).toContain('## Ordered relay OrderedRelays/Ordered');
    expect(body).toContain('## Ordered subscriber AccountLedger');
    const queueName = Template.fromJSON(assembly.getStackByName('PaymentSubscribers').template).toJSON().Resources[subscribers.getLogicalId(ledger.queue.node.defaultChild as never)].Properties.QueueName as string;
    expect(queueName).toMatch(/^PaymentSubscribers-AccountLedger-Queue-[A-F0-9]{8}\.fifo$/);
    expect(body).toContain(queueName);
  });
});

describe("nu11's app: offloadLargeEvents, alarm actions, a standard and an ordered subscriber in one other stack, a cross-account subscriber", () => {
  test('synthesizes with the dashboard on, and the dashboard names the ordered subscriber by its literal names', () => {
    const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
    const orders = new Stack(app, 'Orders', { env: FLOW_ENV });
    const ops = new sns.Topic(orders, 'PaymentsOps');
    const flow = new IdempotentEventFlow(orders, 'Payments', { offloadLargeEvents: true, dashboard: true, alarmActions: [new SnsAction(ops)] });
    const relay = new OrderedRelay(orders, 'Ordered', { outboxTable: flow.outboxTable });
    relay.grantAppendOrderedEvents(flow.addProducer('CapturePayment', { entry: HANDLER_ENTRY }));
    flow.registerOrderedRelay(relay);
    const subscribers = new Stack(app, 'PaymentSubscribers', { env: FLOW_ENV });
    new Subscriber(subscribers, 'Ledger', { flow, entry: HANDLER_ENTRY });
    const accountLedger = new OrderedSubscriber(subscribers, 'AccountLedger', { relay, subscriberName: 'AccountLedger', entry: ORDERED_HANDLER });
    flow.registerOrderedSubscriber(accountLedger);
    const audit = new Stack(app, 'Audit', { env: { account: '222222222222', region: 'eu-west-1' } });
    new Subscriber(audit, 'Audit', { flow, entry: HANDLER_ENTRY });
    const assembly = app.synth();
    const queueNames = Object.values(Template.fromJSON(assembly.getStackByName('PaymentSubscribers').template).findResources('AWS::SQS::Queue'))
      .map((q) => q.Properties.QueueName as string)
      .filter((name) => name.endsWith('.fifo'));
    expect(queueNames).toHaveLength(2);
    const body = JSON.stringify(Template.fromJSON(assembly.getStackByName('Orders').template).findResources('AWS::CloudWatch::Dashboard'));
    for (const name of queueNames) expect(body).toContain(name);
    expect(body).toContain('## Ordered subscriber AccountLedger');
    expect(body).not.toContain('Fn::ImportValue');
    expect(orders.dependencies).toEqual([]);
    expect(subscribers.dependencies.map((d) => d.stackName)).toEqual(['Orders']);
  });
});
