import { Duration } from 'aws-cdk-lib';

/**
 * Defaults shared by the subscriber-side constructs, kept in one place so the documented `@default`s,
 * the cross-prop validation in `Subscriber` and the child constructs can not drift apart.
 */
export const CONSUMER_DEFAULTS = {
  /** Receives before SQS moves a message to the dead-letter queue (AWS guidance: at least 5). */
  MAX_RECEIVE_COUNT: 5,
  /** Lambda function timeout. */
  FUNCTION_TIMEOUT: Duration.seconds(30),
  /** Queue visibility timeout = this factor x function timeout (AWS guidance for SQS event sources). */
  VISIBILITY_TIMEOUT_FACTOR: 6,
  /** SQS default message retention. */
  RETENTION_PERIOD: Duration.days(4),
  /** The SQS maximum, so a message can wait in the DLQ for as long as SQS allows. */
  DEAD_LETTER_RETENTION_PERIOD: Duration.days(14),
  /**
   * Retention of the SNS subscription's redrive DLQ. Not the SQS maximum: it counts in the deduplication window rule
   * (subscription DLQ + queue + queue DLQ), and with 14 days the defaults would add up to 32 days, beyond the window.
   * A week is time to fix what made SNS fail (a policy or key that refuses it; alarmed at the first message) and redrive.
   */
  SUBSCRIPTION_DEAD_LETTER_RETENTION_PERIOD: Duration.days(7),
  /**
   * Inbox TTL: covers 7 days in the subscription DLQ + 4 days of queue retention + 14 days in the DLQ (25 days), with
   * 5 days to spare for a relay's late duplicate, an SQS outage SNS retries through, and the redrive itself.
   */
  DEDUPLICATION_WINDOW: Duration.days(30),
  /** Age of a queue's oldest message at which a subscriber's oldest-message alarm fires (`OldestMessageAge`, `HeldAggregate`). */
  MAX_MESSAGE_AGE: Duration.minutes(5),
  /** Records per Lambda invocation (the SQS event source default). */
  BATCH_SIZE: 10,
} as const;

/** `6 x timeout`: the default and the minimum visibility timeout for a given function timeout. */
export function minimumVisibilityTimeout(timeout: Duration): Duration {
  return Duration.seconds(timeout.toSeconds() * CONSUMER_DEFAULTS.VISIBILITY_TIMEOUT_FACTOR);
}
