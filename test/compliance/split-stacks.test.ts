/**
 * Issue 30: the layout service teams use. A Payments stack owns the flow (its outbox, topic, relay, a producer and a
 * subscriber of its own); a Ledger stack and a Notifications stack each own a subscriber created from the flow
 * (`new Subscriber(stack, id, { flow, entry })`); the dashboard is in the flow's stack, or in an ops stack of its own.
 * Each layout synthesizes without a dependency cycle, passes cdk-nag and the CloudFormation validation, and gives the
 * subscribers of the other stacks what `addSubscriber` gives: alarms, the `Operator` output, a dashboard row and a
 * place in `flow.subscribers`.
 */
import { Annotations, type App, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, test } from 'vitest';
import { FlowDashboard, IdempotentEventFlow, ProcessingMode, Subscriber } from '../../lib';
import { HANDLER_ENTRY } from '../fixtures/construct-test-kit';
import { checkCompliance, type ComplianceResult, complianceApp, formatComplianceResult } from '../support/compliance';

interface Layout {
  readonly app: App;
  readonly flow: IdempotentEventFlow;
  readonly audit: Subscriber;
  readonly ledger: Subscriber;
  readonly notifications: Subscriber;
  readonly stacks: { readonly payments: Stack; readonly ledger: Stack; readonly notifications: Stack; readonly ops?: Stack };
  readonly result: ComplianceResult;
}

/** Builds the layout, the dashboard in the flow's stack (`dashboard: true`) or in an ops stack, and checks it once. */
function layout(dashboardIn: 'flow' | 'ops'): Layout {
  const app = complianceApp();
  const payments = new Stack(app, 'Payments');
  const flow = new IdempotentEventFlow(payments, 'Payments', { dashboard: dashboardIn === 'flow' });
  Annotations.of(flow).acknowledgeWarning('idempotent-event-flow:noAlarmActions', 'A test app: nobody is on call for it.');
  flow.addProducer('TakePayment', { entry: HANDLER_ENTRY });
  const audit = flow.addSubscriber('Audit', { entry: HANDLER_ENTRY });
  const ledgerStack = new Stack(app, 'Ledger');
  const ledger = new Subscriber(ledgerStack, 'Ledger', { flow, entry: HANDLER_ENTRY, publishesEvents: true });
  const notificationsStack = new Stack(app, 'Notifications');
  const notifications = new Subscriber(notificationsStack, 'Notifications', { flow, entry: HANDLER_ENTRY, processingMode: ProcessingMode.LEASE });
  let ops: Stack | undefined;
  if (dashboardIn === 'ops') {
    ops = new Stack(app, 'Ops');
    new FlowDashboard(ops, 'PaymentsDashboard', { relay: flow.relay, relayAlarms: flow.relayAlarms.alarms, subscribers: flow.subscribers });
  }
  const result = checkCompliance(app);
  return { app, flow, audit, ledger, notifications, stacks: { payments, ledger: ledgerStack, notifications: notificationsStack, ops }, result };
}

function template(s: Layout, stack: Stack): Template {
  // synth() is cached: this is the assembly checkCompliance validated.
  return Template.fromJSON(s.app.synth().getStackByName(stack.stackName).template);
}

/** The dashboard body of `stack` as CloudFormation gets it, a JSON string with its references in place. */
function dashboardBody(s: Layout, stack: Stack): string {
  const dashboards = Object.values(template(s, stack).findResources('AWS::CloudWatch::Dashboard'));
  expect(dashboards).toHaveLength(1);
  return JSON.stringify(dashboards[0].Properties.DashboardBody);
}

function layoutTests(get: () => Layout): void {
  test('has no unanswered cdk-nag findings and no CloudFormation validation findings', () => {
    const { result } = get();
    expect(result.unansweredFindings, formatComplianceResult(result)).toEqual([]);
    expect(result.cfnValidationErrors, formatComplianceResult(result)).toEqual([]);
  });

  test('registers the subscribers of the other stacks on the flow, with their alarms', () => {
    const s = get();
    expect(s.flow.subscribers).toEqual([s.audit, s.ledger, s.notifications]);
    expect(s.ledger.flow).toBe(s.flow);
    // relay 2, Audit 5, Ledger 5, Notifications 5 + Blocked
    expect(s.flow.alarms).toHaveLength(2 + 5 + 5 + 6);
  });

  test("puts each subscriber's alarms and Operator output in its own stack, its queues and function named for the flow's dashboard", () => {
    const s = get();
    const ledger = template(s, s.stacks.ledger);
    ledger.resourceCountIs('AWS::CloudWatch::Alarm', 5);
    ledger.resourceCountIs('AWS::Lambda::Function', 1);
    ledger.hasResourceProperties('AWS::Lambda::Function', { FunctionName: Match.stringLikeRegexp('^Ledger-Function-[A-F0-9]{8}$') });
    ledger.resourceCountIs('AWS::SQS::Queue', 3);
    for (const queue of Object.values(ledger.findResources('AWS::SQS::Queue'))) {
      expect(queue.Properties.QueueName).toMatch(/^Ledger-[A-Za-z0-9-]+-[A-F0-9]{8}$/);
    }
    for (const alarm of Object.values(ledger.findResources('AWS::CloudWatch::Alarm'))) {
      expect(alarm.Properties.AlarmName).toMatch(/^Ledger-Alarms-[A-Za-z]+-[A-F0-9]{8}$/);
    }
    const operator = Object.entries(ledger.findOutputs('*')).filter(([id]) => id.startsWith('LedgerOperator'));
    expect(operator).toHaveLength(1);
    expect(JSON.stringify(operator[0][1].Value)).toContain('"subscriberName\\":\\"Ledger\\"');
    template(s, s.stacks.notifications).resourceCountIs('AWS::CloudWatch::Alarm', 6);
    // The flow's own subscriber keeps names CloudFormation generates.
    for (const queue of Object.values(template(s, s.stacks.payments).findResources('AWS::SQS::Queue'))) {
      expect(queue.Properties.QueueName).toBeUndefined();
    }
  });

  test('has no dependency cycle: the subscribers depend on the flow, nothing depends on them but an ops stack', () => {
    const s = get();
    const dependencies = (stack: Stack) => stack.dependencies.map((d) => d.stackName).sort();
    expect(dependencies(s.stacks.payments)).toEqual([]);
    expect(dependencies(s.stacks.ledger)).toEqual(['Payments']);
    expect(dependencies(s.stacks.notifications)).toEqual(['Payments']);
    if (s.stacks.ops) expect(dependencies(s.stacks.ops)).toEqual(['Payments']);
  });
}

/** The row of `subscriber` in a dashboard body: its literal queue and function names and its alarms' ARNs. */
function expectRowOf(s: Layout, body: string, subscriber: Subscriber): void {
  const stack = Stack.of(subscriber);
  const resources = template(s, stack).toJSON().Resources as Record<string, { Type: string; Properties: Record<string, unknown> }>;
  const named = (type: string, property: string) =>
    Object.values(resources).filter((r) => r.Type === type).map((r) => r.Properties[property] as string);
  expect(body).toContain(`## Subscriber ${subscriber.subscriberName} (`);
  for (const queueName of named('AWS::SQS::Queue', 'QueueName')) expect(body).toContain(`\\"QueueName\\",\\"${queueName}\\"`);
  for (const functionName of named('AWS::Lambda::Function', 'FunctionName')) expect(body).toContain(`\\"FunctionName\\",\\"${functionName}\\"`);
  for (const alarmName of named('AWS::CloudWatch::Alarm', 'AlarmName')) expect(body).toContain(`:alarm:${alarmName}`);
}

describe.each([
  {
    dashboardIn: 'flow' as const,
    where: "in the flow's stack",
    dashboardStack: (s: Layout) => s.stacks.payments,
    // the flow's stack refers to no other stack: the other subscribers' rows name their resources by literal names
    alsoExpect: (_s: Layout, body: string) => expect(body).not.toContain('Fn::ImportValue'),
  },
  {
    dashboardIn: 'ops' as const,
    where: 'in an ops stack of its own',
    dashboardStack: (s: Layout) => s.stacks.ops!,
    alsoExpect: (s: Layout) => template(s, s.stacks.payments).resourceCountIs('AWS::CloudWatch::Dashboard', 0),
  },
])('split stacks, the dashboard $where', ({ dashboardIn, dashboardStack, alsoExpect }) => {
  let s: Layout;
  beforeAll(() => {
    s = layout(dashboardIn);
  });

  layoutTests(() => s);

  test('shows a row for the relay and for every subscriber, those of the other stacks with their resources and alarms', () => {
    const body = dashboardBody(s, dashboardStack(s));
    expect(body).toContain('## Relay Payments/Payments/Relay');
    expectRowOf(s, body, s.ledger);
    expectRowOf(s, body, s.notifications);
    expect(body).toContain('## Subscriber Audit (');
    alsoExpect(s, body);
  });
});
