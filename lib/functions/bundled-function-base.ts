import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { createSecureNodejsFunction } from '../private/secure-nodejs-function';
import type { BundledFunctionProps } from './bundled-function-props';

/**
 * What `ConsumerFunction` and `ProducerFunction` share: a hardened Lambda function (its own log group, its own role
 * without AWS managed policies, JSON logs, X-Ray, ARM64 on the latest Node.js runtime, bundled by the local esbuild
 * with the AWS SDK inside) that is an `IGrantable`, with its metric helpers.
 */
export abstract class BundledFunctionBase extends Construct implements iam.IGrantable {
  /**
   * The Lambda function, a `lambda.Function`: pass it where a `lambda.IFunction` is expected (e.g.
   * `new LambdaRestApi(this, 'Api', { handler: producer.lambdaFunction })`) and call its methods, such as
   * `addEnvironment` (not with a name of the runtime contract, `IEF_*`, which the construct sets).
   */
  public readonly lambdaFunction: lambda.Function;
  /** The function's execution role: no AWS managed policies, logs scoped to its own log group. */
  public readonly role: iam.IRole;
  /** The function's log group. */
  public readonly logGroup: logs.ILogGroup;
  /** The principal to grant permissions to (the role). */
  public readonly grantPrincipal: iam.IPrincipal;

  /**
   * @param options how to build the function; `description` and `defaultTimeout` are required here
   * @param contractEnvironment the runtime contract's environment variables, set after (so over) the user's
   */
  protected constructor(
    scope: Construct,
    id: string,
    options: BundledFunctionProps,
    contractEnvironment: { [key: string]: string },
  ) {
    super(scope, id);
    const parts = createSecureNodejsFunction(this, { ...options, timeout: options.timeout ?? options.defaultTimeout }, contractEnvironment);
    this.lambdaFunction = parts.lambdaFunction;
    this.role = parts.role;
    this.logGroup = parts.logGroup;
    this.grantPrincipal = parts.role;
  }

  /**
   * Invocations that ended in a function error (an unhandled exception or a timeout; for a consumer, failed batch
   * items reported through `batchItemFailures` are not errors).
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
