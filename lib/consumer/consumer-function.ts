import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../lambda/config';
import type { IInboxTable } from './inbox-table';
import { CONSUMER_DEFAULTS } from './private/defaults';
import { validateFunctionOptions, validateSubscriberName } from './private/validate-consumer-props';

/**
 * The esbuild options a consumer may change. Everything else is fixed: bundling always runs with the local
 * esbuild (never Docker) and bundles every module, the AWS SDK included.
 */
export interface ConsumerBundlingOptions {
  /**
   * Whether to minify the bundle.
   *
   * @default true
   */
  readonly minify?: boolean;

  /**
   * Whether to emit a source map; also adds `--enable-source-maps` to `NODE_OPTIONS` so stack traces point at the
   * source.
   *
   * @default false
   */
  readonly sourceMap?: boolean;

  /**
   * Path to the tsconfig.json esbuild reads.
   *
   * @default - esbuild uses the tsconfig.json nearest to the entry file
   */
  readonly tsconfig?: string;

  /**
   * Global identifiers esbuild replaces with constant expressions, e.g. `{ 'process.env.STAGE': '"prod"' }`.
   *
   * @default - no replacements
   */
  readonly define?: { [key: string]: string };
}

/** Properties of a {@link ConsumerFunction}. */
export interface ConsumerFunctionProps {
  /**
   * Path to the TypeScript or JavaScript file with the handler.
   *
   * The file typically exports `createTransactionalConsumer({ handle })` from `idempotent-event-flow/runtime`.
   * It is bundled with the local esbuild, so esbuild must be installed (Docker is never used).
   */
  readonly entry: string;

  /**
   * The name of the exported handler in `entry`.
   *
   * @default 'handler'
   */
  readonly handler?: string;

  /**
   * The subscriber's name: scopes inbox keys (`<subscriberName>#<eventId>`) and log lines.
   *
   * 1 to 64 letters, digits, `_`, `.` or `-`.
   */
  readonly subscriberName: string;

  /** The inbox the runtime records processed messages in; the function gets permission to write to it. */
  readonly inboxTable: IInboxTable;

  /**
   * How long an inbox record keeps a message deduplicated (the inbox TTL).
   *
   * It must cover the longest time a message can be redelivered; `Subscriber` checks that against the queues.
   * A whole number of seconds.
   *
   * @default Duration.days(30)
   */
  readonly deduplicationWindow?: Duration;

  /**
   * The queue the runtime sends permanently failing messages to, with the reason as message attributes.
   *
   * The function gets `sqs:SendMessage` on it (and the key permissions to encrypt for it).
   *
   * @default - the runtime does not dead-letter messages itself; a failing message reaches a dead-letter queue
   *   only through the source queue's redrive policy
   */
  readonly deadLetterQueue?: sqs.IQueue;

  /**
   * Additional environment variables for the handler.
   *
   * The `IEF_*` variables of the runtime contract are set by this construct and may not be given here.
   *
   * @default - only the runtime contract's variables
   */
  readonly environment?: { [key: string]: string };

  /**
   * The function timeout. Between 1 second and 15 minutes.
   *
   * @default Duration.seconds(30)
   */
  readonly timeout?: Duration;

  /**
   * The memory of the function in MiB (CPU scales with it). Between 128 and 10240.
   *
   * @default 256
   */
  readonly memorySize?: number;

  /**
   * How long the function's log group keeps log events.
   *
   * @default logs.RetentionDays.ONE_YEAR
   */
  readonly logRetention?: logs.RetentionDays;

  /**
   * X-Ray tracing mode.
   *
   * @default lambda.Tracing.ACTIVE
   */
  readonly tracing?: lambda.Tracing;

  /**
   * What happens to the function's log group when it is removed from the stack.
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * esbuild options.
   *
   * @default - minified, no source map, tsconfig.json found by esbuild
   */
  readonly bundling?: ConsumerBundlingOptions;
}

/**
 * The Lambda function of one subscriber: the user's handler bundled with the consumer runtime.
 *
 * Node.js 24 on ARM64, bundled with the local esbuild including the AWS SDK (so the deployed SDK is the tested
 * one), JSON logs to its own log group, X-Ray tracing, and its own role with inline, resource-scoped policies
 * only (no AWS managed policies). Its environment carries the runtime contract from `lambda/config.ts`.
 *
 * It is an `IGrantable`: grant it access to the tables its handler writes, e.g. `table.grantWriteData(fn)`.
 */
export class ConsumerFunction extends Construct implements iam.IGrantable {
  /**
   * The Node.js runtime: the latest that aws-cdk-lib offers, which cdk-nag's AwsSolutions-L1 requires.
   */
  public static readonly RUNTIME = lambda.Runtime.NODEJS_24_X;

  /** The Lambda function. */
  public readonly lambdaFunction: lambda.IFunction;

  /** The function's execution role. */
  public readonly role: iam.IRole;

  /** The function's log group. */
  public readonly logGroup: logs.ILogGroup;

  public readonly grantPrincipal: iam.IPrincipal;

  public constructor(scope: Construct, id: string, props: ConsumerFunctionProps) {
    super(scope, id);
    const owner = `ConsumerFunction '${id}'`;
    validateSubscriberName(owner, 'subscriberName', props.subscriberName);
    validateFunctionOptions(owner, props);

    const logGroup = new logs.LogGroup(this, 'LogGroup', {
      retention: props.logRetention ?? CONSUMER_DEFAULTS.LOG_RETENTION,
      removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    });
    this.logGroup = logGroup;

    // Our own role with an inline policy scoped to this log group, instead of AWSLambdaBasicExecutionRole
    // (an AWS managed policy that may write to any log group).
    const role = new iam.Role(this, 'Role', {
      assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
      description: `Consumer function of subscriber ${props.subscriberName}`,
      inlinePolicies: {
        Logs: new iam.PolicyDocument({
          statements: [
            new iam.PolicyStatement({
              actions: ['logs:CreateLogStream', 'logs:PutLogEvents'],
              // The log group's ARN attribute ends in ':*', which covers its log streams.
              resources: [logGroup.logGroupArn],
            }),
          ],
        }),
      },
    });
    this.role = role;
    this.grantPrincipal = role;

    const bundling = props.bundling ?? {};
    const fn = new nodejs.NodejsFunction(this, 'Resource', {
      entry: props.entry,
      handler: props.handler ?? CONSUMER_DEFAULTS.HANDLER,
      runtime: ConsumerFunction.RUNTIME,
      architecture: lambda.Architecture.ARM_64,
      timeout: props.timeout ?? CONSUMER_DEFAULTS.FUNCTION_TIMEOUT,
      memorySize: props.memorySize ?? CONSUMER_DEFAULTS.MEMORY_SIZE_MIB,
      role,
      logGroup,
      loggingFormat: lambda.LoggingFormat.JSON,
      tracing: props.tracing ?? lambda.Tracing.ACTIVE,
      environment: {
        ...props.environment,
        ...(bundling.sourceMap ? { NODE_OPTIONS: withSourceMaps(props.environment?.NODE_OPTIONS) } : {}),
        [ENV.SUBSCRIBER_NAME]: props.subscriberName,
        [ENV.INBOX_TABLE_NAME]: props.inboxTable.tableName,
        [ENV.DEDUPLICATION_WINDOW_SECONDS]: String(
          (props.deduplicationWindow ?? CONSUMER_DEFAULTS.DEDUPLICATION_WINDOW).toSeconds(),
        ),
        ...(props.deadLetterQueue ? { [ENV.DEAD_LETTER_QUEUE_URL]: props.deadLetterQueue.queueUrl } : {}),
      },
      bundling: {
        // Never Docker: the library promises local, reproducible bundling with the installed esbuild.
        forceDockerBundling: false,
        // Bundle everything, the AWS SDK included, so the deployed runtime matches the tested one.
        externalModules: [],
        minify: bundling.minify ?? true,
        sourceMap: bundling.sourceMap ?? false,
        tsconfig: bundling.tsconfig,
        define: bundling.define,
      },
    });
    this.lambdaFunction = fn;

    if ((props.tracing ?? lambda.Tracing.ACTIVE) !== lambda.Tracing.DISABLED) {
      Validations.of(role).acknowledge({
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason:
          'X-Ray tracing: xray:PutTraceSegments and xray:PutTelemetryRecords do not support resource-level permissions, ' +
          'so Lambda adds them with Resource "*". Every other statement is scoped to a resource ARN.',
      });
    }
    Validations.of(fn).acknowledge({
      id: 'Serverless-LambdaDLQ',
      reason:
        'The function is invoked synchronously by an SQS event source mapping; a Lambda dead-letter queue only applies ' +
        'to asynchronous invocations. Failed messages go to the source queue\'s dead-letter queue through its redrive policy.',
    });

    props.inboxTable.grantRecordMessages(role);
    if (props.deadLetterQueue) {
      // Only SendMessage (grantSendMessages would also add GetQueueAttributes/GetQueueUrl and wildcard KMS actions).
      iam.Grant.addToPrincipal({
        grantee: role,
        actions: ['sqs:SendMessage'],
        resourceArns: [props.deadLetterQueue.queueArn],
      });
      // Sending to a KMS-encrypted queue needs a data key (and Decrypt to use a cached one).
      props.deadLetterQueue.encryptionMasterKey?.grant(role, 'kms:GenerateDataKey', 'kms:Decrypt');
    }
  }

  /**
   * Invocations that ended in a function error (an unhandled exception or a timeout; failed batch items reported
   * through `batchItemFailures` are not errors).
   *
   * @default - sum over 5 minutes
   */
  public metricErrors(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.lambdaFunction.metricErrors(props);
  }

  /**
   * Invocations that Lambda throttled.
   *
   * @default - sum over 5 minutes
   */
  public metricThrottles(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.lambdaFunction.metricThrottles(props);
  }

  /**
   * How long invocations ran.
   *
   * @default - average over 5 minutes
   */
  public metricDuration(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.lambdaFunction.metricDuration(props);
  }
}

/** `NODE_OPTIONS` with `--enable-source-maps` added to what the user set, if anything. */
function withSourceMaps(nodeOptions: string | undefined): string {
  return nodeOptions ? `--enable-source-maps ${nodeOptions}` : '--enable-source-maps';
}
