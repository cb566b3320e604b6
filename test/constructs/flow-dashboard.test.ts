import { Duration, Stack } from 'aws-cdk-lib';
import { Match, Template } from 'aws-cdk-lib/assertions';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow } from '../../lib/idempotent-event-flow';
import { FlowDashboard } from '../../lib/monitoring';
import { OutboxRelay, OutboxTable } from '../../lib/outbox';
import { ProcessingMode } from '../../lib/consumer';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

interface Widget {
  readonly type: string;
  readonly properties: { readonly title?: string; readonly markdown?: string; readonly metrics?: unknown[][]; readonly alarms?: unknown[] };
}

/** The dashboard's widgets, its body parsed with every token replaced by `<token>`. */
function widgets(stack: Stack): Widget[] {
  const dashboards = Template.fromStack(stack).findResources('AWS::CloudWatch::Dashboard');
  expect(Object.keys(dashboards)).toHaveLength(1);
  const body = Object.values(dashboards)[0]!.Properties.DashboardBody as string | { 'Fn::Join': [string, unknown[]] };
  const text = typeof body === 'string' ? body : body['Fn::Join'][1].map((part) => (typeof part === 'string' ? part : '<token>')).join('');
  return (JSON.parse(text) as { widgets: Widget[] }).widgets;
}

/** Metric names of a graph, in order (a metric row is [namespace, name, ...dimensions, options]). */
function metricNames(widget: Widget | undefined): string[] {
  return (widget?.properties.metrics ?? []).map((row) => row.find((cell, index) => index > 0 && typeof cell === 'string' && cell !== '.') as string);
}

function byTitle(all: Widget[], title: string): Widget | undefined {
  return all.find((widget) => widget.properties.title === title);
}

describe('FlowDashboard', () => {
  test('IdempotentEventFlow has no dashboard unless asked (opt-in)', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });

    Template.fromStack(stack).resourceCountIs('AWS::CloudWatch::Dashboard', 0);
    expect(flow.dashboard).toBeUndefined();
  });

  test('dashboard: true shows the relay and each subscriber added later, with their alarms', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders', { dashboard: true });
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    flow.addSubscriber('Invoicing', { entry: HANDLER_ENTRY, processingMode: ProcessingMode.MULTI_STEP });

    const all = widgets(stack);

    expect(metricNames(byTitle(all, 'Pipe executions'))).toEqual(['Invocations', 'ExecutionFailed', 'ExecutionPartiallyFailed', 'ExecutionThrottled', 'ExecutionTimeout']);
    expect(metricNames(byTitle(all, 'Pipe dead-letter queue (messages)'))).toEqual(['ApproximateNumberOfMessagesVisible']);
    for (const name of ['Billing', 'Invoicing']) {
      expect(metricNames(byTitle(all, `${name}: outcomes`))).toEqual(['Processed', 'Duplicates', 'Failed', 'Blocked', 'DeadLettered', 'AlreadyBlocked']);
      expect(metricNames(byTitle(all, `${name}: queue`))).toEqual(['ApproximateNumberOfMessagesVisible', 'ApproximateAgeOfOldestMessage']);
      expect(metricNames(byTitle(all, `${name}: dead-letter queues (messages)`))).toEqual(['ApproximateNumberOfMessagesVisible', 'ApproximateNumberOfMessagesVisible']);
      expect(metricNames(byTitle(all, `${name}: function errors and throttles`))).toEqual(['Errors', 'Throttles']);
      expect(metricNames(byTitle(all, `${name}: function duration (ms)`))).toEqual(['Duration', 'Duration']);
    }
    // alarms: the relay's 2, Billing's 5, Invoicing's 6 (with Blocked)
    const alarmRows = all.filter((widget) => widget.type === 'alarm');
    expect(alarmRows.map((widget) => [widget.properties.title, widget.properties.alarms?.length])).toEqual([
      ['Relay TestStack/Orders/Relay: alarms', 2],
      ['Subscriber Billing: alarms', 5],
      ['Subscriber Invoicing: alarms', 6],
    ]);
  });

  test('leaves out an alarm removed after the dashboard was made (an escape hatch), rather than referencing a resource that is gone', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders', { dashboard: true });
    flow.relayAlarms.node.tryRemoveChild('DeadLetters');

    const relayRow = widgets(stack).find((widget) => widget.type === 'alarm');

    expect(relayRow?.properties.alarms).toHaveLength(1);
    const body = JSON.stringify(Template.fromStack(stack).findResources('AWS::CloudWatch::Dashboard'));
    expect(body).not.toContain('RelayAlarmsDeadLetters');
  });

  test('draws end-to-end latency as p50, p90 and p99 of the runtime\'s EventAge metric', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders', { dashboard: true });
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });

    const latency = byTitle(widgets(stack), 'Billing: end-to-end latency (ms)');

    expect(metricNames(latency)).toEqual(['EventAge', 'EventAge', 'EventAge']);
    const stats = latency?.properties.metrics?.map((row) => (row[row.length - 1] as { stat?: string }).stat);
    expect(stats).toEqual(['p50', 'p90', 'p99']);
    expect(latency?.properties.metrics?.[0]?.[0]).toBe('IdempotentEventFlow');
  });

  test('usable alone: a relay and subscribers given as props, a name of your choosing', () => {
    const stack = newStack();
    const key = new kms.Key(stack, 'Key');
    const relay = new OutboxRelay(stack, 'Relay', { outboxTable: new OutboxTable(stack, 'Outbox'), topic: new sns.Topic(stack, 'Topic', { masterKey: key }) });

    new FlowDashboard(stack, 'Ops', { relay, dashboardName: 'orders-ops' });

    Template.fromStack(stack).hasResourceProperties('AWS::CloudWatch::Dashboard', { DashboardName: 'orders-ops' });
    expect(byTitle(widgets(stack), 'Pipe executions')).toBeDefined();
    expect(widgets(stack).filter((widget) => widget.type === 'alarm')).toEqual([]);
  });

  test('fails if dashboardName has a character CloudWatch refuses', () => {
    const stack = newStack();
    expect(() => new FlowDashboard(stack, 'Ops', { dashboardName: 'orders ops' })).toThrow(/FlowDashboard 'Ops': dashboardName must .*letters, digits, - and _.*'orders ops'/);
  });

  test('fails if relayAlarms is given without relay', () => {
    const stack = newStack();
    expect(() => new FlowDashboard(stack, 'Ops', { relayAlarms: [] })).toThrow(/relayAlarms needs relay/);
  });
});

describe('EndToEndLatency alarm (maxEndToEndLatency)', () => {
  test('alarms when the p99 of EventAge over 5 minutes reaches the threshold, in milliseconds', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders', { maxEndToEndLatency: Duration.seconds(30) });
    const billing = flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });

    Template.fromStack(stack).hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'IdempotentEventFlow',
      MetricName: 'EventAge',
      ExtendedStatistic: 'p99',
      Period: 300,
      Threshold: 30_000,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Dimensions: Match.arrayWith([{ Name: 'Subscriber', Value: 'Billing' }]),
    });
    expect(flow.alarms).toHaveLength(2 + 6);
    expect(billing.node.tryFindChild('Alarms')?.node.tryFindChild('EndToEndLatency')).toBeDefined();
  });

  test('no latency alarm by default', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    flow.addSubscriber('Billing', { entry: HANDLER_ENTRY });
    expect(Object.keys(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm', { Properties: { MetricName: 'EventAge' } }))).toEqual([]);
  });

  test('fails if maxEndToEndLatency is below 1 second, naming the prop, the bound and the value', () => {
    const stack = newStack();
    expect(() => new IdempotentEventFlow(stack, 'Orders', { maxEndToEndLatency: Duration.millis(500) })).toThrow(
      "IdempotentEventFlow 'Orders': maxEndToEndLatency must be 1 second or more, but 500 millis was provided",
    );
  });
});
