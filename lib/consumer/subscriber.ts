import { Duration, Names, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct, type IConstruct } from 'constructs';
import { CONSUMER_METRICS } from '../../lambda/contract/metric-names';
import type { IOutboxTable } from '../outbox/outbox-table';
import { grantKeyViaService } from '../private/kms-actions';
import { ConsumerFunction } from './consumer-function';
import { ConsumerQueue } from './consumer-queue';
import { IInboxTable, InboxTable } from './inbox-table';
import { ProcessingMode } from './processing-mode';
import { CONSUMER_DEFAULTS, minimumVisibilityTimeout } from './private/defaults';
import { runtimeModeName, usesInbox } from './private/processing-modes';
import { claimSubscriberName } from './private/subscriber-names';
import { warnOnKeysOutsideEnvelope } from './private/filter-policy-keys';
import { createSubscriptionDeadLetterQueue, subscribeQueue } from './private/subscription';
import { validateSubscriberProps } from './private/validate-subscriber-props';
import type { SubscriberDefaults, SubscriberOptions } from './subscriber-options';
import { nameSubscriberResources, physicalNamesOf } from './private/cross-stack-names';
import { validationError } from '../private/validation-error';
import { libraryGrantOrResource } from '../private/library-statements';
import { describeEnvironment } from '../private/environments';
import { type FlowPlacement, isImportedFlow, placeSubscriber, recordPlacement } from './private/flow-placement';
import { createOwnQueueKey } from './private/own-queue-key';

/**
 * What Lambda's SQS event source mapping does with the queue on the function's behalf (Lambda developer guide,
 * "Execution role permissions" for SQS; the actions `Queue.grantConsumeMessages` grants).
 */
const SQS_CONSUME_ACTIONS = ['sqs:ReceiveMessage', 'sqs:ChangeMessageVisibility', 'sqs:GetQueueUrl', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes'];

/**
 * An event flow a {@link Subscriber} joins with its `flow` prop: `IdempotentEventFlow` implements it. The subscriber
 * subscribes to the flow's topic, encrypts its queues with the flow's key, appends to the flow's outbox (with
 * `publishesEvents`), and is then registered on the flow, which gives it what `addSubscriber` gives: alarms, the
 * `Operator` output and a row on the flow's dashboard.
 */
export interface IEventFlow extends IConstruct {
  /** The topic subscribers subscribe to. */
  readonly topic: sns.ITopic;
  /** The key that encrypts the topic and every subscriber's queues (SNS may use it for this topic's deliveries). */
  readonly encryptionKey: kms.IKey;
  /** The outbox a subscriber with `publishesEvents` appends its events to. */
  readonly outboxTable: IOutboxTable;
  /** What the flow's subscribers default to. */
  readonly subscriberDefaults: SubscriberDefaults;

  /**
   * Gives `subscriber` what `addSubscriber` gives (alarms, the `Operator` output, a dashboard row) and adds it to the
   * flow's subscribers. A `Subscriber` created with `flow` calls it itself, at the end of its constructor; it fails for
   * a subscriber created with another flow or without one, for one registered before, and for a second subscriber of
   * the same `subscriberName`.
   */
  registerSubscriber(subscriber: Subscriber): void;
}

/** Properties of a {@link Subscriber}. */
export interface SubscriberProps extends SubscriberOptions {
  /**
   * The event flow to subscribe to, e.g. an `IdempotentEventFlow` of another stack:
   * `new Subscriber(ledgerStack, 'Ledger', { flow, entry })`. The subscriber then uses the flow's topic, key and
   * outbox, its `removalPolicy` and `logEncryptionKey` default to the flow's, and it gets what `addSubscriber` gives:
   * alarms, the `Operator` output, a dashboard row and a place in `flow.subscribers`. In another stack than the flow,
   * its queues, consumer function and alarms get names derived from their stack names and construct paths (at most 80,
   * 64 and 255 characters), so a dashboard in the flow's stack can show them without a reference back to this stack (which would
   * be a dependency cycle). Not with `topic`, `encryptionKey` or `outboxTable`.
   *
   * The stack may be in another account or Region than the flow (both stacks with an explicit `env`; docs/CROSS-ACCOUNT.md):
   * the subscriber then encrypts its queues and inbox with a key of its own (construct id `QueueKey`) that lets SNS
   * deliver from the flow's topic, the subscription is created from this stack in the topic's Region (so it needs no
   * confirmation), and the flow's topic policy lets this account subscribe this queue (`sns:Subscribe` with
   * `sns:Protocol` and `sns:Endpoint` conditions). Its alarms and `Operator` output stay in this stack; the flow's
   * dashboard names it without graphs. Not with `publishesEvents` (a DynamoDB transaction can not span accounts or
   * Regions). A flow deployed by another pipeline: `IdempotentEventFlow.fromFlowAttributes`.
   *
   * @default - no flow: `topic` is required
   */
  readonly flow?: IEventFlow;

  /**
   * The topic the outbox relay publishes events to; a standard topic (EventBridge Pipes can not publish to a FIFO
   * topic). Not with `flow`, which gives its own.
   *
   * @default - the flow's topic; without `flow` it is required
   */
  readonly topic?: sns.ITopic;

  /**
   * Key that encrypts the consumer queue, its dead-letter queue and the subscription's dead-letter queue.
   *
   * Pass the topic's customer-managed key. SNS encrypts each delivery with the queue's key, so the key policy
   * must let `sns.amazonaws.com` use `kms:GenerateDataKey*` and `kms:Decrypt` for deliveries from this topic
   * (`EventTopic`'s key does); this construct does not change the key policy. The inbox table this construct
   * creates is encrypted with it too (an `inboxTable` you pass keeps its own encryption).
   *
   * @default - the flow's key with `flow`; otherwise SQS-managed server-side encryption (SSE-SQS)
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * The outbox the handler appends events to; only with `publishesEvents: true`, which requires it unless `flow` is
   * given (then the flow's outbox is used, and this prop is refused).
   *
   * @default - the flow's outbox with `flow` and `publishesEvents`; otherwise no outbox: the subscriber does not publish events
   */
  readonly outboxTable?: IOutboxTable;

  /**
   * The CloudEvents `source` of the events the handler appends, unless an event sets its own; only with
   * `publishesEvents: true`.
   *
   * @default - the outbox table's `eventSource`
   */
  readonly eventSource?: string;

  /**
   * Actions of this subscriber's alarms (only with `flow`, which creates them). A subscriber in another account or
   * Region than its flow can not use the flow's `alarmActions` (they are resources of the flow's environment): give it
   * actions of its own environment here.
   *
   * @default - the flow's `alarmActions` when the flow is in this subscriber's environment; otherwise none, and a warning
   * says that nobody is notified
   */
  readonly alarmActions?: cloudwatch.IAlarmAction[];
}

/**
 * One idempotent consumer of the event topic.
 *
 * It subscribes an encrypted, TLS-only SQS queue (with its dead-letter queue) to the topic with raw message
 * delivery and a redrive dead-letter queue of its own, and consumes the queue with a Lambda function that reports
 * batch item failures. With the default `ProcessingMode.TRANSACTIONAL`, the function's runtime records each
 * message's event id in the inbox table in the same DynamoDB transaction as the handler's writes, so every event
 * takes effect at most once per subscriber within `deduplicationWindow`, and at least once as long as it is not
 * dead-lettered. The other modes (see {@link ProcessingMode}) cover effects outside one DynamoDB transaction.
 */
export class Subscriber extends Construct implements iam.IGrantable {
  /** The subscriber's name, used in inbox keys and in the runtime's log lines. */
  public readonly subscriberName: string;

  /** The flow the subscriber was created with (`flow`, or `IdempotentEventFlow.addSubscriber`); undefined without one. */
  public readonly flow?: IEventFlow;

  /** The queue and its dead-letter queue, with the metric helpers that alarms use. */
  public readonly consumerQueue: ConsumerQueue;

  /** The queue the topic delivers to and the function consumes. */
  public readonly queue: sqs.IQueue;

  /** The consumer queue's dead-letter queue, for messages that kept failing or failed permanently. */
  public readonly deadLetterQueue: sqs.IQueue;

  /**
   * Where SNS puts messages it could not deliver to the queue (e.g. after the queue or its key policy changed, or the
   * queue was deleted: client-side errors, which SNS does not retry). Undefined for a subscriber in another Region than
   * its flow's topic: AWS accepts a subscription's dead-letter queue only in the subscription's account and Region,
   * which is the topic's, so the subscription has none, and a delivery that fails there is discarded. The flow's
   * `DeliveryFailed` alarm (the topic's `NumberOfNotificationsFailed`, in the flow's stack) reports it; `replay`
   * re-sends from the outbox (docs/CROSS-ACCOUNT.md).
   *
   * @default - a queue in this subscriber's stack; undefined across Regions
   */
  public readonly subscriptionDeadLetterQueue?: sqs.IQueue;

  /** The topic subscription of the queue. */
  public readonly subscription: sns.Subscription;

  /** How the runtime makes each message take effect once. */
  public readonly processingMode: ProcessingMode;

  /** The inbox table the function records processed messages in; undefined with `ProcessingMode.AGGREGATE`. */
  public readonly inboxTable?: IInboxTable;

  /**
   * How long a dedup record lives: the window within which a redelivery is recognised. Undefined with
   * `ProcessingMode.AGGREGATE`, which keeps no records (only the processed ids on the aggregate).
   */
  public readonly deduplicationWindow?: Duration;

  /** Whether a blocked message's body is kept on its record (lease and multi-step modes). */
  public readonly keepsBlockedMessageBody: boolean;

  /** The consumer Lambda function; grant it access to the resources its handler writes. */
  public readonly consumerFunction: ConsumerFunction;

  /**
   * The consumer function's role, so the subscriber itself can be granted what its handler needs, e.g.
   * `table.grantWriteData(subscriber)`.
   */
  public readonly grantPrincipal: iam.IPrincipal;

  public constructor(scope: Construct, id: string, givenProps: SubscriberProps) {
    super(scope, id);
    const owner = `Subscriber '${id}'`;
    this.subscriberName = givenProps.subscriberName ?? id;
    validateFlowProps(owner, givenProps);
    const placement = givenProps.flow === undefined ? undefined : placeSubscriber(owner, this, givenProps.flow, givenProps.flow.topic, givenProps.alarmActions);
    validatePlacement(owner, givenProps, placement);
    const defaulted = withFlowDefaults(givenProps, placement);
    validateSubscriberProps(owner, this.subscriberName, defaulted);
    // In another environment than the flow, or of an imported flow: a key of its own, in its own account and Region.
    const props = placement?.ownKey ? { ...defaulted, encryptionKey: createOwnQueueKey(this, this.subscriberName, givenProps.flow!.topic) } : defaulted;
    this.flow = givenProps.flow;
    this.processingMode = props.processingMode ?? ProcessingMode.TRANSACTIONAL;
    const topic = props.topic as sns.ITopic; // validateFlowProps: given, or the flow's

    const timeout = props.timeout ?? CONSUMER_DEFAULTS.FUNCTION_TIMEOUT;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    this.consumerQueue = new ConsumerQueue(this, 'Queue', {
      encryptionKey: props.encryptionKey,
      maxReceiveCount: props.maxReceiveCount,
      visibilityTimeout: props.visibilityTimeout ?? minimumVisibilityTimeout(timeout),
      retentionPeriod: props.retentionPeriod,
      deadLetterRetentionPeriod: props.deadLetterRetentionPeriod,
      removalPolicy,
    });
    this.queue = this.consumerQueue.queue;
    this.deadLetterQueue = this.consumerQueue.deadLetterQueue;

    // In another Region than the topic, the subscription is created in the topic's Region, and SNS can not use a
    // dead-letter queue of this Region for it (it must be in the subscription's account and Region): none is created.
    const crossRegion = placement?.crossRegion === true;
    this.subscriptionDeadLetterQueue = crossRegion
      ? undefined
      : createSubscriptionDeadLetterQueue(
          this,
          props.encryptionKey,
          props.subscriptionDeadLetterRetentionPeriod ?? CONSUMER_DEFAULTS.SUBSCRIPTION_DEAD_LETTER_RETENTION_PERIOD,
          removalPolicy,
        );
    this.subscription = subscribeQueue(
      this,
      topic,
      this.queue,
      this.subscriptionDeadLetterQueue,
      props.filterPolicyWithMessageBody,
      crossRegion ? placement!.flowEnvironment.region : undefined,
    );
    warnOnKeysOutsideEnvelope(this, owner, props.filterPolicyWithMessageBody);

    const hasInbox = usesInbox(this.processingMode);
    this.deduplicationWindow = hasInbox ? (props.deduplicationWindow ?? CONSUMER_DEFAULTS.DEDUPLICATION_WINDOW) : undefined;
    this.keepsBlockedMessageBody = props.keepBlockedMessageBody === true;
    this.inboxTable = hasInbox ? (props.inboxTable ?? new InboxTable(this, 'InboxTable', { removalPolicy, encryptionKey: props.encryptionKey })) : undefined;
    // Two subscribers of one name on one table would share inbox records (claimed here, before the function exists).
    if (this.inboxTable) claimSubscriberName(owner, this.inboxTable, this.subscriberName, this.node.path);

    this.consumerFunction = new ConsumerFunction(this, 'Function', {
      entry: props.entry,
      handler: props.handler,
      subscriberName: this.subscriberName,
      processingMode: this.processingMode,
      inboxTable: this.inboxTable,
      deduplicationWindow: this.deduplicationWindow,
      leaseDuration: props.leaseDuration,
      keepBlockedMessageBody: props.keepBlockedMessageBody,
      deadLetterQueue: this.deadLetterQueue,
      // validatePublishing: both are given only with publishesEvents
      outboxTable: props.outboxTable,
      eventSource: props.eventSource,
      environment: props.environment,
      timeout,
      memorySize: props.memorySize,
      logRetention: props.logRetention,
      logEncryptionKey: props.logEncryptionKey,
      reservedConcurrentExecutions: props.reservedConcurrentExecutions,
      vpc: props.vpc,
      vpcSubnets: props.vpcSubnets,
      securityGroups: props.securityGroups,
      tracing: props.tracing,
      applicationLogLevel: props.applicationLogLevel,
      removalPolicy,
      bundling: props.bundling,
    });

    // What SqsEventSource does, under the same construct id (so the mapping keeps its logical id), except the key
    // grant: SqsEventSource grants kms:Decrypt on the queue's key for any use; here the key may be used through SQS
    // only (kms:ViaService).
    this.grantPrincipal = this.consumerFunction.grantPrincipal;
    const fn = this.consumerFunction.lambdaFunction;
    fn.addEventSourceMapping(`SqsEventSource:${Names.nodeUniqueId(this.queue.node)}`, {
      eventSourceArn: this.queue.queueArn,
      batchSize: props.batchSize ?? CONSUMER_DEFAULTS.BATCH_SIZE,
      maxBatchingWindow: props.maxBatchingWindow,
      maxConcurrency: props.maxConcurrency,
      reportBatchItemFailures: true,
    });
    libraryGrantOrResource('Subscriber', { grantee: fn, actions: [...SQS_CONSUME_ACTIONS], resourceArns: [this.queue.queueArn], resource: this.queue });
    grantKeyViaService('Subscriber', this.consumerQueue.encryptionKey, fn, 'sqs', ['kms:Decrypt']);
    Validations.of(fn).acknowledge({
      id: 'Serverless-LambdaEventSourceMappingDestination',
      reason:
        'SQS event source mappings do not support on-failure destinations. A message that keeps failing is moved to ' +
        'the consumer dead-letter queue by the queue\'s redrive policy (maxReceiveCount), and the runtime sends ' +
        'permanently failing messages there itself.',
    });

    // A dashboard in the flow's stack can then name this subscriber's resources without referring back to this stack.
    if (this.flow !== undefined && Stack.of(this.flow) !== Stack.of(this)) nameSubscriberResources(this);
    if (placement !== undefined) recordPlacement(this, placement);
    this.flow?.registerSubscriber(this);
  }

  /**
   * The alarms its flow gave this subscriber (its `SubscriberAlarms`, construct id `Alarms`, in this subscriber's
   * stack), e.g. for a `CompositeAlarm` in this stack. For a subscriber in another account or Region than its flow they
   * are not in `flow.alarms` (CDK can not refer to an alarm of another environment): here is where to find them.
   *
   * @default - empty for a subscriber created without `flow` (nothing created its alarms)
   */
  public get alarms(): cloudwatch.IAlarm[] {
    // Read by shape: lib/monitoring/subscriber-alarms.ts imports this file, so importing it back would be a circle.
    const own = this.node.tryFindChild('Alarms') as { readonly alarms?: cloudwatch.IAlarm[] } | undefined;
    return [...(own?.alarms ?? [])];
  }

  /**
   * A consumer metric of this subscriber, in the `IdempotentEventFlow` namespace with the dimensions `Subscriber`,
   * `ProcessingMode` and `FunctionName` (the consumer function's name, unique per deployment, so another stack or stage
   * with a subscriber of the same name in this account and region has metrics of its own). The runtime writes them as
   * CloudWatch embedded metric format log lines, one per batch.
   *
   * @default - sum over 5 minutes
   */
  public metric(metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return new cloudwatch.Metric({
      namespace: CONSUMER_METRICS.NAMESPACE,
      metricName,
      dimensionsMap: {
        [CONSUMER_METRICS.SUBSCRIBER_DIMENSION]: this.subscriberName,
        [CONSUMER_METRICS.PROCESSING_MODE_DIMENSION]: runtimeModeName(this.processingMode),
        // The runtime reads the same name from AWS_LAMBDA_FUNCTION_NAME (LAMBDA_ENV.FUNCTION_NAME).
        [CONSUMER_METRICS.FUNCTION_NAME_DIMENSION]: physicalNamesOf(this)?.functionName ?? this.consumerFunction.lambdaFunction.functionName,
      },
      statistic: cloudwatch.Stats.SUM,
      period: Duration.minutes(5),
      ...props,
    }).attachTo(this);
  }

  /**
   * Messages whose effect was applied.
   *
   * @default - sum over 5 minutes
   */
  public metricProcessed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.PROCESSED, props);
  }

  /**
   * Redeliveries recognised and acknowledged without applying anything.
   *
   * @default - sum over 5 minutes
   */
  public metricDuplicates(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.DUPLICATES, props);
  }

  /**
   * Messages left on the queue to be retried (transient failures).
   *
   * @default - sum over 5 minutes
   */
  public metricFailed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.FAILED, props);
  }

  /**
   * Messages blocked for an operator because an effect's outcome is unknown (`ProcessingMode.LEASE` and
   * `ProcessingMode.MULTI_STEP`).
   *
   * @default - sum over 5 minutes
   */
  public metricBlocked(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.BLOCKED, props);
  }

  /**
   * Messages the runtime sent to the dead-letter queue for a permanent reason.
   *
   * @default - sum over 5 minutes
   */
  public metricDeadLettered(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.DEAD_LETTERED, props);
  }

  /**
   * Copies of a message already blocked for an operator (SNS or relay duplicates) that were acknowledged without
   * another dead letter (`ProcessingMode.LEASE` and `ProcessingMode.MULTI_STEP`). Not counted in `metricBlocked()`.
   *
   * @default - sum over 5 minutes
   */
  public metricAlreadyBlocked(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.ALREADY_BLOCKED, props);
  }

  /**
   * End-to-end latency in milliseconds: for each message applied, the time from its event's `time` (when the producer
   * appended it) to the moment the consumer finished it. The runtime writes one value per applied message, so any
   * percentile can be asked for (`statistic: 'p50'`).
   *
   * @default - p99 over 5 minutes
   */
  public metricEventAge(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(CONSUMER_METRICS.EVENT_AGE, { statistic: 'p99', ...props });
  }

}

/** `flow` gives the topic, the key and the outbox, so they may not be given beside it; without `flow`, `topic` is required. */
function validateFlowProps(owner: string, props: SubscriberProps): void {
  if (props.flow === undefined) {
    if (props.topic === undefined) {
      throw validationError(`${owner}: topic or flow must be provided (the topic to subscribe to, or the IdempotentEventFlow whose topic it is), but neither was`);
    }
  } else {
    for (const prop of ['topic', 'encryptionKey', 'outboxTable'] as const) {
      if (props[prop] !== undefined) {
        throw validationError(`${owner}: ${prop} can not be combined with flow (the subscriber uses the flow's ${prop}), but both were provided`);
      }
    }
  }
  const topic = props.topic ?? props.flow?.topic;
  if (topic?.fifo === true) {
    throw validationError(
      `${owner}: topic must be a standard SNS topic (the outbox relay, an EventBridge Pipe, can not publish to a FIFO topic), ` +
        `but the FIFO topic ${topic.node.path} was provided`,
    );
  }
}

/**
 * What a flow in another environment, or an imported one, rules out: appending to its outbox (`publishesEvents`: the
 * inbox record and the appended event are one DynamoDB transaction, which can not span accounts or Regions; an imported
 * flow's outbox is not known); and `alarmActions` mean nothing without a flow, which creates the alarms.
 */
function validatePlacement(owner: string, props: SubscriberProps, placement: FlowPlacement | undefined): void {
  if (props.alarmActions !== undefined && props.flow === undefined) {
    throw validationError(`${owner}: alarmActions can only be used with flow (the flow creates the subscriber's alarms), but no flow was provided`);
  }
  if (placement === undefined || props.publishesEvents !== true) return;
  if (placement.crossEnvironment) {
    throw validationError(
      `${owner}: publishesEvents can not be used with a flow in another environment (the subscriber is in ` +
        `${describeEnvironment(placement.subscriberEnvironment)}, the flow in ${describeEnvironment(placement.flowEnvironment)}): the inbox record ` +
        'and the appended event are one DynamoDB transaction, which can not span accounts or Regions. Publish to a flow of ' +
        "this subscriber's own environment instead (a Subscriber with topic and outboxTable, or a flow of its own)",
    );
  }
  if (isImportedFlow(props.flow!)) {
    throw validationError(
      `${owner}: publishesEvents can not be used with a flow imported by fromFlowAttributes (its outbox is not known here); ` +
        'pass topic and outboxTable instead of flow',
    );
  }
}

/**
 * The props with what `flow` gives: its topic, key and outbox, and its defaults for what the props leave open. A
 * subscriber with a key of its own (`placement.ownKey`) does not read the flow's key.
 */
function withFlowDefaults(props: SubscriberProps, placement: FlowPlacement | undefined): SubscriberProps {
  const flow = props.flow;
  if (flow === undefined) return props;
  return {
    ...props,
    removalPolicy: props.removalPolicy ?? flow.subscriberDefaults.removalPolicy,
    // the flow's log key is a key of the flow's environment
    logEncryptionKey: props.logEncryptionKey ?? (placement?.crossEnvironment ? undefined : flow.subscriberDefaults.logEncryptionKey),
    topic: flow.topic,
    encryptionKey: placement?.ownKey ? undefined : flow.encryptionKey,
    outboxTable: props.publishesEvents ? flow.outboxTable : undefined,
  };
}

