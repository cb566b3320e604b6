import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as lambda from 'aws-cdk-lib/aws-lambda';
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
   */
  readonly entry: string;

  /**
   * The name of the exported handler in `entry`.
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
   * X-Ray tracing mode.
   *
   * @default lambda.Tracing.ACTIVE
   */
  readonly tracing?: lambda.Tracing;

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
