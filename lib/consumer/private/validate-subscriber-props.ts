import { Duration } from 'aws-cdk-lib';
import { DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS } from '../../../lambda/contract/environment';
import type { IOutboxTable } from '../../outbox/outbox-table';
import { validateEventSource } from '../../private/shared-limits';
import {
  validateDurationAtLeast,
  validateDurationCoversSum,
  validateDurationInRange,
  validateDurationLessThan,
  validateNumberInRange,
  validateWholeSeconds,
} from '../../private/validate-props';
import { validationError } from '../../private/validation-error';
import { ProcessingMode } from '../processing-mode';
import type { SubscriberOptions } from '../subscriber-options';
import { CONSUMER_DEFAULTS, minimumVisibilityTimeout } from './defaults';
import { usesInbox, usesLease } from './processing-modes';
import { validateFunctionOptions, validateQueueOptions, validateSubscriberName } from './validate-consumer-props';

/** What the checks read of a subscriber's props: its options, and the outbox and event source it appends with, if any. */
export type CheckedSubscriberProps = SubscriberOptions & { readonly outboxTable?: IOutboxTable; readonly eventSource?: string };

/** Every check runs before any child exists, and names this subscriber in the message. */
export function validateSubscriberProps(owner: string, subscriberName: string, props: CheckedSubscriberProps): void {
  validateSubscriberName(owner, props.subscriberName === undefined ? 'subscriberName (the construct id)' : 'subscriberName', subscriberName);
  validateFunctionOptions(owner, props, props.publishesEvents === true);
  validateQueueOptions(owner, props);
  validatePublishing(owner, props);

  const timeout = props.timeout ?? CONSUMER_DEFAULTS.FUNCTION_TIMEOUT;
  if (!timeout.isUnresolved()) {
    validateDurationAtLeast(owner, 'visibilityTimeout', props.visibilityTimeout, minimumVisibilityTimeout(timeout), '6 x timeout');
  }
  if (usesLease(props.processingMode ?? ProcessingMode.TRANSACTIONAL) && !timeout.isUnresolved()) {
    // the runtime counts a lease as held until its end plus its clock-skew allowance
    const visibilityTimeout = props.visibilityTimeout ?? minimumVisibilityTimeout(timeout);
    validateDurationLessThan(
      owner,
      'leaseDuration',
      props.leaseDuration,
      visibilityTimeout.isUnresolved() ? visibilityTimeout : Duration.seconds(visibilityTimeout.toSeconds({ integral: false }) - DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS),
      `visibilityTimeout less the runtime's ${DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS} s clock-skew allowance`,
      'so that a redelivery after a crash finds the lease expired',
    );
  }

  validateDurationInRange(owner, 'subscriptionDeadLetterRetentionPeriod', props.subscriptionDeadLetterRetentionPeriod, {
    min: Duration.minutes(1),
    max: Duration.days(14),
  });
  validateWholeSeconds(owner, 'subscriptionDeadLetterRetentionPeriod', props.subscriptionDeadLetterRetentionPeriod);
  // The longest path of a copy with one redrive out of each dead-letter queue (see deduplicationWindow); checked with
  // the default window too, which retentions given alone can exceed. Without an inbox there is no window.
  if (usesInbox(props.processingMode ?? ProcessingMode.TRANSACTIONAL)) {
    validateDurationCoversSum(owner, 'deduplicationWindow', props.deduplicationWindow, CONSUMER_DEFAULTS.DEDUPLICATION_WINDOW, [
      {
        prop: 'subscriptionDeadLetterRetentionPeriod',
        value: props.subscriptionDeadLetterRetentionPeriod ?? CONSUMER_DEFAULTS.SUBSCRIPTION_DEAD_LETTER_RETENTION_PERIOD,
      },
      { prop: 'retentionPeriod', value: props.retentionPeriod ?? CONSUMER_DEFAULTS.RETENTION_PERIOD },
      { prop: 'deadLetterRetentionPeriod', value: props.deadLetterRetentionPeriod ?? CONSUMER_DEFAULTS.DEAD_LETTER_RETENTION_PERIOD },
    ]);
  }

  validateNumberInRange(owner, 'batchSize', props.batchSize, { min: 1, max: 10000, integer: true });
  validateDurationInRange(owner, 'maxBatchingWindow', props.maxBatchingWindow, { min: Duration.seconds(0), max: Duration.minutes(5) });
  // Lambda rejects a batch size above 10 without a batching window of at least 1 second.
  const batchingWindowSeconds = props.maxBatchingWindow?.isUnresolved() ? 1 : (props.maxBatchingWindow?.toSeconds({ integral: false }) ?? 0);
  if (props.batchSize !== undefined && props.batchSize > 10 && batchingWindowSeconds < 1) {
    throw validationError(
      `${owner}: batchSize must be 10 or less unless maxBatchingWindow is at least 1 second, but ${props.batchSize} was provided`,
    );
  }
  validateNumberInRange(owner, 'maxConcurrency', props.maxConcurrency, { min: 2, max: 1000, integer: true });
}

/** `publishesEvents` needs an outbox; `outboxTable` and `eventSource` mean nothing without `publishesEvents`. */
function validatePublishing(owner: string, props: CheckedSubscriberProps): void {
  if (props.publishesEvents) {
    if (props.outboxTable === undefined) {
      throw validationError(
        `${owner}: publishesEvents requires outboxTable (the outbox the handler appends events to), but none was provided; ` +
          'IdempotentEventFlow.addSubscriber passes the flow\'s outbox',
      );
    }
  } else {
    if (props.outboxTable !== undefined) {
      throw validationError(`${owner}: outboxTable can only be used with publishesEvents: true, but publishesEvents is ${String(props.publishesEvents ?? false)}`);
    }
    if (props.eventSource !== undefined) {
      throw validationError(`${owner}: eventSource can only be used with publishesEvents: true, but publishesEvents is ${String(props.publishesEvents ?? false)}`);
    }
  }
  validateEventSource(owner, 'eventSource', props.eventSource);
}
