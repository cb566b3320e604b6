import { Annotations, CfnOutput, Duration, RemovalPolicy, Size, Stack, Stage } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { InboxTable } from './consumer/inbox-table';
import { IEventFlow, Subscriber } from './consumer/subscriber';
import { SubscriberDefaults, SubscriberOptions } from './consumer/subscriber-options';
import { placementOf } from './consumer/private/flow-placement';
import { nameAlarms, nameSubscriberResources, physicalNamesOf } from './consumer/private/cross-stack-names';
import { EventFlowAttributes, importEventFlow } from './imported-event-flow';
import { compareEnvironments, describeEnvironment, isCrossEnvironment } from './private/environments';
import { refuseDataFilterOnOffloadedFlow } from './private/offload-filter-check';
import { letRemoteSubscriberReadPayloads } from './private/remote-payload-readers';
import { crossAccountOperatorRoleId, grantFlowOperator } from './private/flow-operator';
import { giveSubscriberAlarmsAndOutput } from './private/subscriber-registration';
import { subscribeGrantSid } from './private/subscribe-grant-sid';
import { ALARM_PERIOD, createThresholdAlarm } from './private/threshold-alarm';
import { FlowDashboard } from './monitoring/flow-dashboard';
import { RelayAlarms } from './monitoring/relay-alarms';
import { IOutboxTable, OutboxTable } from './outbox/outbox-table';
import { OutboxRelay } from './outbox/outbox-relay';
import { relayEventSizing, topicMaximumMessageBytes } from './outbox/private/event-size';
import { ProducerFunction } from './outbox/producer-function';
import { FunctionOptions } from './functions/function-options';
import { OrderedRelay } from './ordered/ordered-relay';
import { OrderedSubscriber } from './ordered/ordered-subscriber';
import { EventTopic } from './topic/event-topic';
import { validateMaxEndToEndLatency, validateMaxMessageAge, validateRelaySettings } from './private/shared-limits';
import { validationError } from './private/validation-error';
import {
  createPayloadBucket,
  describeWindow,
  grantReadPayloads,
  grantWritePayloads,
  payloadProducerEnvironment,
  payloadReaderEnvironment,
  queueRetention,
  wholeDays,
  type ReadableWindow,
  type WindowTerm,
} from './private/payload-bucket';
import { ENV } from '../lambda/contract/environment';

/** Properties of {@link IdempotentEventFlow}. Every one is optional. */
export interface IdempotentEventFlowProps {
  /**
   * The outbox to relay events from. Pass `OutboxTable.fromTableAttributes(...)` to use an existing table of yours
   * (a single-table design with business items and outbox items side by side); the relay's filter lets only
   * outbox items reach the topic.
   *
   * @default - a new `OutboxTable` (on-demand, stream with new images, TTL, PITR, with this flow's `removalPolicy`)
   */
  readonly outboxTable?: IOutboxTable;

  /**
   * CloudEvents `source` of the events producers append (when they do not set one per event).
   * Only for the outbox table this flow creates; with `outboxTable`, set it on that table.
   *
   * @default - `/` followed by the URI-encoded construct path of the outbox table, e.g. `/OrdersStack/Orders/OutboxTable`
   */
  readonly eventSource?: string;

  /**
   * Customer-managed KMS key that encrypts the topic and every queue of the flow.
   *
   * @default - a new key with rotation enabled, retained on stack deletion
   */
  readonly encryptionKey?: kms.IKey;

  /**
   * Whether the topic denies `sns:Publish` to every principal but the relay's role (and roles given
   * `flow.eventTopic.grantPublish`, which is for publishers outside the app), so that nobody else in the account can
   * inject events that consumers apply exactly once. Publishing through the outbox is unaffected.
   *
   * @default true
   */
  readonly restrictTopicPublishers?: boolean;

  /**
   * Customer-managed KMS key that encrypts the log groups of the flow: the relay's and those of the functions added
   * with `addSubscriber` and `addProducer` (a function's own `logEncryptionKey` overrides it). Its key policy gets the
   * statement CloudWatch Logs needs, conditioned on the encryption context of log groups of this account and region.
   * It may be the same key as `encryptionKey`.
   *
   * @default - log groups are encrypted by CloudWatch Logs with its own key
   */
  readonly logEncryptionKey?: kms.IKey;

  /**
   * How many stream records the relay publishes per batch (1 to 10; SNS is a batch target of at most 10). The relay
   * publishes with SNS PublishBatch, whose messages must fit the topic's `MaximumMessageSize` (262,144 bytes) together,
   * so `relayBatchSize` x `maxEventSize` must be at most that.
   *
   * @default - 10, or as many events of `maxEventSize` as fit 262,144 bytes (at most 10)
   */
  readonly relayBatchSize?: number;

  /**
   * The largest event producers may append, as delivered (the envelope as a JSON string); a producer's `Outbox`
   * refuses a larger one with `EventTooLargeError`, so no relay batch can be too large for one SNS PublishBatch.
   * `relayBatchSize` x `maxEventSize` must be at most the topic's `MaximumMessageSize` (262,144 bytes). For larger
   * events, lower the batch size: `relayBatchSize: 1` lets events of up to 256 KiB through.
   *
   * @default - 262,144 bytes divided by `relayBatchSize`: 26,214 bytes with the default batch size of 10
   */
  readonly maxEventSize?: Size;

  /**
   * How often the relay retries a failing batch before sending it to its dead-letter queue (0 to 185).
   *
   * @default 10
   */
  readonly relayMaximumRetryAttempts?: number;

  /**
   * How old a stream record may get before the relay sends it to its dead-letter queue instead of retrying
   * (1 minute to 23 hours: below the stream's 24-hour retention, so it can still be replayed from the stream).
   *
   * @default Duration.hours(1)
   */
  readonly relayMaximumRecordAge?: Duration;

  /**
   * Actions for every alarm of the flow (relay and subscribers), e.g. `new SnsAction(opsTopic)`.
   *
   * @default - alarms are created without actions, and the flow gets a warning annotation saying that nobody is
   * notified when they fire
   */
  readonly alarmActions?: cloudwatch.IAlarmAction[];

  /**
   * Age of the oldest message in a subscriber's queue at which its `OldestMessageAge` alarm fires.
   *
   * @default Duration.minutes(5)
   */
  readonly maxMessageAge?: Duration;

  /**
   * End-to-end latency at which each subscriber's `EndToEndLatency` alarm fires: when the p99 of its events' age at
   * the moment they were applied (from the producer's `time` to the consumer's commit) reaches it over 5 minutes.
   * 1 second to 14 days. An ordered subscriber (`registerOrderedSubscriber`) gets no such alarm.
   *
   * @default - no latency alarm (the latency is still on the dashboard and in `Subscriber.metricEventAge()`)
   */
  readonly maxEndToEndLatency?: Duration;

  /**
   * Whether the flow gets a CloudWatch dashboard ({@link FlowDashboard}), in the flow's stack: the relay, every subscriber
   * added with `addSubscriber` or created with `flow` in any stack (outcomes, queues, dead-letter queues, function,
   * end-to-end latency) and the alarms. For a dashboard in a stack of its own, leave this off and create a
   * `FlowDashboard` there with `flow.relay` and `flow.subscribers`.
   *
   * @default false
   */
  readonly dashboard?: boolean;

  /**
   * Accounts (12 digits each) whose SQS queues may subscribe to the topic, for subscribers deployed by other pipelines
   * (`IdempotentEventFlow.fromFlowAttributes` on their side). The topic policy lets each account's principals
   * `sns:Subscribe` with `sns:Protocol` `sqs` and an `sns:Endpoint` that is a queue of that account; their
   * subscriptions need no confirmation. A `Subscriber` of this app in another account (created with `flow`) is allowed
   * by itself, for its own queue only, unless this list is given: then its account must be in it.
   *
   * @default - no other account may subscribe, but those of this app's subscribers in other accounts, each for its own queue
   */
  readonly subscriberAccounts?: string[];

  /**
   * What happens to the stateful resources the flow creates when they leave the stack: the tables, the queues and the
   * log groups of the relay and the functions. The topic's KMS key is always retained (deleting it would make
   * retained encrypted data unreadable).
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * Whether the flow carries events of any size (claim-check, docs/LARGE-EVENTS.md): the flow gets a payload bucket
   * ({@link IdempotentEventFlow.payloadBucket}, construct id `PayloadBucket`), and a producer writes the `data` of an
   * event larger than `payloadInlineThreshold` there, under the prefix `event-data/`, before its transaction; the
   * event travels with a reference, digest and size, and consumers read the data back and verify it. The bucket is
   * encrypted with the flow's `encryptionKey` (SSE-KMS, with an S3 bucket key), blocks all public access, refuses
   * requests without TLS, is not versioned (each object is written once, and a changed object fails its digest), denies
   * deleting objects under the prefix to everyone, and expires them after `payloadExpiration`. Producers (`addProducer`,
   * `grantAppendEvents`, subscribers with `publishesEvents`) may `s3:PutObject` under the prefix; subscribers
   * `s3:GetObject` under it and `s3:ListBucket` on it (so that a missing object is `404`, dead-lettered with its reason,
   * not `403`, retried). Subscribers in another account or Region read it too (the bucket and key policies name
   * their roles; docs/LARGE-EVENTS.md). Not yet with `subscriberAccounts` (other apps' subscribers) or ordered
   * subscribers in another account or Region (synth fails naming them and why), nor on an existing outbox table
   * without `timeToLiveAttributeName` (its items never expire, so replay could outlive the bucket's data).
   *
   * @default false - no bucket: a producer refuses an event larger than `maxEventSize`
   */
  readonly offloadLargeEvents?: boolean;

  /**
   * With `offloadLargeEvents`: events whose envelope, as delivered (a JSON string), is larger than this are offloaded
   * to the payload bucket; `Size.bytes(0)` offloads every event. At most `maxEventSize`.
   *
   * @default - the flow's `maxEventSize`: only events too large to travel inline are offloaded
   */
  readonly payloadInlineThreshold?: Size;

  /**
   * With `offloadLargeEvents`: how long after it is written an offloaded event's data expires (the payload bucket's one
   * lifecycle rule, in whole days). Synth fails unless it covers the longest time an event can still be read: the later
   * of the outbox's `eventRetention` (replay re-sends an event that long) and `relayMaximumRecordAge`, plus the longest
   * path of a subscriber (its `deduplicationWindow`, or `subscriptionDeadLetterRetentionPeriod + retentionPeriod +
   * deadLetterRetentionPeriod` when longer; for a registered ordered subscriber, its relay's queue and dead-letter queue
   * retentions, the relay's `archiveRetentionDays` when it archives, and the subscriber's `retentionPeriod +
   * deadLetterRetentionPeriod`), plus one day of slack for a producer clock ahead of S3's across midnight UTC. Storage
   * is paid for this long.
   *
   * @default - that window, rounded up to whole days: 38 days with the defaults (7 days of outbox retention + a 30-day deduplication window + 1 day of slack); 44 days with a registered ordered relay without an archive (7 + 4 + 14 + 4 + 14 + 1), and its archiveRetentionDays more with one
   */
  readonly payloadExpiration?: Duration;
}

/**
 * An effectively exactly-once event flow: a transactional outbox relayed to an SNS topic by an EventBridge Pipe
 * (no Lambda on the path), and idempotent subscribers, each with its own queue, dead-letter queues, inbox table and
 * consumer function.
 *
 * ```ts
 * const flow = new IdempotentEventFlow(this, 'Orders');
 * flow.grantAppendEvents(placeOrderFunction);
 * flow.addSubscriber('Billing', { entry: 'src/billing.ts' });
 * ```
 *
 * Stack outputs give operators the names the CLI takes: `<flow>/Operator` (outbox table, topic ARN, relay pipe and its
 * dead-letter queue URL) and `<flow>/<subscriber>/Operator` (subscriber name, processing mode, inbox table, queue and
 * dead-letter queue URLs, consumer function name), each a JSON object.
 */
export class IdempotentEventFlow extends Construct implements IEventFlow {
  /** The outbox the relay reads (created or given). */
  public readonly outboxTable: IOutboxTable;
  /** The topic every event is published to. */
  public readonly eventTopic: EventTopic;
  /** The EventBridge Pipe from the outbox stream to the topic. */
  public readonly relay: OutboxRelay;
  /** The key that encrypts the topic and the queues. */
  public readonly encryptionKey: kms.IKey;
  /** The alarms of the relay. */
  public readonly relayAlarms: RelayAlarms;
  /**
   * Where offloaded events' data is kept, with `offloadLargeEvents: true` (construct id `PayloadBucket`); undefined
   * otherwise.
   */
  public readonly payloadBucket?: s3.IBucket;
  /** The flow's dashboard, with `dashboard: true`; undefined otherwise. */
  public readonly dashboard?: FlowDashboard;
  /**
   * Fires when SNS failed to deliver an event of the topic (its `NumberOfNotificationsFailed`, in the flow's stack):
   * created for a subscriber in another Region than the flow, or with `subscriberAccounts` (whose subscribers may be
   * in any Region), whose subscriptions can have no dead-letter queue, so a delivery failing on a client-side error (a
   * changed queue or key policy, a deleted queue) is discarded at once. In {@link alarms}; undefined otherwise.
   * Construct id `DeliveryFailedAlarm`.
   */
  public get deliveryFailedAlarm(): cloudwatch.IAlarm | undefined {
    return this.deliveryFailed;
  }

  private readonly props: IdempotentEventFlowProps;
  private deliveryFailed?: cloudwatch.Alarm;
  private readonly subscriberList: Subscriber[] = [];
  private readonly alarmList: cloudwatch.IAlarm[] = [];
  private readonly orderedRelayList: OrderedRelay[] = [];
  private readonly orderedSubscriberList: OrderedSubscriber[] = [];

  public constructor(scope: Construct, id: string, props: IdempotentEventFlowProps = {}) {
    super(scope, id);
    this.props = props;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    if (props.outboxTable !== undefined && props.eventSource !== undefined) {
      throw validationError(
        `IdempotentEventFlow '${id}': eventSource can not be combined with outboxTable; set eventSource on the outbox table (OutboxTable.fromTableAttributes({ eventSource }))`,
      );
    }
    // The parts check these too; checking here first makes the message name this flow and the prop the user passed,
    // and an invalid maxMessageAge fails now rather than at the first addSubscriber.
    const owner = `IdempotentEventFlow '${id}'`;
    validateRelaySettings(
      owner,
      { batchSize: props.relayBatchSize, maximumRetryAttempts: props.relayMaximumRetryAttempts, maximumRecordAge: props.relayMaximumRecordAge },
      (setting) => `relay${setting.charAt(0).toUpperCase()}${setting.slice(1)}`,
    );
    validateMaxMessageAge(owner, props.maxMessageAge);
    validateMaxEndToEndLatency(owner, props.maxEndToEndLatency);
    for (const account of props.subscriberAccounts ?? []) {
      if (!/^\d{12}$/.test(account)) {
        throw validationError(`${owner}: subscriberAccounts must be AWS account ids (12 digits), but '${account}' was provided`);
      }
    }

    this.outboxTable =
      props.outboxTable ??
      new OutboxTable(this, 'OutboxTable', { eventSource: props.eventSource, removalPolicy });
    this.eventTopic = new EventTopic(this, 'EventTopic', { encryptionKey: props.encryptionKey });
    relayEventSizing(owner, { batchSize: props.relayBatchSize, maxEventSize: props.maxEventSize }, topicMaximumMessageBytes(this.eventTopic.topic), (setting) =>
      setting === 'batchSize' ? 'relayBatchSize' : setting,
    );
    this.encryptionKey = this.eventTopic.encryptionKey;
    this.relay = new OutboxRelay(this, 'Relay', {
      outboxTable: this.outboxTable,
      topic: this.eventTopic.topic,
      batchSize: props.relayBatchSize,
      maxEventSize: props.maxEventSize,
      maximumRetryAttempts: props.relayMaximumRetryAttempts,
      maximumRecordAge: props.relayMaximumRecordAge,
      deadLetterQueueEncryptionKey: this.encryptionKey,
      encryptionKey: this.encryptionKey,
      logEncryptionKey: props.logEncryptionKey,
      removalPolicy,
    });
    this.payloadBucket = this.createPayloadBucket(owner, removalPolicy);
    if (props.restrictTopicPublishers !== false) this.eventTopic.restrictPublishersTo(this.relay.role);
    for (const account of new Set(props.subscriberAccounts ?? [])) {
      this.allowSubscribe(`AllowSubscribeFromAccount${account}`, account, Stack.of(this).formatArn({ service: 'sqs', account, region: '*', resource: '*' }));
    }
    this.relayAlarms = new RelayAlarms(this, 'RelayAlarms', { relay: this.relay, alarmActions: props.alarmActions });
    if ((props.alarmActions ?? []).length === 0) {
      Annotations.of(this).addWarningV2(
        'idempotent-event-flow:noAlarmActions',
        'The flow has no alarmActions: its alarms (relay failures, old or dead-lettered or blocked messages) change state ' +
          'but notify nobody. Pass alarmActions, e.g. [new SnsAction(opsTopic)].',
      );
    }
    this.alarmList.push(...this.relayAlarms.alarms);
    if ((props.subscriberAccounts ?? []).length > 0) this.watchDeliveryFailures();
    if (props.dashboard === true) this.dashboard = new FlowDashboard(this, 'Dashboard', { relay: this.relay, relayAlarms: this.relayAlarms.alarms });
    // An ordered subscriber of a registered ordered relay left unregistered would be missing from alarms and the dashboard.
    this.node.addValidation({ validate: () => this.unregisteredOrderedSubscribers() });
    new CfnOutput(this, 'Operator', {
      description: `What operators of flow ${this.node.path} need: its outbox table, topic, relay pipe and dead-letter queue`,
      value: Stack.of(this).toJsonString({
        outboxTable: this.outboxTable.table.tableName,
        // the attribute its items' expiry is under: replay never sends an item past it
        outboxTimeToLiveAttribute: this.outboxTable.timeToLiveAttributeName,
        topicArn: this.eventTopic.topicArn,
        relayPipeName: this.relay.pipeName,
        relayDeadLetterQueueUrl: this.relay.deadLetterQueue.queueUrl,
        ...(this.payloadBucket === undefined ? {} : { payloadBucketName: this.payloadBucket.bucketName }),
      }),
    });
  }

  /**
   * A flow deployed by another pipeline, for subscribers in this app (usually another account; the flow lists it in
   * its `subscriberAccounts`): `new Subscriber(ledgerStack, 'Ledger', { flow: IdempotentEventFlow.fromFlowAttributes(ledgerStack,
   * 'Payments', { topicArn }), entry })`. Its subscribers encrypt their queues with keys of their own, create their
   * subscriptions in the topic's Region, and get their alarms (with their own `alarmActions`) and `Operator` output;
   * `publishesEvents` is refused (the flow's outbox is not known here). docs/CROSS-ACCOUNT.md.
   *
   * @param scope where the imported flow lives (any construct of the subscriber's stack)
   */
  public static fromFlowAttributes(scope: Construct, id: string, attributes: EventFlowAttributes): IEventFlow {
    return importEventFlow(scope, id, attributes);
  }

  /**
   * What subscribers of this flow default to: its `removalPolicy` and `logEncryptionKey`. A subscriber's own props win.
   */
  public get subscriberDefaults(): SubscriberDefaults {
    return { removalPolicy: this.props.removalPolicy, logEncryptionKey: this.props.logEncryptionKey };
  }

  /** The SNS topic every event is published to. */
  public get topic(): sns.ITopic {
    return this.eventTopic.topic;
  }

  /**
   * The DynamoDB tables this flow created so far: its outbox table (unless `outboxTable` was given) and the inbox
   * tables its subscribers created. Point-in-time recovery is on for each; to also keep them in an AWS Backup plan,
   * after the last `addSubscriber`:
   * `plan.addSelection('EventFlow', { resources: flow.tables.map((t) => backup.BackupResource.fromDynamoDbTable(t)) })`.
   * The inbox tables of subscribers in other stacks of the flow's account and Region are included: a plan that selects
   * them belongs in a stack that may refer to theirs (theirs, or an ops stack), not in the flow's, which they refer to.
   * Those of subscribers in another account or Region are not (CDK can not refer to a table of another environment):
   * back them up in their own environment, from `subscriber.inboxTable`.
   */
  public get tables(): dynamodb.ITable[] {
    const created: dynamodb.ITable[] = [];
    if (this.props.outboxTable === undefined) created.push(this.outboxTable.table);
    for (const subscriber of this.subscriberList) {
      if (placementOf(subscriber)?.crossEnvironment === true) continue;
      const inbox = subscriber.node.tryFindChild('InboxTable');
      if (inbox instanceof InboxTable) created.push(inbox.table);
    }
    return created;
  }

  /** The subscribers added so far, in order. */
  public get subscribers(): Subscriber[] {
    return [...this.subscriberList];
  }

  /** The ordered relays registered with {@link registerOrderedRelay}, in order. */
  public get orderedRelays(): OrderedRelay[] {
    return [...this.orderedRelayList];
  }

  /** The ordered subscribers registered with {@link registerOrderedSubscriber}, in order. */
  public get orderedSubscribers(): OrderedSubscriber[] {
    return [...this.orderedSubscriberList];
  }

  /**
   * Every alarm of the flow in its own account and Region: the relay's, the topic's `DeliveryFailedAlarm` (when there
   * is one), each subscriber's, and each registered ordered relay's and ordered subscriber's; not those of a
   * subscriber or ordered subscriber in another account or Region (CDK can not refer to an alarm of another
   * environment, e.g. from a `CompositeAlarm` here): they are on the subscriber, `subscriber.alarms`, in its own stack.
   */
  public get alarms(): cloudwatch.IAlarm[] {
    return [...this.alarmList];
  }

  /** Environment variables a producer function needs to append events with the runtime's `Outbox.fromEnvironment()`. */
  public get producerEnvironment(): { [key: string]: string } {
    return { ...this.outboxTable.producerEnvironment, ...this.payloadProducerVariables() };
  }

  /**
   * Lets `grantee` append events to the outbox, in the same transaction as its business writes.
   *
   * Grants `dynamodb:PutItem` on the outbox table (and the table key's permissions if it has a customer key); with
   * `offloadLargeEvents`, also `s3:PutObject` under the payload bucket's prefix and `kms:GenerateDataKey` on its key
   * through S3.
   * Give the producer its business tables' permissions yourself; pass {@link producerEnvironment} to its environment.
   * (Publishing to the topic directly is `flow.eventTopic.grantPublish`, `sns:Publish`: for a publisher outside the app only.)
   */
  public grantAppendEvents(grantee: iam.IGrantable): iam.Grant {
    const append = this.outboxTable.grantAppendEvents(grantee);
    return this.payloadBucket === undefined ? append : append.combine(grantWritePayloads('grantAppendEvents', this.payloadBucket, grantee));
  }

  /**
   * Lets `grantee` read the outbox as `idempotent-event-flow replay` does, to re-send events to a subscriber's queue:
   * `dynamodb:GetItem` (`--event-id`), `dynamodb:Scan` (`--since`), `dynamodb:DescribeTimeToLive` and
   * `dynamodb:DescribeTable` (the attribute the table's TTL reads, and whether a table whose TTL is off was restored)
   * on the outbox table, nothing that writes (with a customer-managed key also `kms:Decrypt`, through DynamoDB only).
   *
   * A principal of this flow's account gets them in its own policy (a role or user named by a literal ARN,
   * `new iam.ArnPrincipal('arn:aws:iam::<this account>:role/...')`, is imported as such to get a policy attached; any
   * other principal whose policy this stack can not write, e.g. an account's root, is refused at synth). A principal
   * of ANOTHER literal account (or of any literal account when this flow's stack has no fixed account), e.g. the on-call
   * role of a subscriber's team, `new iam.ArnPrincipal('arn:aws:iam::222222222222:role/ledger-oncall')`, or
   * `new iam.AccountPrincipal('222222222222')`), whose policies this stack can not write, gets a role of this flow's
   * account instead: `CrossAccountOperator<account>` (one per account, see {@link crossAccountOperatorRole}), trusted
   * by exactly the principals granted (never `*`, which is refused), holding only the outbox read, with its ARN in the
   * stack output `<flow>/CrossAccountOperator<account>/RoleArn`. The principal's own account must still let it
   * `sts:AssumeRole` that role (done here for a role of this app in that account). With the role, `replay` reads the
   * outbox; its send to the subscriber's queue (in the other account) is not covered by this grant (docs/CROSS-ACCOUNT.md,
   * "Operating a subscriber of another account").
   *
   * @returns the grant of the outbox read, to `grantee` or (another account) to the role
   */
  public grantOperator(grantee: iam.IGrantable): iam.Grant {
    return grantFlowOperator(this, { description: `IdempotentEventFlow '${this.node.id}'`, kind: 'flow' }, this.outboxTable, grantee);
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
   * Grants what {@link grantAppendEvents} grants: `dynamodb:PutItem` on the outbox, not `sns:Publish`.
   *
   * @deprecated use {@link grantAppendEvents}, whose name says what it grants (`flow.eventTopic.grantPublish` grants
   * `sns:Publish` on the topic)
   */
  public grantPublish(grantee: iam.IGrantable): iam.Grant {
    return this.grantAppendEvents(grantee);
  }

  /**
   * Adds a producer function: your handler (using `Outbox.fromEnvironment()` from `@idempotent-event-flow/runtime`)
   * bundled with the runtime, with the outbox environment set and permission to append events. Grant it access to
   * your business tables yourself.
   */
  public addProducer(id: string, options: FunctionOptions): ProducerFunction {
    const producer = new ProducerFunction(this, id, {
      removalPolicy: this.props.removalPolicy,
      logEncryptionKey: this.props.logEncryptionKey,
      ...options,
      outboxTable: this.outboxTable,
    });
    if (this.payloadBucket !== undefined) {
      this.refuseOwnPayloadVariables(`IdempotentEventFlow '${this.node.id}': addProducer '${id}'`, options.environment);
      for (const [name, value] of Object.entries(this.payloadProducerVariables())) producer.lambdaFunction.addEnvironment(name, value);
      grantWritePayloads('grantAppendEvents', this.payloadBucket, producer.role);
    }
    return producer;
  }

  /**
   * Adds a subscriber: its own queue and dead-letter queues, subscription, inbox table (none with
   * `ProcessingMode.AGGREGATE`), consumer function and alarms.
   *
   * With `publishesEvents: true`, the consumer function also gets {@link producerEnvironment} and
   * {@link grantAppendEvents}'s permission, so its handler can append events to this flow's outbox in its own commit.
   *
   * Fails if another subscriber of this flow has the same `subscriberName`, or another subscriber (of any flow in the
   * app) uses that name on the same inbox table.
   *
   * @param id the subscriber's construct id, also its name in inbox keys and logs unless `subscriberName` is set
   */
  public addSubscriber(id: string, options: SubscriberOptions): Subscriber {
    const taken = this.node.tryFindChild(id);
    if (taken !== undefined) {
      throw validationError(
        `IdempotentEventFlow '${this.node.id}': a ${taken instanceof Subscriber ? 'subscriber' : 'construct'} with id '${id}' was already added ` +
          `(${taken.node.path}); give each addSubscriber call its own id`,
      );
    }
    this.assertSubscriberNameFree(options.subscriberName ?? id, `${this.node.path}/${id}`);
    return new Subscriber(this, id, { ...options, flow: this });
  }

  /**
   * Gives `subscriber` what {@link addSubscriber} gives: its alarms (with this flow's `alarmActions`, `maxMessageAge`
   * and `maxEndToEndLatency`), its `Operator` output and a row on this flow's dashboard, all in the subscriber's own
   * stack but the row; and adds it to {@link subscribers} and its alarms to {@link alarms} (not those of a subscriber in
   * another account or Region: they stay on `subscriber.alarms`). A `Subscriber` created with
   * `flow: this` (or by `addSubscriber`) calls it itself; there is no need to.
   *
   * Fails for a subscriber of another flow or of none, for one registered before, and when another subscriber of this
   * flow has the same `subscriberName`.
   */
  public registerSubscriber(subscriber: Subscriber): void {
    const owner = `IdempotentEventFlow '${this.node.id}'`;
    if (subscriber.flow !== this) {
      throw validationError(
        `${owner}: registerSubscriber takes a subscriber created with flow: this flow (${this.node.path}), but ${subscriber.node.path} ` +
          `was created with ${subscriber.flow === undefined ? 'no flow' : `the flow ${subscriber.flow.node.path}`}`,
      );
    }
    if (this.subscriberList.includes(subscriber)) {
      throw validationError(`${owner}: the subscriber ${subscriber.node.path} is registered already; a Subscriber created with flow registers itself`);
    }
    this.assertSubscriberNameFree(subscriber.subscriberName, subscriber.node.path);
    const placement = placementOf(subscriber);
    if (this.payloadBucket !== undefined) this.letSubscriberReadPayloads(owner, subscriber, placement);
    if (placement?.crossEnvironment) this.admitRemoteSubscriber(subscriber);
    const alarms = giveSubscriberAlarmsAndOutput(subscriber, {
      alarmActions: this.props.alarmActions,
      maxMessageAge: this.props.maxMessageAge,
      maxEndToEndLatency: this.props.maxEndToEndLatency,
      outboxTable: this.outboxTable.table,
      outboxTimeToLiveAttribute: this.outboxTable.timeToLiveAttributeName,
    });
    if (placement?.crossEnvironment) {
      // Its metrics and alarms are in another account or Region: the row names it and says where to look.
      this.dashboard?.dashboard.addWidgets(
        new cloudwatch.TextWidget({
          markdown:
            `## Subscriber ${subscriber.subscriberName} (${subscriber.processingMode}), in ${describeEnvironment(placement.subscriberEnvironment)}\n` +
            'Not shown here: its metrics and alarms are in its own account and Region (its stack ' +
            `${Stack.of(subscriber).stackName}). Look there, or share them with CloudWatch cross-account observability.`,
          width: 24,
          height: 2,
        }),
      );
    } else {
      this.dashboard?.addSubscriber(subscriber, alarms.alarms);
    }
    this.subscriberList.push(subscriber);
    // Alarms of another environment can not be referred to from this one: they stay on the subscriber (subscriber.alarms).
    if (placement?.crossEnvironment !== true) this.alarmList.push(...alarms.alarms);
    // Across Regions the subscription has no dead-letter queue: the topic's failed deliveries are the only trace.
    if (placement?.crossRegion === true) this.watchDeliveryFailures();
  }

  /**
   * A subscriber of this app in another account or Region: in another account, the topic policy lets that account
   * subscribe its queue (unless `subscriberAccounts` lets the account subscribe any queue of its own; refused when the
   * list is given without it); its stack is deployed after this flow's (its subscription needs the topic and the
   * grant) when both are in one Stage. Across Stages (CDK Pipelines: a stage per account) CDK can not order them: the
   * flow's pipeline stage must deploy first (docs/CROSS-ACCOUNT.md).
   */
  private admitRemoteSubscriber(subscriber: Subscriber): void {
    const placement = placementOf(subscriber)!;
    const account = placement.subscriberEnvironment.account;
    const listed = this.props.subscriberAccounts;
    if (placement.crossAccount && listed !== undefined && !listed.includes(account)) {
      throw validationError(
        `IdempotentEventFlow '${this.node.id}': the subscriber ${subscriber.node.path} is in ${describeEnvironment(placement.subscriberEnvironment)}, ` +
          `the flow in ${describeEnvironment(placement.flowEnvironment)}, but subscriberAccounts (${listed.join(', ')}) does not list ${account}; ` +
          'add it to subscriberAccounts, or the subscription can not be created',
      );
    }
    if (placement.crossAccount && listed === undefined) {
      const queueName = physicalNamesOf(subscriber)!.queueName; // named: it is in another stack
      const queueArn = Stack.of(this).formatArn({ service: 'sqs', account, region: placement.subscriberEnvironment.region, resource: queueName });
      this.allowSubscribe(subscribeGrantSid(subscriber.subscriberName, account), account, queueArn);
    }
    if (Stage.of(Stack.of(subscriber)) === Stage.of(Stack.of(this))) {
      Stack.of(subscriber).addStackDependency(Stack.of(this), `subscriber ${subscriber.subscriberName} subscribes to the topic of ${this.node.path}`);
    }
  }

  /**
   * Creates (once) the `DeliveryFailedAlarm` on the topic's `NumberOfNotificationsFailed` (AWS/SNS, dimension
   * TopicName), which CloudWatch keeps in the topic's account and Region: this stack's. It counts every subscription of
   * the topic; those in the flow's Region also have their subscription dead-letter queue alarmed.
   */
  private watchDeliveryFailures(): void {
    if (this.deliveryFailed !== undefined) return;
    this.deliveryFailed = createThresholdAlarm(
      this,
      'DeliveryFailedAlarm',
      this.eventTopic.topic.metricNumberOfNotificationsFailed({ period: ALARM_PERIOD, statistic: 'Sum' }),
      1,
      `Flow ${this.node.path}: SNS failed to deliver events of the topic to a subscription. A subscription in another Region ` +
        'than the topic has no dead-letter queue, and SNS does not retry client-side errors (a changed queue or key policy, ' +
        'a deleted queue): such an event is lost to that subscriber. Fix the queue or key, then re-send it from the outbox ' +
        'with idempotent-event-flow replay (docs/CROSS-ACCOUNT.md).',
      { alarmActions: this.props.alarmActions },
    );
    this.alarmList.push(this.deliveryFailed);
  }

  /** Lets `account` subscribe SQS queues matching `endpoint` (an ARN, `*` allowed) to the topic. */
  private allowSubscribe(sid: string, account: string, endpoint: string): void {
    this.eventTopic.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid,
        principals: [new iam.AccountPrincipal(account)],
        actions: ['sns:Subscribe'],
        resources: [this.eventTopic.topicArn],
        conditions: endpoint.includes('*')
          ? { StringEquals: { 'sns:Protocol': 'sqs' }, StringLike: { 'sns:Endpoint': endpoint } }
          : { StringEquals: { 'sns:Protocol': 'sqs', 'sns:Endpoint': endpoint } },
      }),
    );
  }

  /**
   * Puts an ordered relay (docs/ORDERED-DELIVERY.md) in the flow's on-call view: its alarms (`relay.alarms`: the relay
   * queue's and the pipe's dead letters, the pipe's failed executions) in {@link alarms}, and a row on the flow's
   * dashboard. Register each of its ordered subscribers too, with {@link registerOrderedSubscriber}: synth fails for an
   * ordered subscriber of a registered relay that is not. The relay's alarms keep the `alarmActions` it was created
   * with.
   *
   * Fails for a relay registered before, and, with `dashboard: true`, for a relay in another stack than the flow (its
   * stack refers to the flow's outbox, so the dashboard's row would be a dependency cycle): create the relay in the
   * flow's stack, or leave the dashboard off and put a `FlowDashboard` in a stack of its own.
   */
  public registerOrderedRelay(relay: OrderedRelay): void {
    if (this.orderedRelayList.includes(relay)) {
      throw validationError(`IdempotentEventFlow '${this.node.id}': the ordered relay ${relay.node.path} is registered already`);
    }
    if (this.dashboard !== undefined && Stack.of(relay) !== Stack.of(this)) {
      // The relay's stack refers to the outbox's (its pipe reads the outbox stream): a row here would refer back.
      throw validationError(
        `IdempotentEventFlow '${this.node.id}': the ordered relay ${relay.node.path} is in the stack ${Stack.of(relay).stackName}, the flow and its dashboard ` +
          `(dashboard: true) in the stack ${Stack.of(this).stackName}; the relay's stack refers to the flow's (the outbox stream), so the relay's dashboard row ` +
          "would make the two stacks depend on each other, a cycle CDK refuses. Create the OrderedRelay in the flow's stack (its ordered subscribers may be " +
          'in other stacks), or set dashboard: false and create a FlowDashboard with orderedRelays and orderedSubscribers in a stack of its own',
      );
    }
    this.orderedRelayList.push(relay);
    this.alarmList.push(...relay.alarms);
    relay._onAlarmAdded((alarm) => this.alarmList.push(alarm));
    this.dashboard?.addOrderedRelay(relay);
  }

  /**
   * Puts an ordered subscriber in the flow's on-call view: its alarms (`subscriber.alarms`: dead letters, function
   * errors, a held aggregate) in {@link alarms}, and a row on the flow's dashboard. With `offloadLargeEvents`, its
   * consumer also gets the payload bucket (its variables, `s3:GetObject` and `s3:ListBucket` under the prefix,
   * `kms:Decrypt` through S3), as a subscriber of the flow does; it must then be in the flow's account and Region.
   *
   * In another stack than the flow, as a `Subscriber` there, its FIFO queues, consumer function and alarms get names
   * derived from their construct paths, so the dashboard in the flow's stack names them without referring back to
   * the subscriber's stack (which refers to the flow's). In another account or Region its alarms stay on it
   * (`subscriber.alarms`, not in {@link alarms}) and its dashboard row says where they are.
   *
   * Fails for a subscriber registered before, and for one whose relay was not registered with
   * {@link registerOrderedRelay}.
   */
  public registerOrderedSubscriber(subscriber: OrderedSubscriber): void {
    const owner = `IdempotentEventFlow '${this.node.id}'`;
    if (!this.orderedRelayList.includes(subscriber.relay)) {
      throw validationError(
        `${owner}: the ordered subscriber ${subscriber.node.path} subscribes to the ordered relay ${subscriber.relay.node.path}, which is not registered; ` +
          'call registerOrderedRelay with it first',
      );
    }
    if (this.orderedSubscriberList.includes(subscriber)) {
      throw validationError(`${owner}: the ordered subscriber ${subscriber.node.path} is registered already`);
    }
    if (this.payloadBucket !== undefined) this.letOrderedSubscriberReadPayloads(owner, subscriber);
    const here = Stack.of(this);
    const there = Stack.of(subscriber);
    // In another stack, as a Subscriber there: literal names, so the dashboard in this stack does not refer back to
    // the subscriber's stack, which refers to this one (its subscription, key and outbox): a cycle CDK refuses.
    if (there !== here) {
      nameSubscriberResources(subscriber);
      nameAlarms(subscriber, [subscriber.deadLetterAlarm, subscriber.errorsAlarm, subscriber.heldAggregateAlarm, subscriber.oldestMessageAgeAlarm, subscriber.deadLetterExpiringAlarm]);
    }
    const crossEnvironment = isCrossEnvironment(
      compareEnvironments(owner, `the flow ${this.node.path}`, { account: here.account, region: here.region }, there.stackName, { account: there.account, region: there.region }),
    );
    this.orderedSubscriberList.push(subscriber);
    if (crossEnvironment) {
      // Its metrics and alarms are in another account or Region (CDK can not refer to them from this one): the row
      // names it and says where to look, and its alarms stay on it (subscriber.alarms), as a Subscriber's do.
      this.dashboard?.dashboard.addWidgets(
        new cloudwatch.TextWidget({
          markdown:
            `## Ordered subscriber ${subscriber.subscriberName}, in ${describeEnvironment({ account: there.account, region: there.region })}\n` +
            `Not shown here: its metrics and alarms are in its own account and Region (its stack ${there.stackName}). ` +
            'Look there, or share them with CloudWatch cross-account observability.',
          width: 24,
          height: 2,
        }),
      );
      return;
    }
    this.alarmList.push(...subscriber.alarms);
    this.dashboard?.addOrderedSubscriber(subscriber);
  }

  /** What synth refuses: ordered subscribers (anywhere in the app) of a registered ordered relay that were not registered. */
  private unregisteredOrderedSubscribers(): string[] {
    if (this.orderedRelayList.length === 0) return [];
    return this.node.root.node
      .findAll()
      .filter((c): c is OrderedSubscriber => c instanceof OrderedSubscriber && this.orderedRelayList.includes(c.relay) && !this.orderedSubscriberList.includes(c))
      .map(
        (subscriber) =>
          `OrderedSubscriber ${subscriber.node.path} subscribes to the ordered relay ${subscriber.relay.node.path}, registered with the flow ${this.node.path}, ` +
          `but is not registered itself: its alarms are missing from flow.alarms and its row from the dashboard. Call flow.registerOrderedSubscriber(subscriber)`,
      );
  }

  /**
   * Fails when another subscriber of this flow is named `subscriberName`. The name tells subscribers apart in inbox
   * keys, log lines, alarm descriptions, dead-letter attributes and the operator CLI; two of one flow under one name
   * would be confused everywhere (and share records on a shared inbox).
   */
  private assertSubscriberNameFree(subscriberName: string, path: string): void {
    const namesake = this.subscriberList.find((existing) => existing.subscriberName === subscriberName);
    if (namesake !== undefined) {
      throw validationError(
        `IdempotentEventFlow '${this.node.id}': subscriberName '${subscriberName}' of ${path} is already the name of ` +
          `${namesake.node.path}; subscribers of one flow must have different names. Set subscriberName on one of them`,
      );
    }
  }

  /** The payload bucket with `offloadLargeEvents`, after checking the props that go with it. */
  private createPayloadBucket(owner: string, removalPolicy: RemovalPolicy): s3.IBucket | undefined {
    const { offloadLargeEvents, payloadInlineThreshold, payloadExpiration } = this.props;
    if (offloadLargeEvents !== true) {
      for (const [prop, value] of [
        ['payloadInlineThreshold', payloadInlineThreshold],
        ['payloadExpiration', payloadExpiration],
      ] as const) {
        if (value !== undefined) throw validationError(`${owner}: ${prop} can only be used with offloadLargeEvents: true, but offloadLargeEvents is ${String(offloadLargeEvents ?? false)}`);
      }
      return undefined;
    }
    if (payloadInlineThreshold !== undefined) {
      const bytes = payloadInlineThreshold.toBytes();
      const limit = this.relay.maxEventSize.toBytes();
      if (!Number.isInteger(bytes) || bytes < 0 || bytes > limit) {
        throw validationError(`${owner}: payloadInlineThreshold must be a whole number of bytes from 0 to maxEventSize (${limit} bytes), but ${bytes} bytes was provided`);
      }
    }
    if (payloadExpiration !== undefined && (payloadExpiration.toSeconds() % 86_400 !== 0 || payloadExpiration.toSeconds() <= 0)) {
      throw validationError(`${owner}: payloadExpiration must be a whole number of days, at least 1 (S3 expires objects in days), but ${payloadExpiration.toHumanString()} was provided`);
    }
    const accounts = this.props.subscriberAccounts ?? [];
    if (accounts.length > 0) {
      throw validationError(
        `${owner}: subscriberAccounts cannot be used with offloadLargeEvents yet: the subscribers of ${accounts.join(', ')} are deployed by other apps, ` +
          'which are not given the payload bucket (its name, s3:GetObject and kms:Decrypt), so they could not fetch an offloaded event; ' +
          `but subscriberAccounts is [${accounts.join(', ')}] and offloadLargeEvents is true. Use a flow without offloadLargeEvents for subscribers of other accounts`,
      );
    }
    // review rx15 (RX15-4): the payload window counts the outbox's eventRetention as the end of replay; on a table whose
    // items never expire, replay would send events whose data the bucket has deleted
    if (this.outboxTable.timeToLiveAttributeName === undefined) {
      throw validationError(
        `${owner}: offloadLargeEvents needs an outbox table whose items expire, but the outbox table's timeToLiveAttributeName is undefined (producers set no ` +
          `expiry, so its items stay until deleted): the payload bucket deletes an event's data after a window that counts the outbox's eventRetention ` +
          `(${this.outboxTable.eventRetention.toDays()} days) as how long replay can re-send it, so replay would send events whose data is gone. ` +
          'Set timeToLiveAttributeName (the attribute the table\'s TTL is enabled on) in OutboxTable.fromTableAttributes, or leave offloadLargeEvents out',
      );
    }
    const bucket = createPayloadBucket(this, this.encryptionKey, removalPolicy, () => payloadExpiration?.toDays() ?? this.payloadWindow().days);
    this.node.addValidation({ validate: () => [...this.payloadExpirationErrors(owner), ...this.orderedRelaysOfOffloadingOutbox(owner)] });
    return bucket;
  }

  /**
   * The longest time an offloaded event can still be read, from when its data is written: replay re-sends an event for
   * the outbox's `eventRetention` (at least 1 day, longer than the relay's maximum record age of at most 23 hours), and
   * a copy then takes at most its subscriber's longest path: the deduplication window, or the retentions of the
   * subscription's dead-letter queue, the queue and its dead-letter queue, when longer; for an ordered subscriber, the
   * retentions of its relay's queue and dead-letter queue, its topic's archive, its queue and its dead-letter queue; plus one day of slack for a
   * producer clock ahead of S3's across midnight UTC (review r8b, R8b-7; docs/LARGE-EVENTS.md).
   */
  private payloadWindow(): ReadableWindow {
    const terms: WindowTerm[] = [{ what: "the outbox's eventRetention, how long replay can re-send an event", duration: this.outboxTable.eventRetention }];
    // each subscriber's path is a list of terms; the longest path (by its sum) joins the window, term by term
    const paths: WindowTerm[][] = [];
    for (const subscriber of this.subscriberList) {
      const queue = subscriber.consumerQueue;
      const subscriptionRetention = (subscriber.subscriptionDeadLetterQueue?.node.defaultChild as sqs.CfnQueue | undefined)?.messageRetentionPeriod;
      const pathSeconds = (typeof subscriptionRetention === 'number' ? subscriptionRetention : 0) + queue.retentionPeriod.toSeconds() + queue.deadLetterRetentionPeriod.toSeconds();
      paths.push([
        {
          what: `subscriber ${subscriber.subscriberName}'s subscriptionDeadLetterRetentionPeriod + retentionPeriod + deadLetterRetentionPeriod`,
          duration: Duration.seconds(pathSeconds),
        },
      ]);
      if (subscriber.deduplicationWindow !== undefined) paths.push([{ what: `subscriber ${subscriber.subscriberName}'s deduplicationWindow`, duration: subscriber.deduplicationWindow }]);
    }
    // an ordered subscriber (registered: its consumer reads the bucket) is reached through its relay: the relay's FIFO
    // queue and its dead-letter queue (moving a FIFO message to a dead-letter queue restarts its retention), then the
    // topic's archive, which replay re-delivers from for archiveRetentionDays after publishing, then the subscriber's
    // queue and its dead-letter queue; its subscription has no dead-letter queue of its own to add
    for (const subscriber of this.orderedSubscriberList) {
      const relay = subscriber.relay;
      const queue = subscriber.consumerQueue;
      const path: WindowTerm[] = [
        { what: `ordered relay ${relay.node.path}'s relay queue retention`, duration: queueRetention(relay.relayQueue) },
        { what: `ordered relay ${relay.node.path}'s relay dead-letter queue retention, restarted when a message moves there`, duration: queueRetention(relay.relayDeadLetterQueue) },
      ];
      if (relay.archiveRetentionDays !== undefined) {
        path.push({ what: `ordered relay ${relay.node.path}'s topic archive (archiveRetentionDays), which replay re-delivers from`, duration: Duration.days(relay.archiveRetentionDays) });
      }
      path.push(
        { what: `ordered subscriber ${subscriber.subscriberName}'s retentionPeriod`, duration: queue.retentionPeriod },
        { what: `ordered subscriber ${subscriber.subscriberName}'s deadLetterRetentionPeriod`, duration: queue.deadLetterRetentionPeriod },
      );
      paths.push(path);
    }
    const sum = (path: readonly WindowTerm[]): number => path.reduce((total, term) => total + term.duration.toSeconds(), 0);
    let longest: WindowTerm[] | undefined;
    for (const path of paths) if (longest === undefined || sum(path) > sum(longest)) longest = path;
    if (longest !== undefined) terms.push(...longest);
    // R8b-7: the key names the producer's UTC day and a retry that day reuses the object; with the producer's clock ahead
    // of S3's across midnight, S3 dates the object the day before, and its expiry (creation + days, rounded up to
    // midnight UTC) comes up to a day before the window has passed for that retry's commit
    terms.push({ what: "slack: a producer clock ahead of S3's across midnight UTC dates the object a day early", duration: Duration.days(1) });
    const seconds = terms.reduce((sum, term) => sum + term.duration.toSeconds(), 0);
    return { days: wholeDays(Duration.seconds(seconds)), terms };
  }

  /** Synth's check of `payloadExpiration` against {@link payloadWindow}, once every subscriber is known. */
  private payloadExpirationErrors(owner: string): string[] {
    const given = this.props.payloadExpiration;
    if (given === undefined) return [];
    const window = this.payloadWindow();
    if (given.toDays() >= window.days) return [];
    return [
      `${owner}: payloadExpiration must be at least ${window.days} days, the longest an offloaded event can still be read ` +
        `(${describeWindow(window)}), or its data expires while the event can still be delivered, but ${given.toHumanString()} was provided`,
    ];
  }

  /**
   * What synth refuses with `offloadLargeEvents`: an ordered relay (anywhere in the app) on this flow's outbox table
   * that was not registered. Its producers would offload ordered events (they have the flow's payload variables), and
   * its ordered subscribers, never registered, are not given the payload bucket, so each such event would be
   * dead-lettered there. (A registered relay's subscribers must be registered too: unregisteredOrderedSubscribers.)
   */
  private orderedRelaysOfOffloadingOutbox(owner: string): string[] {
    const root = this.node.root;
    const subscribers = root.node.findAll().filter((c): c is OrderedSubscriber => c instanceof OrderedSubscriber);
    return root.node
      .findAll()
      .filter((c): c is OrderedRelay => c instanceof OrderedRelay && c.outboxTable === this.outboxTable && !this.orderedRelayList.includes(c))
      .map((relay) => {
        const its = subscribers.filter((subscriber) => subscriber.relay === relay);
        const whom = its.length === 0 ? 'its ordered subscribers' : its.map((s) => `the ordered subscriber ${s.subscriberName} (${s.node.path})`).join(', ');
        return (
          `${owner}: offloadLargeEvents is true, but the ordered relay ${relay.node.path} relays this flow's outbox table to ${whom} without being registered, ` +
          `so ${its.length > 1 ? 'their functions are' : 'its function is'} not given the payload bucket: an offloaded ordered event would be dead-lettered there. ` +
          'Call flow.registerOrderedRelay(relay) and flow.registerOrderedSubscriber(subscriber) for each of its subscribers'
        );
      });
  }

  /** The claim-check variables of a producer of this flow; none without a payload bucket. */
  private payloadProducerVariables(): Record<string, string> {
    if (this.payloadBucket === undefined) return {};
    return payloadProducerEnvironment(this.payloadBucket, this.props.payloadInlineThreshold?.toBytes());
  }

  /** Refuses claim-check variables a user set on a function the flow sets them on. */
  private refuseOwnPayloadVariables(owner: string, environment: { [key: string]: string } | undefined): void {
    for (const name of Object.keys(environment ?? {})) {
      if (name.startsWith('IEF_PAYLOAD_')) {
        throw validationError(`${owner}: environment variable ${name} is set by the flow (offloadLargeEvents), but it was provided in environment; configure it through the flow's props`);
      }
    }
  }

  /**
   * A subscriber of a flow that offloads reads the payload bucket (its variables and grants), and, when it publishes
   * events (`publishesEvents`), writes to it as a producer does.
   */
  private letSubscriberReadPayloads(owner: string, subscriber: Subscriber, placement: ReturnType<typeof placementOf>): void {
    const bucket = this.payloadBucket!;
    if (placement?.crossEnvironment === true) {
      refuseDataFilterOnOffloadedFlow(owner, subscriber);
      this.refuseSubscriberPayloadVariables(owner, subscriber);
      // (publishesEvents is refused across environments by the Subscriber: a transaction can not span accounts or Regions)
      letRemoteSubscriberReadPayloads(owner, subscriber, subscriber.consumerFunction.lambdaFunction, bucket, this.encryptionKey, placement);
      return;
    }
    refuseDataFilterOnOffloadedFlow(owner, subscriber);
    const fn = subscriber.consumerFunction.lambdaFunction;
    const publishes = ENV.OUTBOX_TABLE_NAME in this.refuseSubscriberPayloadVariables(owner, subscriber);
    const environment = publishes ? this.payloadProducerVariables() : payloadReaderEnvironment(bucket);
    for (const [name, value] of Object.entries(environment)) fn.addEnvironment(name, value);
    grantReadPayloads('Subscriber', bucket, fn);
    if (publishes) grantWritePayloads('grantAppendEvents', bucket, fn);
  }

  /** Refuses claim-check variables a user set on a subscriber's function; returns the function's variables. */
  private refuseSubscriberPayloadVariables(owner: string, subscriber: { readonly subscriberName: string; readonly consumerFunction: { readonly lambdaFunction: lambda.IFunction } }): Record<string, unknown> {
    const fn = subscriber.consumerFunction.lambdaFunction;
    const variables = (Stack.of(fn).resolve((fn.node.defaultChild as lambda.CfnFunction).environment) as { variables?: Record<string, unknown> } | undefined)?.variables ?? {};
    for (const name of Object.keys(variables)) {
      if (name.startsWith('IEF_PAYLOAD_')) {
        throw validationError(`${owner}: environment variable ${name} of subscriber ${subscriber.subscriberName} is set by the flow (offloadLargeEvents); configure it through the flow's props`);
      }
    }
    return variables;
  }

  /**
   * An ordered subscriber of a flow that offloads reads the payload bucket as a subscriber does (the ordered relay
   * carries the small envelope; its consumer fetches the data before its sequence fence: the fence reads the envelope's
   * ordering attributes only). Refused in another account or Region than the flow.
   */
  private letOrderedSubscriberReadPayloads(owner: string, subscriber: OrderedSubscriber): void {
    const bucket = this.payloadBucket!;
    const here = Stack.of(this);
    const there = Stack.of(subscriber);
    if (here.account !== there.account || here.region !== there.region) {
      throw validationError(
        `${owner}: offloadLargeEvents does not support ordered subscribers in another account or Region yet, but the ordered subscriber ${subscriber.node.path} ` +
          `is in ${describeEnvironment({ account: there.account, region: there.region })}, the flow in ${describeEnvironment({ account: here.account, region: here.region })}; ` +
          "deploy it in the flow's account and Region, or use a flow without offloadLargeEvents for ordered events",
      );
    }
    const fn = subscriber.consumerFunction.lambdaFunction;
    this.refuseSubscriberPayloadVariables(owner, subscriber);
    for (const [name, value] of Object.entries(payloadReaderEnvironment(bucket))) fn.addEnvironment(name, value);
    grantReadPayloads('Subscriber', bucket, fn);
  }
}
