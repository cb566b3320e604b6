import { Duration } from 'aws-cdk-lib';
import { ENV } from '../../../lambda/config';
import {
  validateDurationAtLeast,
  validateDurationInRange,
  validateNumberInRange,
  validateStringPattern,
} from '../../private/validate-props';
import { FunctionOptions } from '../../functions/function-options';
import { validateSecureFunctionOptions } from '../../private/secure-nodejs-function';
import { CONSUMER_DEFAULTS } from './defaults';

/**
 * Prop checks shared by the consumer constructs. `Subscriber` runs them with its own name as the owner before
 * it creates any child, so a user of `Subscriber` sees `Subscriber 'Billing': ...` rather than a child's name.
 */

/** Subscriber names become part of inbox keys (`<subscriberName>#<eventId>`), so `#` is not allowed. */
export const SUBSCRIBER_NAME_PATTERN = /^[A-Za-z0-9_.-]{1,64}$/;

/** The environment variables the construct sets for the consumer runtime; users may not override them. */
export const RESERVED_CONSUMER_ENVIRONMENT = [
  ENV.SUBSCRIBER_NAME,
  ENV.INBOX_TABLE_NAME,
  ENV.DEDUPLICATION_WINDOW_SECONDS,
  ENV.DEAD_LETTER_QUEUE_URL,
] as const;

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
}

/** Checks the ConsumerFunction props against the Lambda limits and the consumer runtime contract. */
export function validateFunctionOptions(owner: string, props: FunctionOptionsToValidate): void {
  validateSecureFunctionOptions(owner, props, RESERVED_CONSUMER_ENVIRONMENT);
  validateDurationInRange(owner, 'deduplicationWindow', props.deduplicationWindow, { min: Duration.seconds(1) });
  if (props.deduplicationWindow !== undefined && !props.deduplicationWindow.isUnresolved()) {
    const seconds = props.deduplicationWindow.toSeconds({ integral: false });
    if (!Number.isInteger(seconds)) {
      throw new Error(`${owner}: deduplicationWindow must be a whole number of seconds, but ${props.deduplicationWindow.toHumanString()} was provided`);
    }
  }
}
