/**
 * The runtime contract between the constructs (`lib/`) and the code that runs in Lambda (`lambda/`).
 *
 * Environment-variable names are defined here once. The constructs build each function's `environment`
 * map from these constants, and the runtime reads them through the loaders below. This module imports no
 * AWS SDK, so `lib/` can import it without pulling runtime dependencies into a CDK app.
 */

/** Names of the environment variables the runtime reads. */
export const ENV = {
  /** Name of the subscriber (the `addSubscriber` id); scopes inbox keys and log lines. */
  SUBSCRIBER_NAME: 'IEF_SUBSCRIBER_NAME',
  /** Name of the subscriber's inbox table. */
  INBOX_TABLE_NAME: 'IEF_INBOX_TABLE_NAME',
  /** How long an inbox record keeps a message id deduplicated, in seconds. */
  DEDUPLICATION_WINDOW_SECONDS: 'IEF_DEDUPLICATION_WINDOW_SECONDS',
  /** URL of the consumer queue's dead-letter queue, where permanently failing messages go with their reason. */
  DEAD_LETTER_QUEUE_URL: 'IEF_DEAD_LETTER_QUEUE_URL',
  /** Name of the outbox table a producer appends events to. */
  OUTBOX_TABLE_NAME: 'IEF_OUTBOX_TABLE_NAME',
  /** Partition key attribute name of the outbox table. */
  OUTBOX_PARTITION_KEY_NAME: 'IEF_OUTBOX_PARTITION_KEY_NAME',
  /** Sort key attribute name of the outbox table; unset when the table has no sort key. */
  OUTBOX_SORT_KEY_NAME: 'IEF_OUTBOX_SORT_KEY_NAME',
  /** TTL attribute name of the outbox table; unset when outbox items are kept forever. */
  OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME: 'IEF_OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME',
  /** How long a relayed outbox item is kept before TTL removes it, in seconds. */
  OUTBOX_EVENT_RETENTION_SECONDS: 'IEF_OUTBOX_EVENT_RETENTION_SECONDS',
  /** Default CloudEvents `source` for events this producer appends. */
  EVENT_SOURCE: 'IEF_EVENT_SOURCE',
} as const;

/** Raised when the environment does not carry what the runtime needs. Thrown at cold start. */
export class ConfigurationError extends Error {
  public constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

/** What a consumer needs from its environment. */
export interface ConsumerConfig {
  readonly subscriberName: string;
  readonly inboxTableName: string;
  readonly deduplicationWindowSeconds: number;
  /** Absent when the function was deployed without a dead-letter queue URL (then redrive is the only way there). */
  readonly deadLetterQueueUrl?: string;
}

/** What a producer needs from its environment. */
export interface ProducerConfig {
  readonly outboxTableName: string;
  readonly partitionKeyName: string;
  readonly sortKeyName?: string;
  readonly timeToLiveAttributeName?: string;
  readonly eventRetentionSeconds: number;
  readonly eventSource: string;
}

type Env = Readonly<Record<string, string | undefined>>;

function required(env: Env, name: string): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') {
    throw new ConfigurationError(`environment variable ${name} must be set (it is set by the idempotent-event-flow constructs)`);
  }
  return value;
}

function optional(env: Env, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

function positiveInteger(env: Env, name: string): number {
  const raw = required(env, name);
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigurationError(`environment variable ${name} must be a positive whole number of seconds, but '${raw}' was given`);
  }
  return value;
}

/** Reads the consumer configuration; call once at cold start. Throws {@link ConfigurationError} on a missing value. */
export function loadConsumerConfig(env: Env = process.env): ConsumerConfig {
  return {
    subscriberName: required(env, ENV.SUBSCRIBER_NAME),
    inboxTableName: required(env, ENV.INBOX_TABLE_NAME),
    deduplicationWindowSeconds: positiveInteger(env, ENV.DEDUPLICATION_WINDOW_SECONDS),
    deadLetterQueueUrl: optional(env, ENV.DEAD_LETTER_QUEUE_URL),
  };
}

/** Reads the producer configuration; call once at cold start. Throws {@link ConfigurationError} on a missing value. */
export function loadProducerConfig(env: Env = process.env): ProducerConfig {
  return {
    outboxTableName: required(env, ENV.OUTBOX_TABLE_NAME),
    partitionKeyName: required(env, ENV.OUTBOX_PARTITION_KEY_NAME),
    sortKeyName: optional(env, ENV.OUTBOX_SORT_KEY_NAME),
    timeToLiveAttributeName: optional(env, ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME),
    eventRetentionSeconds: positiveInteger(env, ENV.OUTBOX_EVENT_RETENTION_SECONDS),
    eventSource: required(env, ENV.EVENT_SOURCE),
  };
}
