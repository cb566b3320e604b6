import { Duration } from 'aws-cdk-lib';
import { ENV } from '../../../lambda/contract/environment';
import { SUBSCRIBER_NAME_PATTERN } from '../../../lambda/contract/wire-format';
import {
  validateDurationAtLeast,
  validateDurationInRange,
  validateNumberInRange,
  validateStringPattern,
  validateWholeSeconds,
} from '../../private/validate-props';
import { FunctionOptions } from '../../functions/function-options';
import { RESERVED_PRODUCER_ENVIRONMENT } from '../../private/producer-environment';
import { validateSecureFunctionOptions } from '../../private/secure-nodejs-function';
import { stronglyConsistentTableBehind, validateNotStronglyConsistent } from '../../private/strong-consistency';
import type { IInboxTable } from '../inbox-table';
import { ProcessingMode } from '../processing-mode';
import { CONSUMER_DEFAULTS } from './defaults';
import { modeLabel, usesInbox, usesLease } from './processing-modes';
import { validationError } from '../../private/validation-error';

/**
 * Prop checks shared by the consumer constructs. `Subscriber` runs them with its own name as the owner before
 * it creates any child, so a user of `Subscriber` sees `Subscriber 'Billing': ...` rather than a child's name.
 */

/** Subscriber names become part of inbox keys (`<subscriberName>#<eventId>`), so `#` is not allowed (the rule lives in the wire format, which `inbox forget` checks too). */
export { SUBSCRIBER_NAME_PATTERN } from '../../../lambda/contract/wire-format';

/** The environment variables the construct sets for the consumer runtime; users may not override them. */
export const RESERVED_CONSUMER_ENVIRONMENT = [
  ENV.SUBSCRIBER_NAME,
  ENV.INBOX_TABLE_NAME,
  ENV.DEDUPLICATION_WINDOW_SECONDS,
  ENV.DEAD_LETTER_QUEUE_URL,
  ENV.PROCESSING_MODE,
  ENV.LEASE_DURATION_SECONDS,
  ENV.KEEP_BLOCKED_MESSAGE_BODY,
] as const;

/** What a consumer that publishes events may not set either: the construct sets the outbox's producer environment. */
const RESERVED_PUBLISHING_CONSUMER_ENVIRONMENT: readonly string[] = [...RESERVED_CONSUMER_ENVIRONMENT, ...RESERVED_PRODUCER_ENVIRONMENT];

export function validateSubscriberName(owner: string, prop: string, value: string | undefined): void {
  validateStringPattern(
    owner,
    prop,
    value,
    SUBSCRIBER_NAME_PATTERN,
    "1 to 64 letters, digits, '_', '.' or '-' (it becomes part of the inbox keys)",
  );
}

export interface QueueOptionsToValidate {
  readonly maxReceiveCount?: number;
  readonly visibilityTimeout?: Duration;
  readonly retentionPeriod?: Duration;
  readonly deadLetterRetentionPeriod?: Duration;
}

/** Checks the ConsumerQueue props against the SQS limits and each other. */
export function validateQueueOptions(owner: string, props: QueueOptionsToValidate): void {
  validateNumberInRange(owner, 'maxReceiveCount', props.maxReceiveCount, { min: 1, max: 1000, integer: true });
  validateDurationInRange(owner, 'visibilityTimeout', props.visibilityTimeout, { min: Duration.seconds(0), max: Duration.hours(12) });
  validateDurationInRange(owner, 'retentionPeriod', props.retentionPeriod, { min: Duration.minutes(1), max: Duration.days(14) });
  validateDurationInRange(owner, 'deadLetterRetentionPeriod', props.deadLetterRetentionPeriod, {
    min: Duration.minutes(1),
    max: Duration.days(14),
  });
  // A standard queue's DLQ keeps the original enqueue timestamp, so a shorter DLQ retention would expire
  // dead-lettered messages (almost) as soon as they arrive.
  validateDurationAtLeast(
    owner,
    'deadLetterRetentionPeriod',
    props.deadLetterRetentionPeriod ?? CONSUMER_DEFAULTS.DEAD_LETTER_RETENTION_PERIOD,
    props.retentionPeriod ?? CONSUMER_DEFAULTS.RETENTION_PERIOD,
    'retentionPeriod',
  );
}

export interface FunctionOptionsToValidate extends FunctionOptions {
  readonly deduplicationWindow?: Duration;
  readonly processingMode?: ProcessingMode;
  readonly leaseDuration?: Duration;
  readonly keepBlockedMessageBody?: boolean;
  readonly inboxTable?: IInboxTable;
}

/**
 * Checks the ConsumerFunction props against the Lambda limits and the consumer runtime contract.
 *
 * @param publishesEvents whether the function gets an outbox's producer environment, which the user may then not set
 */
export function validateFunctionOptions(owner: string, props: FunctionOptionsToValidate, publishesEvents: boolean): void {
  validateSecureFunctionOptions(
    owner,
    props,
    publishesEvents ? RESERVED_PUBLISHING_CONSUMER_ENVIRONMENT : RESERVED_CONSUMER_ENVIRONMENT,
  );
  validateDurationInRange(owner, 'deduplicationWindow', props.deduplicationWindow, { min: Duration.seconds(1) });
  validateWholeSeconds(owner, 'deduplicationWindow', props.deduplicationWindow);
  validateModeOptions(owner, props);
  const stronglyConsistent = props.inboxTable === undefined ? undefined : stronglyConsistentTableBehind(props.inboxTable);
  if (stronglyConsistent !== undefined) {
    validateNotStronglyConsistent(
      owner,
      'inboxTable',
      stronglyConsistent.node.path,
      (stronglyConsistent.node.defaultChild as { multiRegionConsistency?: string }).multiRegionConsistency,
      "the runtime records each message in the transaction of the handler's writes, and inbox records expire through TTL",
    );
  }
}

/**
 * Checks that the props fit the processing mode: AGGREGATE has no inbox (so neither `inboxTable` nor
 * `deduplicationWindow`), only LEASE and MULTI_STEP take a `leaseDuration`, of at least 1 whole second.
 */
function validateModeOptions(owner: string, props: FunctionOptionsToValidate): void {
  const mode = props.processingMode ?? ProcessingMode.TRANSACTIONAL;
  const modes: readonly string[] = Object.values(ProcessingMode);
  if (!modes.includes(mode)) {
    throw validationError(`${owner}: processingMode must be one of ${modes.map((m) => `'${m}'`).join(', ')}, but '${String(mode)}' was provided`);
  }
  if (!usesInbox(mode)) {
    const why = 'an aggregate consumer keeps the ids of applied messages on the aggregate item and has no inbox';
    if (props.inboxTable !== undefined) {
      throw validationError(`${owner}: inboxTable can not be used with processingMode ${modeLabel(mode)} (${why}), but an inbox table was provided`);
    }
    if (props.deduplicationWindow !== undefined) {
      throw validationError(
        `${owner}: deduplicationWindow can not be used with processingMode ${modeLabel(mode)} (${why}), ` +
          `but ${props.deduplicationWindow.isUnresolved() ? 'a value' : props.deduplicationWindow.toHumanString()} was provided`,
      );
    }
  }
  if (props.leaseDuration !== undefined && !usesLease(mode)) {
    throw validationError(
      `${owner}: leaseDuration can only be used with processingMode ${modeLabel(ProcessingMode.LEASE)} or ` +
        `${modeLabel(ProcessingMode.MULTI_STEP)}, but it was provided with ${modeLabel(mode)}`,
    );
  }
  if (props.keepBlockedMessageBody !== undefined && !usesLease(mode)) {
    throw validationError(
      `${owner}: keepBlockedMessageBody can only be used with processingMode ${modeLabel(ProcessingMode.LEASE)} or ` +
        `${modeLabel(ProcessingMode.MULTI_STEP)} (only they block messages), but it was provided with ${modeLabel(mode)}`,
    );
  }
  validateDurationInRange(owner, 'leaseDuration', props.leaseDuration, { min: Duration.seconds(1) });
  validateWholeSeconds(owner, 'leaseDuration', props.leaseDuration);
}
