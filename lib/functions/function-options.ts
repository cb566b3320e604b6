import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as ec2 from 'aws-cdk-lib/aws-ec2';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as logs from 'aws-cdk-lib/aws-logs';

/** esbuild options for a function's handler. The local esbuild is used; Docker never is. */
export interface FunctionBundlingOptions {
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

/**
 * How to build and run a function of this library (a consumer or a producer): your handler file, bundled with our
 * runtime by the local esbuild, on the latest Node.js runtime, with its own log group and its own least-privilege role.
 */
export interface FunctionOptions {
  /**
   * Path to the TypeScript or JavaScript file with the handler.
   *
   * It is bundled with the local esbuild, AWS SDK included, so esbuild must be installed (Docker is never used).
   * Synth fails naming the construct when the file does not exist.
   */
  readonly entry: string;

  /**
   * The name of the exported handler in `entry`.
   *
   * When the stack bundles, synth fails listing the module's exports if `entry` is an ES module that does not export
   * it. A CommonJS module, or a star re-export of a package or of a CommonJS module, is only known when it runs.
   *
   * @default 'handler'
   */
  readonly handler?: string;

  /**
   * Additional environment variables for the handler. The `IEF_*` variables of the runtime contract are set by the
   * construct and may not be given here.
   *
   * @default - only the runtime contract's variables
   */
  readonly environment?: { [key: string]: string };

  /**
   * The function timeout. Between 1 second and 15 minutes (for a consumer also at most its queue's
   * `visibilityTimeout / 6`).
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
   * Customer-managed KMS key that encrypts the function's log group. Its key policy gets the statement CloudWatch Logs
   * needs, conditioned on the encryption context of log groups of this account and region (an imported key's policy
   * can not be changed: a warning names the statement). `IdempotentEventFlow` passes its `logEncryptionKey` unless a
   * function sets its own.
   *
   * @default - the log group is encrypted by CloudWatch Logs with its own key
   */
  readonly logEncryptionKey?: kms.IKey;

  /**
   * Concurrent executions reserved for the function (and the most it may run at once), e.g. to keep it from starving
   * other functions of the account or from overwhelming a downstream system. At least 1.
   *
   * @default - no reservation: the function shares the account's unreserved concurrency
   */
  readonly reservedConcurrentExecutions?: number;

  /**
   * VPC to run the function in, e.g. to reach private resources or to keep its traffic off the internet. The function
   * then needs a route to the AWS services it calls: gateway endpoints for DynamoDB (and S3), interface endpoints for
   * SQS (the runtime's dead-letter sends), for KMS when keys are customer-managed, for CloudWatch Logs and X-Ray, or a
   * NAT gateway. The role is given the network-interface actions Lambda needs (they have no resource-level
   * permissions).
   *
   * @default - the function runs outside any VPC
   */
  readonly vpc?: ec2.IVpc;

  /**
   * Where in `vpc` the function's network interfaces go. Only with `vpc`.
   *
   * @default - the VPC's private subnets
   */
  readonly vpcSubnets?: ec2.SubnetSelection;

  /**
   * Security groups of the function's network interfaces. Only with `vpc`.
   *
   * @default - a security group is created, allowing all outbound traffic
   */
  readonly securityGroups?: ec2.ISecurityGroup[];

  /**
   * X-Ray tracing mode.
   *
   * @default lambda.Tracing.ACTIVE
   */
  readonly tracing?: lambda.Tracing;

  /**
   * The function's application log level (`LoggingConfig.ApplicationLogLevel`; Lambda passes it to the code as
   * `AWS_LAMBDA_LOG_LEVEL`). The runtime honours it: at `INFO` a consumer writes one summary line per batch and a line
   * per record only for records that failed, were dead-lettered or blocked; `DEBUG` adds a line per applied or
   * duplicate record, which at volume is a cost (CloudWatch Logs ingestion).
   *
   * @default - not set: the runtime logs at INFO
   */
  readonly applicationLogLevel?: lambda.ApplicationLogLevel;

  /**
   * What happens to the stateful resources the construct creates when they are removed from the stack: the
   * function's log group, and for a subscriber also its queues and its inbox table (when it creates one).
   *
   * @default RemovalPolicy.RETAIN
   */
  readonly removalPolicy?: RemovalPolicy;

  /**
   * esbuild options.
   *
   * @default - minified, no source map, tsconfig.json found by esbuild
   */
  readonly bundling?: FunctionBundlingOptions;
}
