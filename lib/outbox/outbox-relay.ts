import { type Duration, RemovalPolicy, Size } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as logs from 'aws-cdk-lib/aws-logs';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { outboxFilterPattern, outboxInputTemplate } from '../../lambda/contract/wire-format';
import { grantKeyViaService, KMS_SEND_MESSAGE_ACTIONS } from '../private/kms-actions';
import { libraryGrantOrResource } from '../private/library-statements';
import { createPipeDeadLetterQueue, createRelayPipe, pipeMetric } from '../private/relay-pipe';
import { validateRelaySettings } from '../private/shared-limits';
import { validateStringPattern } from '../private/validate-props';
import type { IOutboxTable } from './outbox-table';
import { limitOutboxEvents, relayEventSizing, topicMaximumMessageBytes } from './private/event-size';
import { validationError } from '../private/validation-error';

/** The valid `Name` of a pipe. */
const PIPE_NAME_PATTERN = /^[.\-_A-Za-z0-9]{1,64}$/;

/** How much an {@link OutboxRelay} logs about each pipe execution. */
export enum OutboxRelayLogLevel {
  /** No logs. */
  OFF = 'OFF',
  /** Only executions that failed or partly failed. */
  ERROR = 'ERROR',
  /** Failures and the main steps of each execution. */
  INFO = 'INFO',
  /** Every step of every execution. */
  TRACE = 'TRACE',
}

/** Properties of an {@link OutboxRelay}. */
export interface OutboxRelayProps {
  /** The outbox table whose stream is relayed. */
  readonly outboxTable: IOutboxTable;

  /**
   * The standard SNS topic events are published to (EventBridge Pipes can not target FIFO topics).
   *
   * If the topic is encrypted, the relay is granted use of `topic.masterKey`; import an existing encrypted topic with
   * `Topic.fromTopicAttributes({ topicArn, keyArn })` so the key is known.
   */
  readonly topic: sns.ITopic;

  /**
   * Name of the pipe.
   *
   * `Name`, `Source` and the starting position are create-only: a change to the outbox stream (a new stream after its
   * view type changed or it was re-enabled, a replaced outbox table) replaces the pipe, and CloudFormation creates the
   * replacement before it deletes the old pipe. With a name of your own, such an update fails unless you change the
   * name in the same deployment.
   *
   * @default - a name derived from the construct path (at most 42 characters) followed by the stream's label (the
   * timestamp that ends its ARN, without colons), so the name changes whenever the pipe is replaced, and the role's
   * trust policy can name the pipe's ARN (`aws:SourceArn`) without a circular reference
   */
  readonly pipeName?: string;

  /**
   * Largest number of stream records the pipe publishes in one execution, 1 to 10.
   *
   * SNS is a batch target that takes at most 10 messages per call, and the pipe publishes with PublishBatch even for
   * one record, so the messages of a batch must fit the topic's `MaximumMessageSize` together: `batchSize` x
   * `maxEventSize` must be at most that (synth fails otherwise).
   *
   * @default - 10, or as many events of `maxEventSize` as fit the topic's `MaximumMessageSize` (at most 10)
   */
  readonly batchSize?: number;

  /**
   * The largest event producers of the outbox may append, as delivered (the envelope as a JSON string); a producer's
   * `Outbox` refuses a larger one with `EventTooLargeError`. Producers get it in their environment
   * (`IEF_MAX_EVENT_BYTES`, part of the outbox's `producerEnvironment`). `batchSize` x `maxEventSize` must be at most
   * the topic's `MaximumMessageSize` (262,144 bytes unless the topic, defined in this app, sets more), so that no batch
   * is too large for one SNS PublishBatch.
   *
   * @default - the topic's `MaximumMessageSize` divided by `batchSize`: 26,214 bytes with the defaults
   */
  readonly maxEventSize?: Size;

  /**
   * How often a failed batch is retried before its records go to the dead-letter queue, 0 to 185.
   *
   * Keeping this finite stops one record from blocking its shard until the stream drops it after 24 hours.
   *
   * @default 10
   */
  readonly maximumRetryAttempts?: number;

  /**
   * Oldest stream record the pipe still publishes; older records go to the dead-letter queue. 1 minute to 23 hours.
   *
   * Below the stream's 24-hour retention, so a dead-lettered record can still be read from the stream and replayed.
   *
   * @default Duration.hours(1)
   */
  readonly maximumRecordAge?: Duration;

  /**
   * How many batches from one shard the pipe processes at the same time, 1 to 10.
   *
   * Above 1, events keep their order only per outbox item key (SNS standard topics do not keep order anyway).
   *
   * @default 1
   */
  readonly parallelizationFactor?: number;

  /**
   * Queue that receives what the pipe could not publish after its retries (details of the failed batch).
   *
   * @default - a queue is created: encrypted with `deadLetterQueueEncryptionKey` (or SQS-managed keys), TLS-only,
   * keeping messages 14 days, retained on removal per `removalPolicy`
   */
  readonly deadLetterQueue?: sqs.IQueue;

  /**
   * Customer-managed KMS key for the dead-letter queue the relay creates. Not allowed with `deadLetterQueue`.
   *
   * @default - the created queue uses SQS-managed encryption (SSE-SQS)
   */
  readonly deadLetterQueueEncryptionKey?: kms.IKey;

  /**
   * What happens to the created dead-letter queue and log group when they are removed from the stack.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;

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
   * Customer-managed KMS key that encrypts the pipe's log group. Its key policy gets the statement CloudWatch Logs
   * needs, conditioned on the encryption context of log groups of this account and region.
   *
   * @default - the log group is encrypted by CloudWatch Logs with its own key
   */
  readonly logEncryptionKey?: kms.IKey;

  /**
   * Whether log records include execution data: the event payload and the AWS request and response.
   *
   * Events are business data and may be sensitive, so this is off unless you turn it on.
   *
   * @default false
   */
  readonly includeExecutionData?: boolean;

  /**
   * Customer-managed KMS key that encrypts the pipe's data at rest (its filter pattern and input template; events
   * flowing through a pipe are never stored). The pipe's role is granted `kms:DescribeKey` on it, and
   * `kms:GenerateDataKey` and `kms:Decrypt` only with this pipe's encryption context (its ARN), so the role can not use
   * the key for other data it protects (the flow's key also encrypts the topic, the queues and the inbox tables).
   * `IdempotentEventFlow` passes its key.
   *
   * @default - an AWS owned key
   */
  readonly encryptionKey?: kms.IKey;
}

/**
 * Relays outbox events from the outbox table's DynamoDB stream to an SNS topic with an EventBridge Pipe; no Lambda
 * runs on the path.
 *
 * The pipe passes only INSERTs of outbox items (the filter from the shared wire format) and publishes each item's
 * CloudEvents envelope as the message body. Retries and record age are finite, failing batches are bisected, and
 * what still fails goes to a dead-letter queue. The pipe's role may read only this stream, publish only to this
 * topic, send only to the dead-letter queue and write only to the pipe's log group.
 */
export class OutboxRelay extends Construct {
  /** Name of the pipe. */
  public readonly pipeName: string;

  /** ARN of the pipe. */
  public readonly pipeArn: string;

  /** The role the pipe runs as. */
  public readonly role: iam.IRole;

  /** Queue receiving what the pipe could not publish. */
  public readonly deadLetterQueue: sqs.IQueue;

  /** Log group of the pipe's execution logs. */
  public readonly logGroup: logs.ILogGroup;

  /** The largest event producers of the outbox may append, so that a full batch fits the topic's limit (see `maxEventSize`). */
  public readonly maxEventSize: Size;

  public constructor(scope: Construct, id: string, props: OutboxRelayProps) {
    super(scope, id);
    const owner = `OutboxRelay '${id}'`;
    validateStringPattern(owner, 'pipeName', props.pipeName, PIPE_NAME_PATTERN, '1 to 64 of A-Z, a-z, 0-9, ., - and _');
    validateRelaySettings(owner, props);
    const sizing = relayEventSizing(owner, props, topicMaximumMessageBytes(props.topic));
    if (props.deadLetterQueue && props.deadLetterQueueEncryptionKey) {
      throw validationError(
        `${owner}: deadLetterQueueEncryptionKey only applies to the dead-letter queue the relay creates; ` +
          'encrypt the deadLetterQueue you pass yourself, or pass only deadLetterQueueEncryptionKey',
      );
    }
    if (props.topic.fifo) {
      throw validationError(`${owner}: topic must be a standard SNS topic, because EventBridge Pipes can not target FIFO topics`);
    }

    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;

    this.deadLetterQueue = props.deadLetterQueue ?? createPipeDeadLetterQueue(this, 'DeadLetterQueue', props.deadLetterQueueEncryptionKey, removalPolicy, 'outbox relay');
    const topic = props.topic;
    const relayPipe = createRelayPipe(this, {
      origin: 'OutboxRelay',
      ids: { role: 'Role', logGroup: 'LogGroup', pipe: 'Resource' },
      roleDescription: 'Runs the outbox relay pipe: reads the outbox stream and publishes its events to the topic',
      pipeDescription: 'Relays outbox events from the DynamoDB stream to the SNS topic',
      outboxTable: props.outboxTable,
      filterPattern: outboxFilterPattern(),
      streamParameters: { batchSize: sizing.batchSize, onPartialBatchItemFailure: 'AUTOMATIC_BISECT', parallelizationFactor: props.parallelizationFactor ?? 1 },
      target: {
        arn: topic.topicArn,
        parameters: { inputTemplate: outboxInputTemplate() },
        // Target: publish (PublishBatch is authorized as sns:Publish) with the topic's key.
        grant: (role) => {
          libraryGrantOrResource('OutboxRelay', { grantee: role, actions: ['sns:Publish'], resourceArns: [topic.topicArn], resource: topic });
          grantKeyViaService('OutboxRelay', topic.masterKey, role, 'sns', KMS_SEND_MESSAGE_ACTIONS);
        },
      },
      deadLetterQueue: this.deadLetterQueue,
      pipeName: props.pipeName,
      maximumRetryAttempts: props.maximumRetryAttempts,
      maximumRecordAge: props.maximumRecordAge,
      logLevel: props.logLevel,
      logRetention: props.logRetention,
      logEncryptionKey: props.logEncryptionKey,
      includeExecutionData: props.includeExecutionData,
      encryptionKey: props.encryptionKey,
      removalPolicy,
    });
    this.role = relayPipe.role;
    this.logGroup = relayPipe.logGroup;
    this.pipeName = relayPipe.pipeName;
    this.pipeArn = relayPipe.pipeArn;
    this.maxEventSize = Size.bytes(sizing.maxEventBytes);
    // the outbox's producer environment carries the limit to every producer (IEF_MAX_EVENT_BYTES)
    limitOutboxEvents(props.outboxTable, sizing.maxEventBytes);
  }

  /**
   * A metric of this pipe in the `AWS/EventBridge/Pipes` namespace, with the `PipeName` dimension.
   *
   * @param metricName e.g. `ExecutionFailed`, `ExecutionThrottled`, `TargetStageFailed`
   * @param props overrides of the metric's options
   */
  public metric(metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return pipeMetric(this, this.pipeName, metricName, props);
  }

  /**
   * Executions of the pipe that failed (their batch is retried, then dead-lettered).
   *
   * @default - sum over 5 minutes
   */
  public metricExecutionFailed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ExecutionFailed', { statistic: cloudwatch.Stats.SUM, ...props });
  }

  /**
   * Executions of the pipe in which part of the batch failed.
   *
   * @default - sum over 5 minutes
   */
  public metricExecutionPartiallyFailed(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric('ExecutionPartiallyFailed', { statistic: cloudwatch.Stats.SUM, ...props });
  }

  /**
   * Invocations of the pipe (its executions).
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
}
