/**
 * What becomes of a message whose delivery attempts fail, under the retry policies of the two AWS services on the
 * relay path: the EventBridge Pipe reading the outbox stream, and SNS delivering to SQS. The fault plan says how many
 * attempts in a row fail ({@link FaultPlan.failedAttempts}); these functions say what the service then does.
 *
 * Sources:
 * - Pipes, stream sources (eb-pipes-error-troubleshooting.html; CFN `PipeSourceDynamoDBStreamParameters`): a failing
 *   target call is retried up to `MaximumRetryAttempts` or until the record is older than `MaximumRecordAgeInSeconds`,
 *   whichever comes first (-1 is infinite for both), then the record goes to the `DeadLetterConfig` queue; without one
 *   it is discarded. With both infinite the record is retried until the stream trims it (24 hours) and is lost.
 *   The delays between retries are not documented: {@link ASSUMED_PIPE_BACKOFF} is an assumption, used only to tell
 *   when `MaximumRecordAgeInSeconds` runs out.
 * - SNS to SQS (sns-message-delivery-retries.html, sns-dead-letter-queues.html): the delivery policy for SQS endpoints
 *   is fixed at {@link SNS_SQS_DELIVERY_ATTEMPTS} attempts over 23 days; a message still undelivered then goes to the
 *   subscription's dead-letter queue, or is discarded without one.
 */

/** DynamoDB Streams keeps a record for 24 hours (DynamoDB Streams developer guide). */
export const STREAM_RETENTION_SECONDS = 86_400;

/**
 * The delay before each retry of a failed pipe batch, assumed (AWS does not document it): the first retry after
 * `firstSeconds`, each next one after twice the previous delay, never more than `maxSeconds`.
 */
export const ASSUMED_PIPE_BACKOFF = { firstSeconds: 1, maxSeconds: 60 } as const;

/** Delivery attempts SNS makes to an SQS endpoint before it gives up (the fixed delivery policy for SQS). */
export const SNS_SQS_DELIVERY_ATTEMPTS = 100_015;

/** A pipe's retry settings, as the template sets them (-1: infinite). */
export interface PipeRetrySettings {
  readonly maximumRetryAttempts: number;
  readonly maximumRecordAgeSeconds: number;
}

/** Why a pipe stopped retrying a record. */
export type PipeGiveUpCondition = 'RetryAttemptsExhausted' | 'RecordAgeExceeded';

/** What a pipe did with a record whose first `failedAttempts` attempts failed. */
export type PipeRetryOutcome =
  /** published at attempt `failedAttempts + 1` */
  | { readonly kind: 'published'; readonly retries: number }
  /** gave up after `attempts` attempts; the record goes to the dead-letter queue (or is discarded without one) */
  | { readonly kind: 'gave-up'; readonly condition: PipeGiveUpCondition; readonly attempts: number }
  /** retried until the stream trimmed the record: lost */
  | { readonly kind: 'trimmed'; readonly attempts: number };

/**
 * What the pipe does with a record whose first `failedAttempts` attempts fail (`Infinity`: every attempt fails),
 * given its retry settings and the record's age in seconds at its first attempt.
 */
export function pipeRetryOutcome(failedAttempts: number, settings: PipeRetrySettings, ageAtFirstAttemptSeconds = 0): PipeRetryOutcome {
  const retryLimit = settings.maximumRetryAttempts < 0 ? Number.POSITIVE_INFINITY : settings.maximumRetryAttempts;
  const ageLimit = settings.maximumRecordAgeSeconds < 0 ? Number.POSITIVE_INFINITY : settings.maximumRecordAgeSeconds;
  let seconds = ageAtFirstAttemptSeconds;
  let delay: number = ASSUMED_PIPE_BACKOFF.firstSeconds;
  // a record already too old when first read is not attempted at all
  if (seconds > ageLimit) return { kind: 'gave-up', condition: 'RecordAgeExceeded', attempts: 0 };
  for (let retry = 1; retry <= failedAttempts; retry += 1) {
    if (retry > retryLimit) return { kind: 'gave-up', condition: 'RetryAttemptsExhausted', attempts: retry };
    seconds += delay;
    delay = Math.min(delay * 2, ASSUMED_PIPE_BACKOFF.maxSeconds);
    if (seconds > STREAM_RETENTION_SECONDS && ageLimit >= STREAM_RETENTION_SECONDS) return { kind: 'trimmed', attempts: retry };
    if (seconds > ageLimit) return { kind: 'gave-up', condition: 'RecordAgeExceeded', attempts: retry };
  }
  return { kind: 'published', retries: failedAttempts };
}

/** Whether SNS delivers a message whose first `failedAttempts` delivery attempts to an SQS queue fail. */
export function snsDelivers(failedAttempts: number): boolean {
  return failedAttempts < SNS_SQS_DELIVERY_ATTEMPTS;
}
