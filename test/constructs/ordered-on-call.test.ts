/**
 * The on-call view of the ordered path (issue 38 item 6): the ordered relay's pipe alarms as the standard relay's
 * (dead letters and failed executions), an alarm for an aggregate held in an ordered subscriber's FIFO queue (the age of
 * its oldest message: a FIFO queue keeps a failed message at its group's head, SQS developer guide, "Available
 * CloudWatch metrics for Amazon SQS"), dashboard rows for both, and every one of their alarms in `flow.alarms`.
 */
import * as path from 'node:path';
import { Duration, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import type { CfnAlarm } from 'aws-cdk-lib/aws-cloudwatch';
import { describe, expect, test } from 'vitest';
import { IdempotentEventFlow } from '../../lib/idempotent-event-flow';
import { FlowDashboard } from '../../lib/monitoring';
import { OrderedRelay, OrderedSubscriber } from '../../lib/ordered';
import { newStack } from '../fixtures/construct-test-kit';
import { RELAY_DEAD_LETTER_ACTION, SUBSCRIBER_DEAD_LETTER_ACTION } from '../../lib/private/dead-letter-expiring';

const ORDERED_HANDLER = path.join(__dirname, '..', 'fixtures', 'ordered-consumer-handler.ts');

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

function metricNames(widget: Widget | undefined): string[] {
  return (widget?.properties.metrics ?? []).map((row) => row.find((cell, index) => index > 0 && typeof cell === 'string' && cell !== '.') as string);
}

function byTitle(all: Widget[], title: string): Widget | undefined {
  return all.find((widget) => widget.properties.title === title);
}

/** HeldAggregate's expression: gaps and function errors while the held message is received, its letter once dead-lettered. */
const HELD_EXPRESSION = 'FILL(gaps, 0) + FILL(errors, 0) + FILL(letters, 0) + FILL(reading, 0)';

function orderedFlow(stack: Stack, subscriberProps: Partial<ConstructorParameters<typeof OrderedSubscriber>[2]> = {}) {
  const flow = new IdempotentEventFlow(stack, 'Orders', { dashboard: true });
  const relay = new OrderedRelay(stack, 'Ordered', { outboxTable: flow.outboxTable });
  const subscriber = new OrderedSubscriber(stack, 'Tracking', { relay, subscriberName: 'Tracking', entry: ORDERED_HANDLER, ...subscriberProps });
  return { flow, relay, subscriber };
}

describe('the ordered relay alarms as the standard relay does', () => {
  test("PipeExecutionFailed fires at the first failed execution of the ordered pipe (AWS/EventBridge/Pipes ExecutionFailed of its PipeName)", () => {
    const stack = newStack();
    const { relay } = orderedFlow(stack);
    const template = Template.fromStack(stack);
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/EventBridge/Pipes',
      MetricName: 'ExecutionFailed',
      Dimensions: [{ Name: 'PipeName', Value: stack.resolve(relay.pipeName) }],
      Statistic: 'Sum',
      Period: 60,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
    expect(relay.alarms).toEqual([relay.relayDeadLetterAlarm, relay.pipeDeadLetterAlarm, relay.executionFailedAlarm, relay.relayDeadLetterExpiringAlarm]);
  });
});

describe("an aggregate held in an ordered subscriber's FIFO queue alarms", () => {
  test("HeldAggregate fires when, in every period of a visibility timeout (plus a minute) for maxMessageAge, the fence held an aggregate behind a gap (the runtime's SequenceGaps) or the function failed whole (Lambda's Errors: timeouts, crashes); not on any Failed message, nor on ApproximateAgeOfOldestMessage (review ro13, RO13-6)", () => {
    const stack = newStack();
    const { subscriber } = orderedFlow(stack);
    const template = Template.fromStack(stack);
    const functionName = stack.resolve(subscriber.consumerFunction.lambdaFunction.functionName);
    // the default visibility timeout is 6 x 30 s = 3 minutes: periods of 4 minutes, 2 of them cover the 5-minute default
    const alarm = stack.resolve((subscriber.heldAggregateAlarm.node.defaultChild as CfnAlarm)._toCloudFormation()) as { Resources: Record<string, { Properties: Record<string, unknown> }> };
    const properties = Object.values(alarm.Resources)[0]!.Properties;
    expect(properties).toMatchObject({ EvaluationPeriods: 2, DatapointsToAlarm: 2, Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching' });
    expect(properties.MetricName).toBeUndefined();
    const queries = properties.Metrics as Array<{ Id: string; Expression?: string; ReturnData?: boolean; MetricStat?: { Metric: { Namespace: string; MetricName: string; Dimensions: unknown[] }; Period: number; Stat: string } }>;
    expect(queries.find((query) => query.Expression !== undefined)).toMatchObject({ Expression: HELD_EXPRESSION });
    const deadLetterQueueName = stack.resolve(subscriber.deadLetterQueue.queueName);
    expect(queries.filter((query) => query.MetricStat !== undefined).map((query) => ({ id: query.Id, Metric: query.MetricStat!.Metric, Period: query.MetricStat!.Period, Stat: query.MetricStat!.Stat, returned: query.ReturnData })).sort((a, b) => a.id.localeCompare(b.id))).toEqual([
      {
        id: 'errors',
        Metric: { Namespace: 'AWS/Lambda', MetricName: 'Errors', Dimensions: [{ Name: 'FunctionName', Value: functionName }] },
        Period: 240,
        Stat: 'Sum',
        returned: false,
      },
      {
        id: 'gaps',
        Metric: {
          Namespace: 'IdempotentEventFlow',
          MetricName: 'SequenceGaps',
          Dimensions: expect.arrayContaining([{ Name: 'FunctionName', Value: functionName }, { Name: 'ProcessingMode', Value: 'transactional' }, { Name: 'Subscriber', Value: 'Tracking' }]),
        },
        Period: 240,
        Stat: 'Sum',
        returned: false,
      },
      {
        id: 'letters',
        Metric: { Namespace: 'AWS/SQS', MetricName: 'ApproximateNumberOfMessagesVisible', Dimensions: [{ Name: 'QueueName', Value: deadLetterQueueName }] },
        Period: 240,
        Stat: 'Maximum',
        returned: false,
      },
      {
        id: 'reading',
        Metric: { Namespace: 'AWS/SQS', MetricName: 'ApproximateNumberOfMessagesNotVisible', Dimensions: [{ Name: 'QueueName', Value: deadLetterQueueName }] },
        Period: 240,
        Stat: 'Maximum',
        returned: false,
      },
    ]);
    // no alarm of the subscriber watches the runtime's Failed metric: a healthy subscriber's transient failures are not a held aggregate
    expect(JSON.stringify(template.findResources('AWS::CloudWatch::Alarm'))).not.toContain('"Failed"');
    const description = stack.resolve(properties.AlarmDescription) as string;
    expect(description).toContain('behind a gap');
    expect(description).toContain('timed out or crashed');
    // not every letter holds its aggregate: one at or below its fence holds nothing, yet counts until it leaves the queue (review ro15, RO15-5)
    expect(description).toContain('one above its aggregate\'s fence holds the aggregate until it is sent back');
    expect(description).toContain('one at or below it holds nothing but counts until it leaves the dead-letter queue');
    expect(description).not.toContain('each holds its aggregate');
    // the queue's age still says when the consumer falls behind
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      Namespace: 'AWS/SQS',
      MetricName: 'ApproximateAgeOfOldestMessage',
      Dimensions: [{ Name: 'QueueName', Value: stack.resolve(subscriber.queue.queueName) }],
      Statistic: 'Maximum',
      Threshold: 300,
    });
    expect(subscriber.alarms).toEqual([subscriber.deadLetterAlarm, subscriber.errorsAlarm, subscriber.heldAggregateAlarm, subscriber.oldestMessageAgeAlarm, subscriber.deadLetterExpiringAlarm]);
  });

  test.each([
    { props: { maxMessageAge: Duration.hours(1) }, period: 240, periods: 15 },
    { props: { maxReceiveCount: 1 }, period: 240, periods: 2 },
    { props: { maxMessageAge: Duration.hours(1), maxReceiveCount: 1 }, period: 240, periods: 15 },
    { props: { maxMessageAge: Duration.days(14) }, period: 240, periods: 360 },
    { props: { visibilityTimeout: Duration.seconds(43_140) }, period: 43_200, periods: 2 },
  ])(
    "HeldAggregate stays in ALARM while the aggregate is held, after the held message is dead-lettered (its letter, above the fence, holds its aggregate): its expression counts the dead-letter queue's letters, so the window of maxMessageAge is reached whatever maxReceiveCount x visibilityTimeout is (review ro14, RO14-4): %o",
    ({ props, period, periods }) => {
      const stack = newStack();
      const { subscriber } = orderedFlow(stack, props);
      const alarm = stack.resolve((subscriber.heldAggregateAlarm.node.defaultChild as CfnAlarm)._toCloudFormation()) as { Resources: Record<string, { Properties: Record<string, unknown> }> };
      const properties = Object.values(alarm.Resources)[0]!.Properties;
      expect(properties).toMatchObject({ EvaluationPeriods: periods, DatapointsToAlarm: periods, Threshold: 1, TreatMissingData: 'notBreaching' });
      const queries = properties.Metrics as Array<{ Id: string; Expression?: string; MetricStat?: { Metric: { MetricName: string; Dimensions: unknown[] }; Period: number } }>;
      expect(queries.find((query) => query.Expression !== undefined)!.Expression).toBe(HELD_EXPRESSION);
      const letters = queries.find((query) => query.Id === 'letters')!.MetricStat!;
      expect(letters.Metric).toMatchObject({ MetricName: 'ApproximateNumberOfMessagesVisible', Dimensions: [{ Name: 'QueueName', Value: stack.resolve(subscriber.deadLetterQueue.queueName) }] });
      for (const query of queries.filter((each) => each.MetricStat !== undefined)) expect(query.MetricStat!.Period).toBe(period);
      // each period is longer than the visibility timeout: every period while the message is received holds a receive
      // (a gap or an error counted), and the period in which SQS dead-letters it holds the letter (CloudWatch evaluates a day at most)
      const visibility = (Object.values(Template.fromStack(stack).findResources('AWS::SQS::Queue')).find((queue) => queue.Properties.RedrivePolicy !== undefined)!.Properties.VisibilityTimeout) as number;
      expect(period).toBeGreaterThan(visibility);
      expect(period * periods).toBeLessThanOrEqual(86_400);
    },
  );

  test('a visibility timeout that leaves HeldAggregate no window of two periods within a day fails at synth naming the prop, the bound and the value', () => {
    expect(() => orderedFlow(newStack(), { visibilityTimeout: Duration.seconds(43_141) })).toThrow(
      /OrderedSubscriber 'Tracking': visibilityTimeout must be 43140 seconds \(11 hours 59 minutes\) or less so that HeldAggregate can evaluate two periods longer than it within a day, but 43141 seconds was provided/,
    );
    expect(() => orderedFlow(newStack(), { visibilityTimeout: Duration.seconds(43_140) })).not.toThrow();
  });

  test('maxMessageAge tunes both, and a value out of range fails at synth naming the prop, the bound and the value', () => {
    const stack = newStack();
    const { subscriber } = orderedFlow(stack, { maxMessageAge: Duration.minutes(20) });
    Template.fromStack(stack).hasResourceProperties('AWS::CloudWatch::Alarm', { MetricName: 'ApproximateAgeOfOldestMessage', Threshold: 1200 });
    expect((subscriber.heldAggregateAlarm.node.defaultChild as CfnAlarm).evaluationPeriods).toBe(5);
    expect(() => orderedFlow(newStack(), { maxMessageAge: Duration.seconds(10) })).toThrow(/OrderedSubscriber 'Tracking'.*maxMessageAge.*1 minute.*10 seconds/);
  });
});

describe('a dead letter of the ordered path about to expire alarms', () => {
  test("DeadLetterExpiring fires when the oldest dead letter of the subscriber's FIFO dead-letter queue has waited its retention less 2 days (a FIFO queue counts from the move)", () => {
    const stack = newStack();
    const { subscriber, relay } = orderedFlow(stack);
    const template = Template.fromStack(stack);
    for (const queue of [subscriber.deadLetterQueue, relay.relayDeadLetterQueue]) {
      template.hasResourceProperties('AWS::CloudWatch::Alarm', {
        Namespace: 'AWS/SQS',
        MetricName: 'ApproximateAgeOfOldestMessage',
        Dimensions: [{ Name: 'QueueName', Value: stack.resolve(queue.queueName) }],
        Statistic: 'Maximum',
        Threshold: 12 * 86_400,
        ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      });
    }
    expect(relay.alarms).toContain(relay.relayDeadLetterExpiringAlarm);
  });

  test("RelayDeadLetterExpiring tells on-call what to do with a relay letter (an event no subscriber received), not the subscriber's redrive", () => {
    const stack = newStack();
    const { subscriber, relay } = orderedFlow(stack);
    const description = (alarm: typeof relay.relayDeadLetterExpiringAlarm): string => stack.resolve((alarm.node.defaultChild as CfnAlarm).alarmDescription) as string;
    expect(description(relay.relayDeadLetterExpiringAlarm)).toContain(RELAY_DEAD_LETTER_ACTION);
    expect(description(relay.relayDeadLetterExpiringAlarm)).not.toContain(SUBSCRIBER_DEAD_LETTER_ACTION);
    expect(description(subscriber.deadLetterExpiringAlarm)).toContain(SUBSCRIBER_DEAD_LETTER_ACTION);
  });
});

describe('flow.alarms and the dashboard cover the ordered path', () => {
  test('registerOrderedRelay and registerOrderedSubscriber put their alarms in flow.alarms and give each a dashboard row with its alarms', () => {
    const stack = newStack();
    const { flow, relay, subscriber } = orderedFlow(stack);
    const before = flow.alarms.length;

    flow.registerOrderedRelay(relay);
    flow.registerOrderedSubscriber(subscriber);

    expect(flow.alarms.slice(before)).toEqual([...relay.alarms, ...subscriber.alarms]);
    expect(flow.orderedRelays).toEqual([relay]);
    expect(flow.orderedSubscribers).toEqual([subscriber]);
    const all = widgets(stack);
    expect(metricNames(byTitle(all, 'Ordered pipe executions'))).toEqual(['Invocations', 'ExecutionFailed', 'ExecutionThrottled', 'ExecutionTimeout']);
    expect(metricNames(byTitle(all, 'Ordered relay queues (messages)'))).toEqual(['ApproximateNumberOfMessagesVisible', 'ApproximateNumberOfMessagesVisible', 'ApproximateNumberOfMessagesVisible']);
    expect(metricNames(byTitle(all, 'Tracking: FIFO queue'))).toEqual(['ApproximateNumberOfMessagesVisible', 'ApproximateAgeOfOldestMessage']);
    expect(metricNames(byTitle(all, 'Tracking: dead-letter queue (messages)'))).toEqual(['ApproximateNumberOfMessagesVisible']);
    const alarmRows = all.filter((widget) => widget.type === 'alarm').map((widget) => [widget.properties.title, widget.properties.alarms?.length]);
    expect(alarmRows).toContainEqual([`Ordered relay ${relay.node.path}: alarms`, 4]);
    expect(alarmRows).toContainEqual(['Ordered subscriber Tracking: alarms', 5]);
  });

  test('an ordered subscriber of a registered relay that is not registered fails at synth (its alarms would be missing from flow.alarms)', () => {
    const stack = newStack();
    const { flow, relay } = orderedFlow(stack);
    flow.registerOrderedRelay(relay);
    expect(() => Template.fromStack(stack)).toThrow(/OrderedSubscriber.*Tracking.*registerOrderedSubscriber/);
  });

  test('a relay or subscriber registered twice, or a subscriber of an unregistered relay, is refused', () => {
    const stack = newStack();
    const { flow, relay, subscriber } = orderedFlow(stack);
    expect(() => flow.registerOrderedSubscriber(subscriber)).toThrow(/registerOrderedRelay/);
    flow.registerOrderedRelay(relay);
    expect(() => flow.registerOrderedRelay(relay)).toThrow(/registered already/);
    flow.registerOrderedSubscriber(subscriber);
    expect(() => flow.registerOrderedSubscriber(subscriber)).toThrow(/registered already/);
  });

  test('FlowDashboard alone takes ordered relays and subscribers', () => {
    const stack = newStack();
    const { relay, subscriber } = orderedFlow(stack);
    const view = new FlowDashboard(stack, 'OrderedView', { orderedRelays: [relay], orderedSubscribers: [subscriber] });
    const dashboards = Template.fromStack(stack).findResources('AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(dashboards[stack.getLogicalId(view.dashboard.node.defaultChild as never)]);
    expect(body).toContain('Tracking: FIFO queue');
    expect(body).toContain('Ordered pipe executions');
  });
});
