import * as fs from 'node:fs';
import * as path from 'node:path';
import { Duration, Names, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../lambda/contract/environment';
import { ORDERED_OUTBOX_ITEM, orderedDeduplicationIdPath, orderedFilterPattern, orderedMessageGroupIdPath } from '../../lambda/contract/ordered-wire-format';
import { outboxInputTemplate } from '../../lambda/contract/wire-format';
import { ConsumerQueue } from '../consumer/consumer-queue';
import { minimumVisibilityTimeout } from '../consumer/private/defaults';
import type { AlarmOptions } from '../monitoring/alarm-options';
import type { OutboxRelayLogLevel } from '../outbox/outbox-relay';
import type { IOutboxTable } from '../outbox/outbox-table';
import { crossAccountOperatorRoleId, grantFlowOperator } from '../private/flow-operator';
import { grantKeyViaService, KMS_SEND_MESSAGE_ACTIONS } from '../private/kms-actions';
import { libraryGrant } from '../private/library-statements';
import { acknowledgeInRegulatoryPacks } from '../private/regulatory-acknowledgements';
import { createPipeDeadLetterQueue, createRelayPipe, pipeMetric, type RelayPipe } from '../private/relay-pipe';
import { createSecureNodejsFunction } from '../private/secure-nodejs-function';
import { allowSnsDeliveriesWithKey, denyTopicAccessWithoutTls } from '../private/topic-security';
import { ALARM_PERIOD, createThresholdAlarm } from '../private/threshold-alarm';
import { deadLetterExpiringAlarm, RELAY_DEAD_LETTER_ACTION } from '../private/dead-letter-expiring';
import { validateRelaySettings } from '../private/shared-limits';
import { validateNumberInRange } from '../private/validate-props';

/** The fan-out function's timeout; the relay queue's visibility timeout is 6 times it (the Lambda guidance for SQS sources). */
const FAN_OUT_TIMEOUT = Duration.seconds(30);

/** Properties of an {@link OrderedRelay}. */
export interface OrderedRelayProps extends AlarmOptions {
  /** The outbox table whose ordered events (written by `OrderedOutbox`) are relayed. Its stream must be on. */
  readonly outboxTable: IOutboxTable;

  /**
   * Customer-managed KMS key for the SNS FIFO topic and the SQS FIFO queues (SNS can encrypt only with KMS, and it
   * delivers to a KMS-encrypted queue only with the key's permission, which the relay adds to a key it can change). It
   * also encrypts the pipe's data at rest (its filter pattern and input template), as `OutboxRelay`'s `encryptionKey`
   * does: the pipe's role may use it for that only with this pipe's encryption context.
   *
   * @default - a new key with rotation on
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * How often a failed stream batch is retried before its records go to the pipe's dead-letter queue, 0 to 185.
   *
   * @default 10
   */
  readonly maximumRetryAttempts?: number;

  /**
   * Oldest stream record the pipe still forwards; older ones go to its dead-letter queue. 1 minute to 23 hours.
   *
   * @default Duration.hours(1)
   */
  readonly maximumRecordAge?: Duration;

  /**
   * How many times the fan-out function receives a relayed message before SQS moves it to the relay queue's
   * dead-letter queue, 1 to 1000. The message's group waits meanwhile.
   *
   * @default 5
   */
  readonly maxReceiveCount?: number;

  /**
   * Keep every message published to the SNS FIFO topic this many days (1 to 365) in the topic's archive, so a
   * subscriber can replay them (SNS message archiving and replay for FIFO topics). Archived messages are charged. With a
   * flow that offloads large events (`offloadLargeEvents`, this relay registered), a replayed event reads its data from
   * the payload bucket, so the bucket keeps objects this many days longer (docs/LARGE-EVENTS.md).
   *
   * @default - no archive
   */
  readonly archiveRetentionDays?: number;

  /**
   * Customer-managed KMS key that encrypts the relay's log groups: the pipe's and the fan-out function's. Its key
   * policy gets the statement CloudWatch Logs needs, conditioned on the encryption context of log groups of this
   * account and region.
   *
   * @default - the log groups are encrypted by CloudWatch Logs with its own key
   */
  readonly logEncryptionKey?: kms.IKey;

  /**
   * How much the pipe logs about each execution. The log group is created at every level; with `OFF` it stays empty.
   *
   * @default OutboxRelayLogLevel.ERROR
   */
  readonly logLevel?: OutboxRelayLogLevel;

  /**
   * How long the pipe's log group keeps log events.
   *
   * @default logs.RetentionDays.ONE_YEAR
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * What happens to the queues, the log groups and a created key when they are removed from the stack.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * The ordered path's relay (docs/ORDERED-DELIVERY.md): an EventBridge Pipe reads the outbox stream's ordered head items
 * (parallelization 1, one record per execution) into an SQS FIFO queue, with the aggregate as the message group and
 * the event id as the deduplication id; a small fan-out function publishes each to an SNS FIFO topic, to which every
 * `OrderedSubscriber` subscribes its own SQS FIFO queue. The pipe is the stream's second reader (with the standard
 * `OutboxRelay`): DynamoDB Streams serve at most two readers per shard, so more subscribers go through the topic.
 */
export class OrderedRelay extends Construct {
  /** The SNS FIFO topic every ordered subscriber subscribes to. */
  public readonly topic: sns.ITopic;
  /** The key of the topic and the queues. */
  public readonly encryptionKey: kms.IKey;
  /** The SQS FIFO queue the pipe sends to (the fan-out function reads it). */
  public readonly relayQueue: sqs.IQueue;
  /** Where SQS moves a relayed message the fan-out could not publish `maxReceiveCount` times. */
  public readonly relayDeadLetterQueue: sqs.IQueue;
  /** Where the pipe sends what it could not forward (metadata of a stream batch; replay from the outbox). */
  public readonly pipeDeadLetterQueue: sqs.IQueue;
  /** The fan-out function. */
  public readonly fanOutFunction: lambda.IFunction;
  /**
   * The pipe's name: the construct path (at most 42 characters) and the outbox stream's label, so a replaced outbox
   * stream or table gives the replacing pipe a new name (as `OutboxRelay`'s default name does).
   */
  public readonly pipeName: string;
  /** The pipe's ARN. */
  public readonly pipeArn: string;
  /** The role the pipe runs as. */
  public readonly pipeRole: iam.IRole;
  /** The log group of the pipe's execution logs. */
  public readonly pipeLogGroup: logs.ILogGroup;
  /** Fires when the relay queue's dead-letter queue holds a message the fan-out could not publish (its aggregate waits). */
  public readonly relayDeadLetterAlarm: cloudwatch.Alarm;
  /** Fires when the pipe dead-lettered a stream batch (replay its events from the outbox history: `fence replay`). */
  public readonly pipeDeadLetterAlarm: cloudwatch.Alarm;

  /** Fires when a pipe execution failed (as the standard relay's `ExecutionFailed`): IAM, KMS or the relay queue refuses it. */
  public readonly executionFailedAlarm: cloudwatch.Alarm;
  /**
   * Fires when a message has waited so long in the relay queue's FIFO dead-letter queue that SQS deletes it within 2
   * days (its retention, less 2 days). Redrive it before then (its history item may be gone already).
   */
  public readonly relayDeadLetterExpiringAlarm: cloudwatch.Alarm;

  /** The outbox table whose ordered events this relay relays. */
  public readonly outboxTable: IOutboxTable;

  /**
   * How many days the SNS FIFO topic keeps every published message in its archive for replay (`archiveRetentionDays`).
   *
   * @default - no archive
   */
  public readonly archiveRetentionDays?: number;

  private readonly alarmOptions: AlarmOptions;
  private deliveryFailed?: cloudwatch.Alarm;
  private readonly alarmListeners: Array<(alarm: cloudwatch.IAlarm) => void> = [];

  public constructor(scope: Construct, id: string, props: OrderedRelayProps) {
    super(scope, id);
    this.outboxTable = props.outboxTable;
    this.alarmOptions = props;
    const owner = `OrderedRelay '${id}'`;
    validateRelaySettings(owner, { maximumRetryAttempts: props.maximumRetryAttempts, maximumRecordAge: props.maximumRecordAge });
    validateNumberInRange(owner, 'maxReceiveCount', props.maxReceiveCount, { min: 1, max: 1000, integer: true });
    validateNumberInRange(owner, 'archiveRetentionDays', props.archiveRetentionDays, { min: 1, max: 365, integer: true });
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    const topicName = `${Names.uniqueResourceName(this, { maxLength: 250, separator: '-' })}.fifo`;
    const topicArn = Stack.of(this).formatArn({ service: 'sns', resource: topicName });
    this.encryptionKey = props.encryptionKey ?? new kms.Key(this, 'Key', { description: `Encrypts the ordered topic ${topicName} and its queues`, enableKeyRotation: true, removalPolicy });
    allowSnsDeliveriesWithKey(this, this.encryptionKey, topicArn, 'AllowOrderedTopicToDeliverToQueuesEncryptedWithThisKey', 'idempotent-event-flow:orderedTopicKeyPolicy');

    this.archiveRetentionDays = props.archiveRetentionDays;
    const topic = new sns.Topic(this, 'Topic', {
      topicName,
      fifo: true,
      contentBasedDeduplication: false,
      masterKey: this.encryptionKey,
      ...(props.archiveRetentionDays === undefined ? {} : { messageRetentionPeriodInDays: props.archiveRetentionDays }),
    });
    denyTopicAccessWithoutTls(topic);
    this.topic = topic;

    const relayQueue = new ConsumerQueue(this, 'RelayQueue', {
      fifo: true,
      encryptionKey: this.encryptionKey,
      maxReceiveCount: props.maxReceiveCount,
      visibilityTimeout: minimumVisibilityTimeout(FAN_OUT_TIMEOUT),
      removalPolicy,
    });
    this.relayQueue = relayQueue.queue;
    this.relayDeadLetterQueue = relayQueue.deadLetterQueue;
    this.pipeDeadLetterQueue = createPipeDeadLetterQueue(this, 'PipeDeadLetterQueue', this.encryptionKey, removalPolicy, 'ordered relay');

    const relayPipe = this.createPipe(props, removalPolicy);
    this.pipeName = relayPipe.pipeName;
    this.pipeArn = relayPipe.pipeArn;
    this.pipeRole = relayPipe.role;
    this.pipeLogGroup = relayPipe.logGroup;
    this.fanOutFunction = this.createFanOut(removalPolicy, props.logEncryptionKey);
    const visible = { period: ALARM_PERIOD, statistic: 'Maximum' };
    this.relayDeadLetterAlarm = createThresholdAlarm(
      this,
      'RelayDeadLetters',
      relayQueue.metricDeadLetterMessagesVisible(visible),
      1,
      "Ordered relay: the fan-out function could not publish messages to the ordered topic; their aggregates' later events wait behind them.",
      props,
    );
    this.pipeDeadLetterAlarm = createThresholdAlarm(
      this,
      'PipeDeadLetters',
      this.pipeDeadLetterQueue.metricApproximateNumberOfMessagesVisible(visible),
      1,
      'Ordered relay: the pipe could not forward stream records; replay their events from the outbox history (`idempotent-event-flow fence replay`).',
      props,
    );
    this.executionFailedAlarm = createThresholdAlarm(
      this,
      'PipeExecutionFailed',
      this.metricExecutionFailed({ period: ALARM_PERIOD }),
      1,
      "Ordered relay: a pipe execution failed; the record is retried, and its aggregate's later events wait behind it. Check the pipe's log group and its state.",
      props,
    );
    this.relayDeadLetterExpiringAlarm = deadLetterExpiringAlarm(this, 'RelayDeadLetterExpiring', relayQueue, 'Ordered relay (its relay queue)', props, RELAY_DEAD_LETTER_ACTION);
  }

  /**
   * Every alarm of the relay: its relay queue's dead letters, its pipe's dead letters, its pipe's failed executions, an expiring relay dead letter,
   * and {@link deliveryFailedAlarm} when there is one.
   */
  public get alarms(): cloudwatch.IAlarm[] {
    return [this.relayDeadLetterAlarm, this.pipeDeadLetterAlarm, this.executionFailedAlarm, this.relayDeadLetterExpiringAlarm, ...(this.deliveryFailed === undefined ? [] : [this.deliveryFailed])];
  }

  /**
   * Fires when SNS failed to deliver a message of the FIFO topic to a subscription (the topic's
   * `NumberOfNotificationsFailed`, Sum over 1 minute >= 1, in the relay's stack, with the relay's `alarmActions`):
   * created when an ordered subscriber is in another Region than the relay, whose subscription can have no dead-letter
   * queue, so a delivery failing on a client-side error (a changed queue or key policy, a deleted queue) is discarded
   * at once (docs/CROSS-ACCOUNT.md). Construct id `DeliveryFailedAlarm`. In {@link alarms}.
   * @default - undefined: no ordered subscriber in another Region
   */
  public get deliveryFailedAlarm(): cloudwatch.IAlarm | undefined {
    return this.deliveryFailed;
  }

  /**
   * Creates (once) the {@link deliveryFailedAlarm}; called by an ordered subscriber in another Region.
   * @internal
   */
  public _watchDeliveryFailures(): void {
    if (this.deliveryFailed !== undefined) return;
    this.deliveryFailed = createThresholdAlarm(
      this,
      'DeliveryFailedAlarm',
      this.topic.metricNumberOfNotificationsFailed({ period: ALARM_PERIOD, statistic: 'Sum' }),
      1,
      `Ordered relay ${this.node.path}: SNS failed to deliver events of the FIFO topic to a subscription. A subscription in another ` +
        'Region than the topic has no dead-letter queue, and SNS does not retry client-side errors (a changed queue or key policy, ' +
        "a deleted queue): such an event is lost to that subscriber, and its aggregate's later events are applied past it by the fence " +
        'only after an operator decision. Fix the queue or key, then re-send it from the outbox history (idempotent-event-flow fence replay; docs/CROSS-ACCOUNT.md).',
      this.alarmOptions,
    );
    for (const listener of this.alarmListeners) listener(this.deliveryFailed);
  }

  /**
   * Hears each alarm the relay creates after construction (its {@link deliveryFailedAlarm}): how a flow the relay is
   * registered with keeps it in `flow.alarms`.
   * @internal
   */
  public _onAlarmAdded(listener: (alarm: cloudwatch.IAlarm) => void): void {
    this.alarmListeners.push(listener);
  }

  /**
   * Grants a producer what `OrderedOutbox` does on the outbox table, and nothing wider: `dynamodb:PutItem` (the
   * aggregate's head item and the event's history item, in the business transaction), `dynamodb:GetItem` of head items
   * only (the strongly consistent read of the aggregate's head that gives the next sequence), and, when the table is
   * encrypted with a customer managed key, the key's use through DynamoDB. The read is conditioned on
   * `dynamodb:LeadingKeys` (`ForAllValues:StringLike`, `OUTBOX#AGGREGATE#*`): the partition key value of every head
   * item starts with that prefix (no event id may start with `AGGREGATE#`), so the producer reads no history item and no
   * business item of a shared table. What it CAN read: each head item carries its aggregate's LAST event envelope (the
   * relay publishes the head's writes), so a producer reads the latest event of every aggregate of the outbox, any
   * producer's; and the outbox Put (`grantAppendEvents`, conditioned on `OUTBOX#*` partition keys) with `ReturnValuesOnConditionCheckFailure:
   * ALL_OLD`, which `OrderedOutbox` and `Outbox.transactWriteOnce` send to recognise their own earlier commit, returns
   * the item a failed condition met, so a crafted Put can read any item whose key it names (no write happens). No IAM
   * condition key is documented for `ReturnValuesOnConditionCheckFailure` (`dynamodb:ReturnValues` names
   * `ReturnValues`), and the runtime needs `ALL_OLD`; what would close both: a separate outbox table per producer (or
   * per trust domain), or heads holding only the sequence with the envelope on an item the relay reads. Use it instead of the outbox's `grantAppendEvents` for
   * a producer of ordered events: that one grants the Put alone, and `OrderedOutbox`'s read would be denied. The
   * producer's own business writes in the same transaction need their own grants.
   *
   * @param grantee the producer (e.g. its Lambda function)
   */
  public grantAppendOrderedEvents(grantee: iam.IGrantable): iam.Grant {
    const append = this.outboxTable.grantAppendEvents(grantee);
    const readHead = libraryGrant('grantAppendOrderedEvents', {
      grantee,
      actions: ['dynamodb:GetItem'],
      resourceArns: [this.outboxTable.table.tableArn],
      conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${ORDERED_OUTBOX_ITEM.HEAD_KEY_PREFIX}*`] } },
    });
    return append.combine(readHead);
  }

  /**
   * Lets `grantee` read this relay's outbox as `idempotent-event-flow replay` to an ordered subscriber does (its history
   * items, in sequence): `dynamodb:GetItem` (`--event-id`), `dynamodb:Scan` (`--since`), `dynamodb:DescribeTimeToLive`
   * and `dynamodb:DescribeTable` (the attribute the table's TTL reads, and whether a table whose TTL is off was restored)
   * on the outbox table, nothing that writes (with a customer-managed key also `kms:Decrypt`, through DynamoDB only). It is
   * `IdempotentEventFlow.grantOperator` for an ordered path on an outbox table of its own; on the flow's outbox table
   * either grant gives the same read.
   *
   * A principal of this relay's account gets the actions in its own policy (a role or user named by a literal ARN is
   * imported as such; one whose policy this stack can not write, e.g. the account's root, is refused at synth). A
   * principal of ANOTHER literal account (or of any literal account when this relay's stack has no fixed account), e.g.
   * the on-call role of an ordered subscriber's team, gets a role of this relay's account instead:
   * `CrossAccountOperator<account>` under this relay (one per account, see {@link crossAccountOperatorRole}), trusted by
   * exactly the principals granted (never `*`, which is refused), holding only the outbox read, with its ARN in the
   * stack output `<relay>/CrossAccountOperator<account>/RoleArn`. The principal's own account must still let it
   * `sts:AssumeRole` that role (done here for a role of this app in that account). `replay --flow-profile` reads the
   * outbox under it (docs/CROSS-ACCOUNT.md, "Operating a subscriber of another account").
   *
   * @returns the grant of the outbox read, to `grantee` or (another account) to the role
   */
  public grantOperator(grantee: iam.IGrantable): iam.Grant {
    return grantFlowOperator(this, { description: `OrderedRelay '${this.node.id}'`, kind: 'OrderedRelay' }, this.outboxTable, grantee);
  }

  /**
   * The role {@link grantOperator} created for principals of `account` (12 digits), which they assume to read the
   * outbox; undefined when none was granted.
   */
  public crossAccountOperatorRole(account: string): iam.IRole | undefined {
    const role = this.node.tryFindChild(crossAccountOperatorRoleId(account));
    return role instanceof iam.Role ? role : undefined;
  }

  /**
   * A metric of this relay's pipe in the `AWS/EventBridge/Pipes` namespace, with the `PipeName` dimension.
   *
   * @param metricName e.g. `ExecutionFailed`, `ExecutionThrottled`, `TargetStageFailed`
   * @param props overrides of the metric's options
   */
  public metric(metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return pipeMetric(this, this.pipeName, metricName, props);
  }

  /**
   * Executions of the pipe that failed (their record is retried, then dead-lettered).
   *
   * @default - sum over 5 minutes
   */
  public metricExecutionFailed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ExecutionFailed', { statistic: cloudwatch.Stats.SUM, ...props });
  }

  /**
   * Invocations of the pipe (its executions; one stream record each).
   *
   * @default - sum over 5 minutes
   */
  public metricInvocations(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Invocations', { statistic: cloudwatch.Stats.SUM, ...props });
  }

  /**
   * Executions of the pipe that were throttled (the pipe's or the account's concurrency was reached).
   *
   * @default - sum over 5 minutes
   */
  public metricExecutionThrottled(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ExecutionThrottled', { statistic: cloudwatch.Stats.SUM, ...props });
  }

  /**
   * Executions of the pipe that timed out before completing.
   *
   * @default - sum over 5 minutes
   */
  public metricExecutionTimeout(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ExecutionTimeout', { statistic: cloudwatch.Stats.SUM, ...props });
  }

  /**
   * How long the pipe's executions took, in milliseconds.
   *
   * @default - average over 5 minutes
   */
  public metricDuration(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('Duration', { statistic: cloudwatch.Stats.AVERAGE, ...props });
  }

  private createPipe(props: OrderedRelayProps, removalPolicy: RemovalPolicy): RelayPipe {
    const relayQueue = this.relayQueue;
    return createRelayPipe(this, {
      origin: 'OrderedRelay',
      ids: { role: 'PipeRole', logGroup: 'PipeLogGroup', pipe: 'Pipe' },
      roleDescription: 'Runs the ordered relay pipe: reads the outbox stream and sends ordered events to the FIFO relay queue',
      pipeDescription: 'Relays ordered outbox events from the DynamoDB stream to the FIFO relay queue',
      outboxTable: props.outboxTable,
      filterPattern: orderedFilterPattern(),
      // one record per execution, one batch per shard at a time: the stream's order per head item reaches the queue
      streamParameters: { batchSize: 1, parallelizationFactor: 1 },
      target: {
        arn: relayQueue.queueArn,
        parameters: {
          inputTemplate: outboxInputTemplate(),
          sqsQueueParameters: { messageGroupId: orderedMessageGroupIdPath(), messageDeduplicationId: orderedDeduplicationIdPath() },
        },
        grant: (role) => {
          libraryGrant('OrderedRelay', { grantee: role, actions: ['sqs:SendMessage'], resourceArns: [relayQueue.queueArn] });
          grantKeyViaService('OrderedRelay', this.encryptionKey, role, 'sqs', KMS_SEND_MESSAGE_ACTIONS);
        },
      },
      deadLetterQueue: this.pipeDeadLetterQueue,
      maximumRetryAttempts: props.maximumRetryAttempts,
      maximumRecordAge: props.maximumRecordAge,
      logLevel: props.logLevel,
      logRetention: props.logRetention,
      logEncryptionKey: props.logEncryptionKey,
      // the pipe's data at rest (filter, input template) under the relay's key, as IdempotentEventFlow does for its relay
      encryptionKey: this.encryptionKey,
      removalPolicy,
    });
  }

  private createFanOut(removalPolicy: RemovalPolicy, logEncryptionKey: kms.IKey | undefined): lambda.IFunction {
    const scope = new Construct(this, 'FanOut');
    const { lambdaFunction, role } = createSecureNodejsFunction(
      scope,
      { entry: fanOutEntry(), description: 'Publishes ordered events from the FIFO relay queue to the ordered SNS FIFO topic', timeout: FAN_OUT_TIMEOUT, defaultTimeout: FAN_OUT_TIMEOUT, removalPolicy, logEncryptionKey },
      { [ENV.ORDERED_TOPIC_ARN]: this.topic.topicArn },
    );
    lambdaFunction.addEventSourceMapping('RelayQueue', { eventSourceArn: this.relayQueue.queueArn, batchSize: 10, reportBatchItemFailures: true });
    libraryGrant('OrderedRelay', { grantee: role, actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:GetQueueAttributes', 'sqs:ChangeMessageVisibility'], resourceArns: [this.relayQueue.queueArn] });
    libraryGrant('OrderedRelay', { grantee: role, actions: ['sns:Publish'], resourceArns: [this.topic.topicArn] });
    grantKeyViaService('OrderedRelay', this.encryptionKey, role, 'sqs', ['kms:Decrypt']);
    grantKeyViaService('OrderedRelay', this.encryptionKey, role, 'sns', KMS_SEND_MESSAGE_ACTIONS);
    const viaQueue = 'Invoked synchronously by an SQS event source mapping; a message that keeps failing moves to the relay queue\'s dead-letter queue (maxReceiveCount).';
    Validations.of(lambdaFunction).acknowledge(
      { id: 'Serverless-LambdaDLQ', reason: viaQueue },
      { id: 'Serverless-LambdaEventSourceMappingDestination', reason: viaQueue },
    );
    acknowledgeInRegulatoryPacks(lambdaFunction, 'LambdaDLQ', viaQueue);
    return lambdaFunction;
  }
}

/**
 * The fan-out handler's source: the TypeScript file beside the sources (this repository), else the compiled handler of
 * the runtime package `@idempotent-event-flow/runtime` installed in the app (its `./ordered/fan-out-handler` export).
 *
 * @throws Error naming the package when neither is there
 */
function fanOutEntry(): string {
  const source = path.join(__dirname, '..', '..', 'lambda', 'ordered', 'fan-out-handler.ts');
  if (fs.existsSync(source)) return source;
  try {
    return require.resolve('@idempotent-event-flow/runtime/ordered/fan-out-handler', { paths: [process.cwd(), __dirname] });
  } catch (error) {
    throw new Error(
      "OrderedRelay: the fan-out function's handler comes from the runtime package; install @idempotent-event-flow/runtime in the app (npm install @idempotent-event-flow/runtime)",
      { cause: error },
    );
  }
}
