import { ENV } from '../../lambda/contract/environment';

/**
 * The environment variables an outbox's `producerEnvironment` sets for `Outbox.fromEnvironment()`. A function that
 * gets them from its construct (a producer, or a consumer that publishes events) may not set them itself.
 */
export const RESERVED_PRODUCER_ENVIRONMENT: readonly string[] = [
  ENV.OUTBOX_TABLE_NAME,
  ENV.OUTBOX_PARTITION_KEY_NAME,
  ENV.OUTBOX_SORT_KEY_NAME,
  ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME,
  ENV.OUTBOX_EVENT_RETENTION_SECONDS,
  ENV.EVENT_SOURCE,
  ENV.MAX_EVENT_BYTES,
];
