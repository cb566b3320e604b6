import { Duration, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../lambda/config';
import { FunctionOptions } from '../functions/function-options';
import { BundledFunctionBase } from '../functions/bundled-function-base';
import { KMS_SEND_MESSAGE_ACTIONS } from '../private/kms-actions';
import { FUNCTION_DEFAULTS } from '../private/secure-nodejs-function';
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
export class ConsumerFunction extends BundledFunctionBase {
  /** The Lambda runtime of every function this library creates: Node.js 24, the newest aws-cdk-lib 2.276 offers. */
  public static readonly RUNTIME = FUNCTION_DEFAULTS.RUNTIME;

  public constructor(scope: Construct, id: string, props: ConsumerFunctionProps) {
    const owner = `ConsumerFunction '${id}'`;
    validateSubscriberName(owner, 'subscriberName', props.subscriberName);
    validateFunctionOptions(owner, props);
    super(
      scope,
      id,
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
    const fn = this.lambdaFunction;
    const role = this.role;

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
      props.deadLetterQueue.encryptionMasterKey?.grant(role, ...KMS_SEND_MESSAGE_ACTIONS);
    }
  }
}
