/**
 * The EventBridge Pipe that reads an outbox table's stream, built once for both relays: `OutboxRelay` (to the standard
 * topic) and `OrderedRelay` (to its SQS FIFO relay queue). Its role (trusted by this pipe only), the stream-read
 * grants, the dead-letter grants, the pipe's own encryption, its log group, its name (derived from the stream's label,
 * so a replaced stream never replaces the pipe under the same name) and its CloudWatch metrics are the same for both;
 * each relay gives its construct ids, its target and the target's grants.
 */
import { Duration, Fn, Names, Stack, Validations, type RemovalPolicy } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as pipes from 'aws-cdk-lib/aws-pipes';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct, IConstruct } from 'constructs';
import type { IOutboxTable } from '../outbox/outbox-table';
import { grantKeyViaService, KMS_SEND_MESSAGE_ACTIONS } from './kms-actions';
import { libraryGrant, libraryGrantOrResource, markLibraryGrant } from './library-statements';
import { allowLogsToUseKey } from './log-encryption';
import { acknowledgeInRegulatoryPacks, INLINE_POLICY_REASON } from './regulatory-acknowledgements';

/**
 * CloudWatch namespace of EventBridge Pipes metrics. Per the EventBridge user guide ("Logging and monitoring Amazon
 * EventBridge Pipes", eb-pipes-monitoring.html), `ExecutionFailed`, `ExecutionPartiallyFailed`, `ExecutionTimeout`,
 * `TargetStageFailed` etc. carry the dimension `PipeName`.
 */
export const PIPES_METRIC_NAMESPACE = 'AWS/EventBridge/Pipes';

/**
 * Stream-read actions EventBridge Pipes needs for a DynamoDB stream source (EventBridge user guide, "Event source
 * permissions for Amazon EventBridge Pipes", eb-pipes-permissions.html), scoped to the stream ARN. The guide's fourth
 * action, `dynamodb:ListStreams`, is {@link LIST_STREAMS_ACTION}.
 */
const STREAM_READ_ACTIONS = ['dynamodb:DescribeStream', 'dynamodb:GetRecords', 'dynamodb:GetShardIterator'];

/**
 * `dynamodb:ListStreams` has no resource type (Service Authorization Reference, "Actions defined by Amazon DynamoDB"):
 * IAM authorizes it only on `*`, and a statement scoping it to the stream ARN allows nothing. It is granted on `*`, as
 * aws-cdk-lib's `Table.grantStreamRead` does; it lists stream ARNs and labels, no data.
 */
const LIST_STREAMS_ACTION = 'dynamodb:ListStreams';

/** Where the pipe starts reading the stream. `StartingPosition` is create-only: it is part of the default pipe name. */
const STARTING_POSITION = 'TRIM_HORIZON';

/**
 * The two spellings of the encryption-context key EventBridge Pipes uses for its data at rest: the EventBridge user
 * guide ("Encrypting EventBridge Pipes data with AWS KMS keys", eb-encryption-pipes-cmkey.html) names the context
 * `aws:pipes:arn` and conditions its key policy example on `kms:EncryptionContext:aws:pipe:arn`. A statement per
 * spelling allows exactly the requests that carry this pipe's ARN under either key, and nothing else.
 */
const PIPE_ENCRYPTION_CONTEXT_KEYS = ['kms:EncryptionContext:aws:pipes:arn', 'kms:EncryptionContext:aws:pipe:arn'];

/** Retries of a failed stream batch, and the oldest record still forwarded, when the relay's props leave them open. */
export const RELAY_PIPE_DEFAULTS = {
  MAXIMUM_RETRY_ATTEMPTS: 10,
  MAXIMUM_RECORD_AGE: Duration.hours(1),
  LOG_LEVEL: 'ERROR',
  LOG_RETENTION: logs.RetentionDays.ONE_YEAR,
} as const;

/** The construct ids of the pipe's parts, under the relay (public API: each relay keeps its own). */
export interface RelayPipeIds {
  readonly role: string;
  readonly logGroup: string;
  readonly pipe: string;
}

/** What a relay's pipe sends to, and what its role needs for that. */
export interface RelayPipeTarget {
  /** The target's ARN (the topic's or the queue's). */
  readonly arn: string;
  /** The pipe's `TargetParameters`. */
  readonly parameters: pipes.CfnPipe.PipeTargetParametersProperty;
  /** Grants the role what sending to the target needs (marked as the library's, from the relay's origin). */
  readonly grant: (role: iam.Role) => void;
}

/** What the pipe of a relay is built from. */
export interface RelayPipeOptions {
  /** The relay's class name: the origin of its library statements (`IdempotentEventFlow<origin>[n]`). */
  readonly origin: string;
  readonly ids: RelayPipeIds;
  readonly roleDescription: string;
  readonly pipeDescription: string;
  readonly outboxTable: IOutboxTable;
  /** The stream filter (one pattern). */
  readonly filterPattern: unknown;
  /** `DynamoDBStreamParameters` beyond what every relay sets (starting position, retries, record age, dead letters). */
  readonly streamParameters: Omit<pipes.CfnPipe.PipeSourceDynamoDBStreamParametersProperty, 'startingPosition' | 'maximumRetryAttempts' | 'maximumRecordAgeInSeconds' | 'deadLetterConfig'>;
  readonly target: RelayPipeTarget;
  /** Where the pipe sends what it could not forward (its `DeadLetterConfig`). */
  readonly deadLetterQueue: sqs.IQueue;
  /** A name of the user's; see `OutboxRelayProps.pipeName`. */
  readonly pipeName?: string;
  readonly maximumRetryAttempts?: number;
  readonly maximumRecordAge?: Duration;
  /** `OutboxRelayLogLevel`'s value. */
  readonly logLevel?: string;
  readonly logRetention?: logs.RetentionDays;
  readonly logEncryptionKey?: kms.IKey;
  readonly includeExecutionData?: boolean;
  /** The key of the pipe's data at rest. */
  readonly encryptionKey?: kms.IKey;
  readonly removalPolicy: RemovalPolicy;
}

/** The parts of a relay's pipe. */
export interface RelayPipe {
  readonly pipe: pipes.CfnPipe;
  /** The pipe's name: `Ref` of the pipe. */
  readonly pipeName: string;
  readonly pipeArn: string;
  readonly role: iam.Role;
  readonly logGroup: logs.LogGroup;
}

/**
 * Builds a relay's pipe under `scope` (see the module comment). The role may read only this stream, send only to the
 * target and the dead-letter queue, use the keys only through their services (and the pipe's key only with this pipe's
 * encryption context), and write only to the pipe's log group.
 */
export function createRelayPipe(scope: Construct, options: RelayPipeOptions): RelayPipe {
  const { origin, outboxTable } = options;
  if (options.logEncryptionKey !== undefined) allowLogsToUseKey(scope, options.logEncryptionKey);
  const logGroup = new logs.LogGroup(scope, options.ids.logGroup, {
    retention: options.logRetention ?? RELAY_PIPE_DEFAULTS.LOG_RETENTION,
    removalPolicy: options.removalPolicy,
    encryptionKey: options.logEncryptionKey,
  });

  // The trust policy names the pipe's ARN while the pipe names the role: build the ARN from a known name to avoid a
  // circular reference between the two resources.
  const pipeName = options.pipeName ?? defaultPipeName(scope, outboxTable.tableStreamArn);
  const pipeArn = Stack.of(scope).formatArn({ service: 'pipes', resource: 'pipe', resourceName: pipeName });
  const role = new iam.Role(scope, options.ids.role, {
    description: options.roleDescription,
    // Confused-deputy guard: only this pipe, in this account, may assume the role.
    assumedBy: new iam.ServicePrincipal('pipes.amazonaws.com', {
      conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(scope).account }, ArnEquals: { 'aws:SourceArn': pipeArn } },
    }),
  });
  acknowledgeInRegulatoryPacks(role, 'IAMNoInlinePolicy', INLINE_POLICY_REASON);

  // Source: read the stream, and decrypt it when the table has a customer-managed key.
  libraryGrant(origin, { grantee: role, actions: STREAM_READ_ACTIONS, resourceArns: [outboxTable.tableStreamArn] });
  libraryGrant(origin, { grantee: role, actions: [LIST_STREAMS_ACTION], resourceArns: ['*'] });
  Validations.of(role).acknowledge({
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'dynamodb:ListStreams has no resource type: IAM authorizes it on "*" only (aws-cdk-lib\'s grantStreamRead grants ' +
      'it the same way). It lists stream ARNs, no data. Every other statement is scoped to a resource ARN.',
  });
  grantKeyViaService(origin, outboxTable.encryptionKey, role, 'dynamodb', ['kms:Decrypt']);

  options.target.grant(role);

  // Dead letters: the pipe role sends them itself (eb-pipes-permissions.html lists sqs:SendMessage); without this
  // grant the pipe does not stabilize.
  const deadLetterQueue = options.deadLetterQueue;
  libraryGrantOrResource(origin, { grantee: role, actions: ['sqs:SendMessage'], resourceArns: [deadLetterQueue.queueArn], resource: deadLetterQueue });
  grantKeyViaService(origin, deadLetterQueue.encryptionMasterKey, role, 'sqs', KMS_SEND_MESSAGE_ACTIONS);

  // The pipe's own data at rest (filter and input template), when it is encrypted with a customer-managed key. The
  // EventBridge user guide ("Encrypting EventBridge Pipes data with AWS KMS keys") lists these three actions for the
  // pipe's execution role. DescribeKey reads the key's metadata and takes no encryption context; the two
  // cryptographic actions are allowed only for this pipe's context, under either spelling the guide uses.
  const encryptionKey = options.encryptionKey;
  if (encryptionKey !== undefined) {
    libraryGrant(origin, { grantee: role, actions: ['kms:DescribeKey'], resourceArns: [encryptionKey.keyArn] });
    for (const contextKey of PIPE_ENCRYPTION_CONTEXT_KEYS) {
      libraryGrant(origin, {
        grantee: role,
        actions: ['kms:GenerateDataKey', 'kms:Decrypt'],
        resourceArns: [encryptionKey.keyArn],
        conditions: { ArnEquals: { [contextKey]: pipeArn } },
      });
    }
  }

  // Logs: the pipe writes to its CloudWatch Logs destination with its role.
  markLibraryGrant(origin, role, logGroup.grantWrite(role));

  const pipe = new pipes.CfnPipe(scope, options.ids.pipe, {
    name: pipeName,
    description: options.pipeDescription,
    roleArn: role.roleArn,
    source: outboxTable.tableStreamArn,
    sourceParameters: {
      filterCriteria: { filters: [{ pattern: JSON.stringify(options.filterPattern) }] },
      dynamoDbStreamParameters: {
        // Relay everything still in the stream when the pipe starts, not only what arrives afterwards.
        startingPosition: STARTING_POSITION,
        ...options.streamParameters,
        maximumRetryAttempts: options.maximumRetryAttempts ?? RELAY_PIPE_DEFAULTS.MAXIMUM_RETRY_ATTEMPTS,
        maximumRecordAgeInSeconds: (options.maximumRecordAge ?? RELAY_PIPE_DEFAULTS.MAXIMUM_RECORD_AGE).toSeconds(),
        deadLetterConfig: { arn: deadLetterQueue.queueArn },
      },
    },
    target: options.target.arn,
    targetParameters: options.target.parameters,
    logConfiguration: {
      cloudwatchLogsLogDestination: { logGroupArn: logGroup.logGroupArn },
      level: options.logLevel ?? RELAY_PIPE_DEFAULTS.LOG_LEVEL,
      includeExecutionData: options.includeExecutionData ? ['ALL'] : undefined,
    },
    kmsKeyIdentifier: encryptionKey?.keyArn,
  });
  // The pipe checks its role's permissions while it is created; create the role's policy first, or the pipe fails
  // to stabilize. A dependency on the role covers every resource under it, including its default policy.
  pipe.node.addDependency(role);
  return { pipe, pipeName: pipe.ref, pipeArn: pipe.attrArn, role, logGroup };
}

/**
 * The queue a relay's pipe dead-letters to: a standard queue (it takes metadata of stream batches, not events), TLS-only,
 * encrypted with `encryptionKey` (SQS-managed keys without one), keeping messages 14 days, the longest SQS allows: time
 * to inspect and replay what failed.
 */
export function createPipeDeadLetterQueue(scope: Construct, id: string, encryptionKey: kms.IKey | undefined, removalPolicy: RemovalPolicy, relayName: string): sqs.Queue {
  const queue = new sqs.Queue(scope, id, {
    encryption: encryptionKey ? sqs.QueueEncryption.KMS : sqs.QueueEncryption.SQS_MANAGED,
    encryptionMasterKey: encryptionKey,
    enforceSSL: true,
    retentionPeriod: Duration.days(14),
    removalPolicy,
  });
  // cdk-nag looks for a queue's redrive policy, or for another queue naming it as its DLQ. This queue is the pipe's
  // dead-letter target (DeadLetterConfig), so neither applies, and a DLQ for the DLQ would only move the problem.
  const reason =
    `This queue is the ${relayName} pipe's dead-letter queue (the pipe's DeadLetterConfig), not a work queue; ` +
    'a dead-letter queue of its own would only move failed records further from where they are inspected and replayed.';
  Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason }, { id: 'Serverless-SQSRedrivePolicy', reason });
  return queue;
}

/** A metric of the pipe named `pipeName` in the `AWS/EventBridge/Pipes` namespace, attached to `relay`. */
export function pipeMetric(relay: IConstruct, pipeName: string, metricName: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({ namespace: PIPES_METRIC_NAMESPACE, metricName, dimensionsMap: { PipeName: pipeName }, ...props }).attachTo(relay);
}

/**
 * The default pipe name: `<construct path, at most 42 characters>-<stream label without colons>`. The stream label
 * (`2024-01-01T00:00:00.000`, the last part of a stream ARN) is new for every stream DynamoDB creates, so every change
 * of `Source` gives a new name and the replacing pipe never collides with the one it replaces. Resolved by
 * CloudFormation when the stream ARN is only known at deploy time; at most 42 + 1 + 21 = 64 characters.
 * `StartingPosition`, the other create-only setting, is the constant {@link STARTING_POSITION}.
 */
function defaultPipeName(relay: Construct, streamArn: string): string {
  const prefix = Names.uniqueResourceName(relay, { maxLength: 42, separator: '-' });
  const label = Fn.select(3, Fn.split('/', streamArn));
  return `${prefix}-${Fn.join('', Fn.split(':', label))}`;
}
