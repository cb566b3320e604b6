import { Annotations, Duration, Tokenization, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { ENV } from '../../lambda/contract/environment';
import { FunctionOptions } from '../functions/function-options';
import { BundledFunctionBase } from '../functions/bundled-function-base';
import type { IOutboxTable } from '../outbox/outbox-table';
import { grantKeyViaService, KMS_SEND_MESSAGE_ACTIONS } from '../private/kms-actions';
import { acknowledgeInRegulatoryPacks } from '../private/regulatory-acknowledgements';
import { FUNCTION_DEFAULTS } from '../private/secure-nodejs-function';
import { validateEventSource } from '../private/shared-limits';
import type { IInboxTable } from './inbox-table';
import { ProcessingMode } from './processing-mode';
import { CONSUMER_DEFAULTS } from './private/defaults';
import { expectedFactory, modeLabel, runtimeModeName, usesInbox, usesLease } from './private/processing-modes';
import { claimSubscriberName } from './private/subscriber-names';
import { validateFunctionOptions, validateSubscriberName } from './private/validate-consumer-props';
import { validationError } from '../private/validation-error';
import { libraryGrant } from '../private/library-statements';

/** Properties of a {@link ConsumerFunction}. */
export interface ConsumerFunctionProps extends FunctionOptions {

  /**
   * The subscriber's name: scopes inbox keys (`<subscriberName>#<eventId>`) and log lines. Synth fails if another
   * subscriber of the app uses it on the same inbox table.
   *
   * 1 to 64 letters, digits, `_`, `.` or `-`.
   */
  readonly subscriberName: string;

  /**
   * How the runtime makes each message take effect once; the handler must use the matching factory of
   * `@idempotent-event-flow/runtime` (the runtime refuses another). It decides the function's inbox permissions.
   *
   * @default ProcessingMode.TRANSACTIONAL
   */
  readonly processingMode?: ProcessingMode;

  /**
   * The inbox the runtime records processed messages (or processing records) in; the function gets the permissions
   * its `processingMode` needs on it. Required unless `processingMode` is `ProcessingMode.AGGREGATE`, which has no
   * inbox and rejects one.
   *
   * @default - no inbox: only valid with `ProcessingMode.AGGREGATE`
   */
  readonly inboxTable?: IInboxTable;

  /**
   * How long an inbox record keeps a message deduplicated (the inbox TTL).
   *
   * It must cover the longest time a message can be redelivered; `Subscriber` checks that against the queues.
   * A whole number of seconds. Not with `ProcessingMode.AGGREGATE`, which has no inbox.
   *
   * @default Duration.days(30)
   */
  readonly deduplicationWindow?: Duration;

  /**
   * How long a delivery's claim on a message (its lease, an absolute expiry written to DynamoDB) lasts, for
   * `ProcessingMode.LEASE` and `ProcessingMode.MULTI_STEP` only.
   *
   * At least 1 second, a whole number of seconds, and less than the source queue's visibility timeout (so a
   * redelivery after a crash finds the lease expired; `Subscriber` checks that). Shorter than `timeout` draws a
   * warning: a slow but live invocation can lose its lease, which is safe but blocks the message.
   *
   * @default - the function's `timeout`, so a live invocation keeps its lease
   */
  readonly leaseDuration?: Duration;

  /**
   * Whether a blocked message's body is kept on its processing record in the inbox table (`ProcessingMode.LEASE` and
   * `ProcessingMode.MULTI_STEP` only), with no TTL until an operator resolves it, so `blocked show` can print it.
   * Otherwise the record keeps the event id, type, payload fingerprint, step and reason, and the message itself is in
   * the subscriber's dead-letter queue (its `iefEventId` attribute names the event).
   *
   * @default false
   */
  readonly keepBlockedMessageBody?: boolean;

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
   * The outbox the handler appends events to (`tx.emit(...)` inside its own commit). The function gets the outbox's
   * producer environment and `grantAppendEvents` on it.
   *
   * @default - the function does not publish events
   */
  readonly outboxTable?: IOutboxTable;

  /**
   * The CloudEvents `source` of the events this function appends, unless an event sets its own. Only with
   * `outboxTable`.
   *
   * @default - the outbox table's `eventSource`
   */
  readonly eventSource?: string;

}

/**
 * The Lambda function of one subscriber: the user's handler bundled with the consumer runtime.
 *
 * Node.js 24 on ARM64, bundled with the local esbuild including the AWS SDK (so the deployed SDK is the tested
 * one), JSON logs to its own log group, X-Ray tracing, and its own role with inline, resource-scoped policies
 * only (no AWS managed policies). Its environment carries the runtime contract from `lambda/contract/environment.ts`.
 *
 * It is an `IGrantable`: grant it access to the tables its handler writes, e.g. `table.grantWriteData(fn)`.
 */
export class ConsumerFunction extends BundledFunctionBase {
  /** The Lambda runtime of every function this library creates: Node.js 24, the newest aws-cdk-lib 2.276 offers. */
  public static readonly RUNTIME = FUNCTION_DEFAULTS.RUNTIME;

  public constructor(scope: Construct, id: string, props: ConsumerFunctionProps) {
    const owner = `ConsumerFunction '${id}'`;
    validateConsumerFunctionProps(owner, props);
    // The Subscriber that creates this function has claimed the name already; a function inside it is that subscriber.
    if (props.inboxTable) claimSubscriberName(owner, props.inboxTable, props.subscriberName, `${scope.node.path}/${id}`);
    const processingMode = props.processingMode ?? ProcessingMode.TRANSACTIONAL;
    const timeout = props.timeout ?? CONSUMER_DEFAULTS.FUNCTION_TIMEOUT;
    const leaseDuration = usesLease(processingMode) ? (props.leaseDuration ?? timeout) : undefined;
    // the checks above: an inbox table is given exactly when the mode uses one
    const inboxTable = props.inboxTable;
    super(
      scope,
      id,
      {
        ...props,
        description: `Consumer of subscriber ${props.subscriberName}`,
        timeout,
        defaultTimeout: timeout,
        expectedFactory: expectedFactory(processingMode),
      },
      {
        [ENV.SUBSCRIBER_NAME]: props.subscriberName,
        [ENV.PROCESSING_MODE]: runtimeModeName(processingMode),
        ...(inboxTable
          ? {
            [ENV.INBOX_TABLE_NAME]: inboxTable.tableName,
            [ENV.DEDUPLICATION_WINDOW_SECONDS]: String(
              (props.deduplicationWindow ?? CONSUMER_DEFAULTS.DEDUPLICATION_WINDOW).toSeconds(),
            ),
          }
          : {}),
        ...(leaseDuration ? { [ENV.LEASE_DURATION_SECONDS]: Tokenization.stringifyNumber(leaseDuration.toSeconds()) } : {}),
        ...(props.keepBlockedMessageBody === true ? { [ENV.KEEP_BLOCKED_MESSAGE_BODY]: 'true' } : {}),
        ...(props.deadLetterQueue ? { [ENV.DEAD_LETTER_QUEUE_URL]: props.deadLetterQueue.queueUrl } : {}),
        ...(props.outboxTable
          ? { ...props.outboxTable.producerEnvironment, ...(props.eventSource !== undefined ? { [ENV.EVENT_SOURCE]: props.eventSource } : {}) }
          : {}),
      },
    );
    const fn = this.lambdaFunction;
    const role = this.role;

    const noLambdaDlq =
      'The function is invoked synchronously by an SQS event source mapping; a Lambda dead-letter queue only applies ' +
      'to asynchronous invocations. Failed messages go to the source queue\'s dead-letter queue through its redrive policy.';
    Validations.of(fn).acknowledge({ id: 'Serverless-LambdaDLQ', reason: noLambdaDlq });
    acknowledgeInRegulatoryPacks(fn, 'LambdaDLQ', noLambdaDlq);

    if (leaseDuration && !leaseDuration.isUnresolved() && !timeout.isUnresolved()
      && leaseDuration.toSeconds({ integral: false }) < timeout.toSeconds({ integral: false })) {
      Annotations.of(this).addWarningV2(
        'idempotent-event-flow:leaseDurationBelowTimeout',
        `leaseDuration (${leaseDuration.toHumanString()}) is shorter than timeout (${timeout.toHumanString()}). ` +
          'An invocation that runs longer than its lease loses it: that is safe (its fenced writes are refused), but the ' +
          'message is blocked or retried instead of completing. Set leaseDuration to at least timeout unless you mean this.',
      );
    }

    // Only what the mode's runtime does on the inbox; AGGREGATE has none.
    if (inboxTable && processingMode === ProcessingMode.TRANSACTIONAL) {
      inboxTable.grantRecordMessages(role);
    } else if (inboxTable) {
      inboxTable.grantProcessingRecords(role);
    }
    if (props.deadLetterQueue) {
      // Only SendMessage (grantSendMessages would also add GetQueueAttributes/GetQueueUrl and wildcard KMS actions).
      libraryGrant('ConsumerFunction', {
        grantee: role,
        actions: ['sqs:SendMessage'],
        resourceArns: [props.deadLetterQueue.queueArn],
      });
      // Sending to a KMS-encrypted queue needs a data key (and Decrypt to use a cached one).
      grantKeyViaService('ConsumerFunction', props.deadLetterQueue.encryptionMasterKey, role, 'sqs', KMS_SEND_MESSAGE_ACTIONS);
    }
    // The same grant as a producer's (IdempotentEventFlow.grantAppendEvents): the outbox Put inside the handler's commit.
    props.outboxTable?.grantAppendEvents(role);
  }
}

/** Checks every prop before any child exists, naming this function in the message. */
function validateConsumerFunctionProps(owner: string, props: ConsumerFunctionProps): void {
  validateSubscriberName(owner, 'subscriberName', props.subscriberName);
  validateFunctionOptions(owner, props, props.outboxTable !== undefined);
  const processingMode = props.processingMode ?? ProcessingMode.TRANSACTIONAL;
  if (usesInbox(processingMode) && props.inboxTable === undefined) {
    throw validationError(
      `${owner}: inboxTable must be provided with processingMode ${modeLabel(processingMode)} ` +
        `(only ${modeLabel(ProcessingMode.AGGREGATE)} has no inbox), but none was provided`,
    );
  }
  if (props.eventSource !== undefined && props.outboxTable === undefined) {
    throw validationError(`${owner}: eventSource can only be used with outboxTable (it is the source of the events appended there), but no outboxTable was provided`);
  }
  validateEventSource(owner, 'eventSource', props.eventSource);
}
