import { Duration } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { alarmArnFor, physicalNamesOf } from '../consumer/private/cross-stack-names';
import type { Subscriber } from '../consumer/subscriber';
import type { OrderedRelay } from '../ordered/ordered-relay';
import type { OrderedSubscriber } from '../ordered/ordered-subscriber';
import type { OutboxRelay } from '../outbox/outbox-relay';
import { AttachedAlarmsWidget } from '../private/attached-alarms-widget';
import { validateStringPattern } from '../private/validate-props';
import { SubscriberAlarms } from './subscriber-alarms';
import { validationError } from '../private/validation-error';

/** Period of every graph: what the alarms compare is 1 minute, but 5-minute points read better over hours. */
const GRAPH_PERIOD = Duration.minutes(5);
/** Width of one graph: four side by side on the 24-unit grid. */
const GRAPH_WIDTH = 6;
const GRAPH_HEIGHT = 6;
const FULL_WIDTH = 24;
/** The percentiles of end-to-end latency drawn. */
const LATENCY_PERCENTILES = ['p50', 'p90', 'p99'] as const;
/** A CloudWatch dashboard name: letters, digits, `-` and `_`, at most 255 characters (PutDashboard API reference). */
const DASHBOARD_NAME_PATTERN = /^[A-Za-z0-9_-]{1,255}$/;

/** Properties of {@link FlowDashboard}. */
export interface FlowDashboardProps {
  /**
   * The dashboard's name: letters, digits, `-` and `_`, at most 255 characters.
   *
   * @default - a name CloudFormation generates
   */
  readonly dashboardName?: string;

  /**
   * The relay whose pipe and dead-letter queue get a row (more with `addRelay`).
   *
   * @default - no relay row
   */
  readonly relay?: OutboxRelay;

  /**
   * Alarms shown in the relay's row, e.g. `flow.relayAlarms.alarms`; only with `relay`.
   *
   * @default - none
   */
  readonly relayAlarms?: cloudwatch.IAlarm[];

  /**
   * Subscribers that get a row each (more with `addSubscriber`). Each row shows the subscriber's `SubscriberAlarms`
   * (`IdempotentEventFlow.addSubscriber` creates them) when it has them.
   *
   * @default - no subscriber rows
   */
  readonly subscribers?: Subscriber[];

  /**
   * Ordered relays that get a row each (more with `addOrderedRelay`), with their alarms.
   *
   * @default - no ordered relay rows
   */
  readonly orderedRelays?: OrderedRelay[];

  /**
   * Ordered subscribers that get a row each (more with `addOrderedSubscriber`), with their alarms.
   *
   * @default - no ordered subscriber rows
   */
  readonly orderedSubscribers?: OrderedSubscriber[];
}

/**
 * A CloudWatch dashboard of an event flow, usable alone or through `IdempotentEventFlow`'s `dashboard` prop:
 * - per relay: the pipe's invocations, failed, partially failed, throttled and timed-out executions and duration, its
 *   dead-letter queue (depth and oldest message), and the relay's alarms;
 * - per subscriber: the runtime's outcomes (Processed, Duplicates, Failed, Blocked, DeadLettered, AlreadyBlocked), the
 *   queue's depth and oldest message, both dead-letter queues, the function's errors, throttles and duration, the
 *   end-to-end latency (p50, p90, p99 of `EventAge`), and the subscriber's alarms;
 * - per ordered relay: the pipe's executions, its three queues, the relay queue's oldest message, the fan-out function's
 *   errors and throttles, and the relay's alarms;
 * - per ordered subscriber: its FIFO queue's depth and oldest message (a held aggregate), its dead-letter queue, its
 *   function, and its alarms.
 *
 * cdk-monitoring-constructs has no Pipes monitor; users of its facade can add the same metrics with `monitorCustom`
 * from the `metric*()` methods of `OutboxRelay` and `Subscriber`.
 */
export class FlowDashboard extends Construct {
  /** The CloudWatch dashboard. */
  public readonly dashboard: cloudwatch.Dashboard;

  public constructor(scope: Construct, id: string, props: FlowDashboardProps = {}) {
    super(scope, id);
    validateStringPattern(`FlowDashboard '${id}'`, 'dashboardName', props.dashboardName, DASHBOARD_NAME_PATTERN, 'letters, digits, - and _, 1 to 255 characters');
    if (props.relayAlarms !== undefined && props.relay === undefined) {
      throw validationError(`FlowDashboard '${id}': relayAlarms needs relay (the alarms are shown in the relay's row)`);
    }
    this.dashboard = new cloudwatch.Dashboard(this, 'Resource', {
      dashboardName: props.dashboardName,
      defaultInterval: Duration.hours(3),
    });
    if (props.relay !== undefined) this.addRelay(props.relay, props.relayAlarms);
    for (const subscriber of props.subscribers ?? []) this.addSubscriber(subscriber);
    for (const relay of props.orderedRelays ?? []) this.addOrderedRelay(relay);
    for (const subscriber of props.orderedSubscribers ?? []) this.addOrderedSubscriber(subscriber);
  }

  /**
   * Adds a row for an ordered relay: its pipe's executions, its three queues (the FIFO relay queue, its dead-letter
   * queue and the pipe's dead-letter queue), the relay queue's oldest message, the fan-out function, and `alarms`.
   *
   * @param alarms shown in the row; when omitted, the relay's own (`relay.alarms`)
   */
  public addOrderedRelay(relay: OrderedRelay, alarms: cloudwatch.IAlarm[] = relay.alarms): void {
    const sum = { period: GRAPH_PERIOD, statistic: cloudwatch.Stats.SUM };
    const maximum = { period: GRAPH_PERIOD, statistic: cloudwatch.Stats.MAXIMUM };
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown:
          `## Ordered relay ${relay.node.path}\nOutbox stream → EventBridge Pipe → SQS FIFO relay queue → fan-out → SNS FIFO topic. ` +
          'A dead letter holds its aggregate; replay from the outbox history: `idempotent-event-flow fence replay`.',
        width: FULL_WIDTH,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph('Ordered pipe executions', [
        relay.metricInvocations({ ...sum, label: 'Invocations' }),
        relay.metricExecutionFailed({ ...sum, label: 'Failed' }),
        relay.metricExecutionThrottled({ ...sum, label: 'Throttled' }),
        relay.metricExecutionTimeout({ ...sum, label: 'Timed out' }),
      ]),
      graph('Ordered relay queues (messages)', [
        relay.relayQueue.metricApproximateNumberOfMessagesVisible({ ...maximum, label: 'Relay queue' }),
        relay.relayDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ ...maximum, label: 'Relay DLQ' }),
        relay.pipeDeadLetterQueue.metricApproximateNumberOfMessagesVisible({ ...maximum, label: 'Pipe DLQ' }),
      ]),
      graph('Ordered relay queue: oldest message (s)', [relay.relayQueue.metricApproximateAgeOfOldestMessage({ ...maximum, label: 'Oldest' })]),
      graph('Ordered fan-out errors and throttles', [relay.fanOutFunction.metricErrors({ ...sum, label: 'Errors' }), relay.fanOutFunction.metricThrottles({ ...sum, label: 'Throttles' })]),
    );
    this.addAlarmRow(`Ordered relay ${relay.node.path}: alarms`, alarms);
  }

  /**
   * Adds a row for an ordered subscriber: its FIFO queue (depth and oldest message: a held aggregate keeps it
   * growing), its dead-letter queue, its function, and `alarms`. An ordered subscriber registered with a flow in
   * another stack (`flow.registerOrderedSubscriber`) is shown by the names it was given (its queues, function and
   * alarms), as a `Subscriber` is (see {@link addSubscriber}); any other through references.
   *
   * @param alarms shown in the row; when omitted, the subscriber's own (`subscriber.alarms`)
   */
  public addOrderedSubscriber(subscriber: OrderedSubscriber, alarms: cloudwatch.IAlarm[] = subscriber.alarms): void {
    const sum = { period: GRAPH_PERIOD, statistic: cloudwatch.Stats.SUM };
    const maximum = { period: GRAPH_PERIOD, statistic: cloudwatch.Stats.MAXIMUM };
    const name = subscriber.subscriberName;
    // Registered with a flow in another stack, it has literal names (as a Subscriber there): see addSubscriber.
    const names = physicalNamesOf(subscriber);
    const queue = queueMetrics(subscriber.queue, names?.queueName);
    const deadLetterQueue = queueMetrics(subscriber.deadLetterQueue, names?.deadLetterQueueName);
    const fn = functionMetrics(subscriber.consumerFunction.lambdaFunction, names?.functionName);
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `## Ordered subscriber ${name}\nHeld aggregates: \`idempotent-event-flow fence list\`; dead letters: \`idempotent-event-flow dlq list\`.`,
        width: FULL_WIDTH,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph(`${name}: FIFO queue`, [queue('ApproximateNumberOfMessagesVisible', { ...maximum, label: 'Visible' })], [
        queue('ApproximateAgeOfOldestMessage', { ...maximum, label: 'Oldest message (s)' }),
      ]),
      graph(`${name}: dead-letter queue (messages)`, [deadLetterQueue('ApproximateNumberOfMessagesVisible', { ...maximum, label: 'DLQ' })]),
      graph(`${name}: function errors and throttles`, [fn('Errors', { ...sum, label: 'Errors' }), fn('Throttles', { ...sum, label: 'Throttles' })]),
      graph(`${name}: function duration (ms)`, [fn('Duration', { period: GRAPH_PERIOD, statistic: 'p50', label: 'p50' }), fn('Duration', { period: GRAPH_PERIOD, statistic: 'p99', label: 'p99' })]),
    );
    this.addAlarmRow(`Ordered subscriber ${name}: alarms`, alarms);
  }

  /**
   * Adds a row for a relay: its pipe's executions and duration, its dead-letter queue, and `alarms`.
   *
   * @param alarms shown in the row, e.g. `flow.relayAlarms.alarms`; none when omitted
   */
  public addRelay(relay: OutboxRelay, alarms: cloudwatch.IAlarm[] = []): void {
    const sum = { period: GRAPH_PERIOD, statistic: cloudwatch.Stats.SUM };
    const deadLetterQueue = relay.deadLetterQueue;
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({ markdown: `## Relay ${relay.node.path}\nOutbox stream → EventBridge Pipe → topic. A message in its dead-letter queue is a batch the pipe gave up on: replay its events from the outbox (\`idempotent-event-flow replay\`).`, width: FULL_WIDTH, height: 2 }),
    );
    this.dashboard.addWidgets(
      graph('Pipe executions', [
        relay.metricInvocations({ ...sum, label: 'Invocations' }),
        relay.metricExecutionFailed({ ...sum, label: 'Failed' }),
        relay.metricExecutionPartiallyFailed({ ...sum, label: 'Partially failed' }),
        relay.metricExecutionThrottled({ ...sum, label: 'Throttled' }),
        relay.metricExecutionTimeout({ ...sum, label: 'Timed out' }),
      ]),
      graph('Pipe duration (ms)', [relay.metricDuration({ period: GRAPH_PERIOD, label: 'Average' }), relay.metricDuration({ period: GRAPH_PERIOD, statistic: 'p99', label: 'p99' })]),
      graph('Pipe dead-letter queue (messages)', [deadLetterQueue.metricApproximateNumberOfMessagesVisible({ period: GRAPH_PERIOD, statistic: cloudwatch.Stats.MAXIMUM, label: 'Visible' })]),
      graph('Pipe dead-letter queue: oldest message (s)', [deadLetterQueue.metricApproximateAgeOfOldestMessage({ period: GRAPH_PERIOD, statistic: cloudwatch.Stats.MAXIMUM, label: 'Oldest' })]),
    );
    this.addAlarmRow(`Relay ${relay.node.path}: alarms`, alarms);
  }

  /**
   * Adds a row for a subscriber: the runtime's outcomes, its queues, its function, its end-to-end latency and `alarms`.
   * A subscriber created with `flow` in another stack than its flow is shown by the names it was given (its queues,
   * function and alarms), so a dashboard in the flow's stack does not refer to the subscriber's stack, which refers to
   * the flow's. Any other subscriber is shown through references: put the dashboard in a stack that may depend on the
   * subscriber's (its own, or an ops stack).
   *
   * @param alarms shown in the row; when omitted, the alarms of the subscriber's `SubscriberAlarms` (construct id
   * `Alarms`, as `IdempotentEventFlow.addSubscriber` creates them), if it has them
   */
  public addSubscriber(subscriber: Subscriber, alarms?: cloudwatch.IAlarm[]): void {
    const sum = { period: GRAPH_PERIOD, statistic: cloudwatch.Stats.SUM };
    const maximum = { period: GRAPH_PERIOD, statistic: cloudwatch.Stats.MAXIMUM };
    const ownAlarms = subscriber.node.tryFindChild('Alarms');
    const shown = alarms ?? (ownAlarms instanceof SubscriberAlarms ? ownAlarms.alarms : []);
    // A subscriber in another stack than its flow has literal names: a dashboard in the flow's stack uses them, as a
    // reference to the subscriber's stack would be a dependency cycle (that stack refers to the flow's).
    const names = physicalNamesOf(subscriber);
    const queue = (which: sqs.IQueue, literalName: string | undefined) => queueMetrics(which, literalName);
    const consumerQueue = queue(subscriber.queue, names?.queueName);
    const deadLetterQueue = queue(subscriber.deadLetterQueue, names?.deadLetterQueueName);
    const subscriptionDeadLetterQueue = subscriber.subscriptionDeadLetterQueue === undefined ? undefined : queue(subscriber.subscriptionDeadLetterQueue, names?.subscriptionDeadLetterQueueName);
    const fn = functionMetrics(subscriber.consumerFunction.lambdaFunction, names?.functionName);
    const name = subscriber.subscriberName;
    this.dashboard.addWidgets(
      new cloudwatch.TextWidget({
        markdown: `## Subscriber ${name} (${subscriber.processingMode})\nDead letters: \`idempotent-event-flow dlq list\`; blocked messages: \`idempotent-event-flow blocked list\`.`,
        width: FULL_WIDTH,
        height: 2,
      }),
    );
    this.dashboard.addWidgets(
      graph(`${name}: outcomes`, [
        subscriber.metricProcessed({ ...sum, label: 'Processed' }),
        subscriber.metricDuplicates({ ...sum, label: 'Duplicates' }),
        subscriber.metricFailed({ ...sum, label: 'Failed (retried)' }),
        subscriber.metricBlocked({ ...sum, label: 'Blocked' }),
        subscriber.metricDeadLettered({ ...sum, label: 'DeadLettered' }),
        subscriber.metricAlreadyBlocked({ ...sum, label: 'AlreadyBlocked' }),
      ]),
      graph(
        `${name}: end-to-end latency (ms)`,
        LATENCY_PERCENTILES.map((statistic) => subscriber.metricEventAge({ period: GRAPH_PERIOD, statistic, label: statistic })),
      ),
      graph(`${name}: queue`, [consumerQueue('ApproximateNumberOfMessagesVisible', { ...maximum, label: 'Visible' })], [
        consumerQueue('ApproximateAgeOfOldestMessage', { ...maximum, label: 'Oldest message (s)' }),
      ]),
      graph(`${name}: dead-letter queues (messages)`, [
        deadLetterQueue('ApproximateNumberOfMessagesVisible', { ...maximum, label: 'Queue DLQ' }),
        // None across Regions: the subscription has no dead-letter queue there.
        ...(subscriptionDeadLetterQueue === undefined ? [] : [subscriptionDeadLetterQueue('ApproximateNumberOfMessagesVisible', { ...maximum, label: 'Subscription DLQ' })]),
      ]),
    );
    this.dashboard.addWidgets(
      graph(`${name}: function errors and throttles`, [fn('Errors', { ...sum, label: 'Errors' }), fn('Throttles', { ...sum, label: 'Throttles' })]),
      graph(`${name}: function duration (ms)`, [fn('Duration', { period: GRAPH_PERIOD, statistic: 'p50', label: 'p50' }), fn('Duration', { period: GRAPH_PERIOD, statistic: 'p99', label: 'p99' })]),
    );
    this.addAlarmRow(`Subscriber ${name}: alarms`, shown);
  }

  private addAlarmRow(title: string, alarms: cloudwatch.IAlarm[]): void {
    if (alarms.length === 0) return;
    // rendered at synth: an alarm removed meanwhile (node.tryRemoveChild) is left out rather than referenced
    this.dashboard.addWidgets(
      new AttachedAlarmsWidget(title, [...alarms], { width: FULL_WIDTH, height: 2 + Math.ceil(alarms.length / 4) }, (alarm) => alarmArnFor(this, alarm)),
    );
  }
}

type MetricOf = (metricName: string, props: cloudwatch.MetricOptions) => cloudwatch.IMetric;

/** A queue's `AWS/SQS` metrics, by its literal name when it has one (see cross-stack-names.ts), else by its reference. */
function queueMetrics(queue: sqs.IQueue, literalName: string | undefined): MetricOf {
  return (metricName, props) =>
    literalName === undefined
      ? queue.metric(metricName, props)
      : new cloudwatch.Metric({ namespace: 'AWS/SQS', metricName, dimensionsMap: { QueueName: literalName }, ...props });
}

/** The consumer function's `AWS/Lambda` metrics, by its literal name when it has one, else by its reference. */
function functionMetrics(fn: lambda.IFunction, literalName: string | undefined): MetricOf {
  return (metricName, props) =>
    literalName === undefined
      ? fn.metric(metricName, props)
      : new cloudwatch.Metric({ namespace: 'AWS/Lambda', metricName, dimensionsMap: { FunctionName: literalName }, ...props });
}

function graph(title: string, left: cloudwatch.IMetric[], right: cloudwatch.IMetric[] = []): cloudwatch.GraphWidget {
  return new cloudwatch.GraphWidget({ title, left, right, width: GRAPH_WIDTH, height: GRAPH_HEIGHT, period: GRAPH_PERIOD });
}
