import { Duration, Validations } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../lambda/config';
import { FunctionOptions } from '../functions/function-options';
import { createSecureNodejsFunction, FUNCTION_DEFAULTS } from '../private/secure-nodejs-function';
import type { IInboxTable } from './inbox-table';
import { CONSUMER_DEFAULTS } from './private/defaults';
import { validateFunctionOptions, validateSubscriberName } from './private/validate-consumer-props';


/** Properties of a {@link ConsumerFunction}. */
export interface ConsumerFunctionProps extends FunctionOptions {

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
  /** The Lambda runtime of every function this library creates: Node.js 24, the newest aws-cdk-lib 2.276 offers. */
  public static readonly RUNTIME = FUNCTION_DEFAULTS.RUNTIME;

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

    const parts = createSecureNodejsFunction(
      this,
      {
        ...props,
        description: `Consumer of subscriber ${props.subscriberName}`,
        timeout: props.timeout ?? CONSUMER_DEFAULTS.FUNCTION_TIMEOUT,
      },
      {
        [ENV.SUBSCRIBER_NAME]: props.subscriberName,
        [ENV.INBOX_TABLE_NAME]: props.inboxTable.tableName,
        [ENV.DEDUPLICATION_WINDOW_SECONDS]: String(
          (props.deduplicationWindow ?? CONSUMER_DEFAULTS.DEDUPLICATION_WINDOW).toSeconds(),
        ),
        ...(props.deadLetterQueue ? { [ENV.DEAD_LETTER_QUEUE_URL]: props.deadLetterQueue.queueUrl } : {}),
      },
    );
    const fn = parts.lambdaFunction;
    const role = parts.role;
    this.lambdaFunction = fn;
    this.role = role;
    this.grantPrincipal = role;
    this.logGroup = parts.logGroup;

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
