/**
 * The event flow as the synthesized CloudFormation templates describe it: what the simulator runs. Every field comes
 * from a template property (named in its doc comment); defaults are CloudFormation's own, so what is simulated is what
 * `cdk deploy` would create. Resources are identified by {@link ResourceKey}, `<stack name>/<logical id>`, because
 * logical ids are unique per stack only.
 */

import type { AccessModel } from './access-model';
import type { BucketModel } from './bucket-model';
import type { ModelledResource, ResourceKey } from './modelled-resource';
import type { StackEnvironment, StackEnvironments } from './stack-environments';

export type { ModelledResource, ResourceKey } from './modelled-resource';
export type { BucketModel } from './bucket-model';

/** `AWS::DynamoDB::Table` */
export interface TableModel extends ModelledResource {
  /** `TableName`, when the template sets one. */
  readonly tableName?: string;
  /** `KeySchema` */
  readonly keySchema: readonly { readonly AttributeName: string; readonly KeyType: 'HASH' | 'RANGE' }[];
  /** `AttributeDefinitions` */
  readonly attributeDefinitions: readonly { readonly AttributeName: string; readonly AttributeType: 'S' | 'N' | 'B' }[];
  /** `GlobalSecondaryIndexes`, as in the template (IndexName, KeySchema, Projection). @default none */
  readonly globalSecondaryIndexes: readonly Record<string, unknown>[];
  /** `LocalSecondaryIndexes`, as in the template. @default none */
  readonly localSecondaryIndexes: readonly Record<string, unknown>[];
  /** `StreamSpecification.StreamViewType`: the table has a stream when set. */
  readonly streamViewType?: 'KEYS_ONLY' | 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES';
  /** `TimeToLiveSpecification.AttributeName` when `Enabled`. */
  readonly timeToLiveAttribute?: string;
}

/** The SQS FIFO queue target of a pipe (the ordered relay) and its `TargetParameters.SqsQueueParameters`. */
export interface RelayQueueTarget {
  /** The queue that is `Target` (`Fn::GetAtt [queue, Arn]`). */
  readonly queue: ResourceKey;
  /** `SqsQueueParameters.MessageGroupId`: a JSON path into the source event (a stream record), or a literal. @default none */
  readonly messageGroupId?: string;
  /** `SqsQueueParameters.MessageDeduplicationId`: a JSON path into the source event, or a literal. @default none */
  readonly messageDeduplicationId?: string;
}

/**
 * `AWS::Pipes::Pipe` with a DynamoDB stream source and an SNS topic target (the outbox relay) or an SQS queue target
 * (the ordered relay's FIFO queue): exactly one of `targetTopic` and `targetQueue` is set.
 */
export interface RelayModel extends ModelledResource {
  /** The table whose stream is `Source` (`Fn::GetAtt [table, StreamArn]`). */
  readonly sourceTable: ResourceKey;
  /** The topic that is `Target` (`Ref topic`), when the target is a topic. */
  readonly targetTopic?: ResourceKey;
  /** The queue that is `Target`, when the target is a queue. */
  readonly targetQueue?: RelayQueueTarget;
  /** `SourceParameters.DynamoDBStreamParameters.BatchSize` @default 100 */
  readonly batchSize: number;
  /** `...StartingPosition` (`TRIM_HORIZON` or `LATEST`) */
  readonly startingPosition: string;
  /** `...MaximumRetryAttempts` @default -1 (infinite, as AWS) */
  readonly maximumRetryAttempts: number;
  /** `...MaximumRecordAgeInSeconds` @default -1 (infinite, as AWS) */
  readonly maximumRecordAgeSeconds: number;
  /** `...OnPartialBatchItemFailure` is `AUTOMATIC_BISECT`: a failing batch is halved until the failing record is alone. @default false */
  readonly bisectOnFailure: boolean;
  /** `...DeadLetterConfig.Arn`, when it names a queue of the template. */
  readonly deadLetterQueue?: ResourceKey;
  /** `SourceParameters.FilterCriteria.Filters[].Pattern`, each a JSON event pattern; none means every record passes. */
  readonly filterPatterns: readonly string[];
  /** `TargetParameters.InputTemplate` @default the record itself, as JSON */
  readonly inputTemplate?: string;
}

/** `AWS::SNS::Topic` */
export interface TopicModel extends ModelledResource {
  /** `TopicName`, when set. */
  readonly topicName?: string;
  /** `FifoTopic` @default false */
  readonly fifo: boolean;
  /** `ContentBasedDeduplication` (FIFO topics) @default false */
  readonly contentBasedDeduplication?: boolean;
  /**
   * `MaximumMessageSize`, in bytes: the largest message, and the largest PublishBatch (its messages together), the
   * topic takes. @default 262,144
   */
  readonly maximumMessageSize: number;
}

/** `AWS::SNS::Subscription` with protocol `sqs` (others are reported as not simulated). */
export interface SubscriptionModel extends ModelledResource {
  /** `TopicArn` (`Ref topic`). */
  readonly topic: ResourceKey;
  /** `Endpoint` (`Fn::GetAtt [queue, Arn]`). */
  readonly queue: ResourceKey;
  /** `RawMessageDelivery` @default false */
  readonly rawMessageDelivery: boolean;
  /** `FilterPolicy` @default none: every message passes */
  readonly filterPolicy?: Record<string, unknown>;
  /** `FilterPolicyScope` @default 'MessageAttributes' */
  readonly filterPolicyScope: 'MessageAttributes' | 'MessageBody';
  /** `RedrivePolicy.deadLetterTargetArn`: where SNS puts messages it cannot deliver. */
  readonly deadLetterQueue?: ResourceKey;
  /**
   * `Region`: the Region CloudFormation creates the subscription in (a cross-Region subscription names the topic's).
   * @default the Region of the subscription's stack
   */
  readonly region?: string;
}

/** `AWS::SQS::Queue` */
export interface QueueModel extends ModelledResource {
  /** `QueueName`, when set. */
  readonly queueName?: string;
  /** `FifoQueue` @default false */
  readonly fifo: boolean;
  /**
   * `ContentBasedDeduplication` (FIFO queues): a send without `MessageDeduplicationId` takes the body's SHA-256 as its
   * id; without it SQS refuses such a send.
   * @default false
   */
  readonly contentBasedDeduplication?: boolean;
  /** `VisibilityTimeout` @default 30 */
  readonly visibilityTimeoutSeconds: number;
  /** `MessageRetentionPeriod` @default 345600 (4 days) */
  readonly messageRetentionSeconds: number;
  /** `RedrivePolicy` */
  readonly redrive?: { readonly deadLetterQueue: ResourceKey; readonly maxReceiveCount: number };
}

/** `AWS::Lambda::EventSourceMapping` whose source is a queue of the template. */
export interface EventSourceMappingModel extends ModelledResource {
  readonly queue: ResourceKey;
  /** `FunctionName` (`Ref function`). */
  readonly function: ResourceKey;
  /** `BatchSize` @default 10 */
  readonly batchSize: number;
  /** `FunctionResponseTypes` includes `ReportBatchItemFailures` */
  readonly reportBatchItemFailures: boolean;
  /** `ScalingConfig.MaximumConcurrency`, when set. */
  readonly maximumConcurrency?: number;
  /** `Enabled` @default true */
  readonly enabled: boolean;
}

/** `AWS::Lambda::Function` whose code is an asset of the cloud assembly (Node.js runtimes only). */
export interface FunctionModel extends ModelledResource {
  /** Absolute path of the asset directory in the cloud assembly (`aws:asset:path` metadata). */
  readonly assetDirectory: string;
  /** `Handler`, e.g. `index.handler` */
  readonly handler: string;
  /** `Runtime`, e.g. `nodejs24.x` */
  readonly runtime: string;
  /** `Timeout` @default 3 */
  readonly timeoutSeconds: number;
  /** `MemorySize` @default 128 */
  readonly memorySizeMb: number;
  /** `Environment.Variables`, unresolved: values may be intrinsics (`Ref`, `Fn::GetAtt`, ...). */
  readonly environment: Readonly<Record<string, unknown>>;
  /**
   * `LoggingConfig.ApplicationLogLevel` (with `LogFormat: JSON`), which Lambda passes to the code as
   * `AWS_LAMBDA_LOG_LEVEL`. @default not set
   */
  readonly applicationLogLevel?: string;
}

/** The whole flow. */
export interface FlowModel {
  /** Absolute path of the cloud assembly directory. */
  readonly assemblyDirectory: string;
  readonly stackNames: readonly string[];
  readonly tables: readonly TableModel[];
  readonly relays: readonly RelayModel[];
  readonly topics: readonly TopicModel[];
  readonly subscriptions: readonly SubscriptionModel[];
  readonly queues: readonly QueueModel[];
  readonly eventSourceMappings: readonly EventSourceMappingModel[];
  readonly functions: readonly FunctionModel[];
  /**
   * The S3 buckets (the claim-check's payload buckets): a run serves them from a local S3 behind the same IAM
   * evaluation and fault injection as DynamoDB (simulator/aws/s3-endpoint.ts). @default none
   */
  readonly buckets?: readonly BucketModel[];
  /** What the templates hold that the simulator does not run (e.g. an HTTP subscription), one line each. */
  readonly notSimulated: readonly string[];
  /** Roles, policies and keys, for IAM evaluation. @default none: requests are not evaluated */
  readonly access?: AccessModel;
  /** The CloudWatch alarms watching each queue (by queue key: the alarms' construct paths). @default no queue is watched */
  readonly queueAlarms?: ReadonlyMap<ResourceKey, readonly string[]>;
  /**
   * Each stack's account and Region, by stack name, when the stacks span several (./stack-environments.ts).
   * @default one environment: the simulator's local account and the run's Region
   */
  readonly environments?: StackEnvironments;
}

/**
 * The local names the resources get, which intrinsic functions in environment variables resolve to. Supplied by the
 * simulator once it has created the tables and queues.
 */
export interface LocalNames {
  /** What `Ref` of the resource resolves to (table name, queue URL, topic ARN, function name); undefined if unknown. */
  ref(key: ResourceKey): string | undefined;
  /** What `Fn::GetAtt [resource, attribute]` resolves to; undefined if unknown. */
  getAtt(key: ResourceKey, attribute: string): string | undefined;
  /** `AWS::Region` */
  readonly region: string;
  /** `AWS::AccountId` */
  readonly accountId: string;
  /** The environment of a stack of a run whose stacks span several (its `AWS::AccountId` and `AWS::Region`). @default the run's */
  environmentOf?(stackName: string): StackEnvironment | undefined;
}
