/**
 * The runtime's configuration: what each function reads from its environment at cold start, through the loaders below.
 * The variables' names are the contract with the constructs (`lib/`), defined once in contract/environment.ts.
 */
import { ENV, LAMBDA_ENV, PROCESSING_MODE, type ProcessingModeName } from './contract/environment';

const PROCESSING_MODE_NAMES: readonly string[] = Object.values(PROCESSING_MODE);

/** Raised when the environment does not carry what the runtime needs. Thrown at cold start. */
export class ConfigurationError extends Error {
  public constructor(message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

/** What every consumer needs from its environment, whatever its mode. */
export interface ConsumerBaseConfig {
  readonly subscriberName: string;
  /** Absent when the function was deployed without a dead-letter queue URL (then redrive is the only way there). */
  readonly deadLetterQueueUrl?: string;
  /** The mode the subscriber was deployed with; absent outside the constructs (then any factory may run). */
  readonly processingMode?: ProcessingModeName;
  /**
   * The Lambda function's name (`AWS_LAMBDA_FUNCTION_NAME`), a dimension of the consumer metrics; absent outside Lambda
   * (then the metrics have the subscriber and mode dimensions only).
   */
  readonly functionName?: string;
}

/** What a consumer that keeps per-message records in an inbox table needs (transactional, lease, multi-step). */
export interface ConsumerConfig extends ConsumerBaseConfig {
  readonly inboxTableName: string;
  readonly deduplicationWindowSeconds: number;
}

/** What a lease or multi-step consumer needs: the inbox and the lease duration. */
export interface LeaseConsumerConfig extends ConsumerConfig {
  /** How long a claim on a message lasts before another delivery may act on it, in seconds. */
  readonly leaseDurationSeconds: number;
  /**
   * Whether a blocked message's body is kept on its processing record, with no TTL until an operator resolves it.
   * @default false - only the event id, type, payload fingerprint and reason are kept; the body is in the dead-letter queue
   */
  readonly keepBlockedMessageBody?: boolean;
}

/** What a producer needs from its environment. */
export interface ProducerConfig {
  readonly outboxTableName: string;
  readonly partitionKeyName: string;
  readonly sortKeyName?: string;
  readonly timeToLiveAttributeName?: string;
  readonly eventRetentionSeconds: number;
  readonly eventSource: string;
  /** The largest event the producer may append, in bytes as delivered (`IEF_MAX_EVENT_BYTES`); undefined: the SNS message limit. */
  readonly maxEventBytes?: number;
}

/** Environment variables as the `load*Config` functions read them (`process.env` by default). */
export type EnvironmentVariables = Readonly<Record<string, string | undefined>>;

function required(env: EnvironmentVariables, name: string): string {
  const value = env[name];
  if (value === undefined || value.trim() === '') {
    throw new ConfigurationError(`environment variable ${name} must be set (it is set by the idempotent-event-flow constructs)`);
  }
  return value;
}

function optional(env: EnvironmentVariables, name: string): string | undefined {
  const value = env[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

function positiveInteger(env: EnvironmentVariables, name: string): number {
  const raw = required(env, name);
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigurationError(`environment variable ${name} must be a positive whole number of seconds, but '${raw}' was given`);
  }
  return value;
}

function processingMode(env: EnvironmentVariables): ProcessingModeName | undefined {
  const value = optional(env, ENV.PROCESSING_MODE);
  if (value === undefined) return undefined;
  if (!PROCESSING_MODE_NAMES.includes(value)) {
    throw new ConfigurationError(`environment variable ${ENV.PROCESSING_MODE} must be one of ${PROCESSING_MODE_NAMES.join(', ')}, but '${value}' was given`);
  }
  return value as ProcessingModeName;
}

/** Reads what every consumer needs; call once at cold start. Throws {@link ConfigurationError} on a missing value. */
export function loadConsumerBaseConfig(env: EnvironmentVariables = process.env): ConsumerBaseConfig {
  return {
    subscriberName: required(env, ENV.SUBSCRIBER_NAME),
    deadLetterQueueUrl: optional(env, ENV.DEAD_LETTER_QUEUE_URL),
    processingMode: processingMode(env),
    functionName: optional(env, LAMBDA_ENV.FUNCTION_NAME),
  };
}

/** The modes the constructs deploy with an inbox table (and so with its environment variables). */
const INBOX_MODES: readonly ProcessingModeName[] = [PROCESSING_MODE.TRANSACTIONAL, PROCESSING_MODE.LEASE, PROCESSING_MODE.MULTI_STEP];
/** The modes the constructs deploy with a lease duration. */
const LEASE_MODES: readonly ProcessingModeName[] = [PROCESSING_MODE.LEASE, PROCESSING_MODE.MULTI_STEP];

const quoted = (modes: readonly string[]): string => modes.map((mode) => `'${mode}'`).join(' and ');

/**
 * A handler whose factory needs what its deployed mode does not provide (an inbox in aggregate mode, a lease duration in
 * transactional mode) must fail naming the mode, not the environment variable the construct deliberately left unset.
 */
function assertModeProvides(base: ConsumerBaseConfig, env: EnvironmentVariables, name: string, what: string, modes: readonly ProcessingModeName[]): void {
  if (base.processingMode === undefined || modes.includes(base.processingMode) || optional(env, name) !== undefined) return;
  throw new ConfigurationError(
    `subscriber '${base.subscriberName}' was deployed with processingMode '${base.processingMode}', which ${what} (${name} is not set), but its handler needs one: ` +
      `only ${quoted(modes)} subscribers have it; set the subscriber's processingMode to the mode of its handler's factory or use the factory of '${base.processingMode}'`,
  );
}

/** Reads the configuration of an inbox-backed consumer; call once at cold start. Throws {@link ConfigurationError} on a missing value. */
export function loadConsumerConfig(env: EnvironmentVariables = process.env): ConsumerConfig {
  const base = loadConsumerBaseConfig(env);
  assertModeProvides(base, env, ENV.INBOX_TABLE_NAME, 'has no inbox table', INBOX_MODES);
  return {
    ...base,
    inboxTableName: required(env, ENV.INBOX_TABLE_NAME),
    deduplicationWindowSeconds: positiveInteger(env, ENV.DEDUPLICATION_WINDOW_SECONDS),
  };
}

/** Reads the configuration of a lease or multi-step consumer; call once at cold start. */
export function loadLeaseConsumerConfig(env: EnvironmentVariables = process.env): LeaseConsumerConfig {
  const config = loadConsumerConfig(env);
  assertModeProvides(config, env, ENV.LEASE_DURATION_SECONDS, 'sets no lease duration', LEASE_MODES);
  const keep = env[ENV.KEEP_BLOCKED_MESSAGE_BODY];
  if (keep !== undefined && keep !== 'true' && keep !== 'false') {
    throw new ConfigurationError(`${ENV.KEEP_BLOCKED_MESSAGE_BODY} must be 'true' or 'false', but '${keep}' was given`);
  }
  return { ...config, leaseDurationSeconds: positiveInteger(env, ENV.LEASE_DURATION_SECONDS), keepBlockedMessageBody: keep === 'true' };
}

/**
 * Throws {@link ConfigurationError} when the subscriber was deployed with another processing mode than the factory
 * `factoryName` implements: the construct granted and configured for that mode, so running another would fail later
 * and less clearly.
 */
export function assertProcessingMode(config: ConsumerBaseConfig, expected: ProcessingModeName, factoryName: string): void {
  if (config.processingMode !== undefined && config.processingMode !== expected) {
    throw new ConfigurationError(
      `subscriber '${config.subscriberName}' was deployed with processingMode '${config.processingMode}', but its handler uses ${factoryName}, ` +
        `which implements '${expected}'; set the subscriber's processingMode to '${expected}' or use the matching factory`,
    );
  }
}

/** Reads the producer configuration; call once at cold start. Throws {@link ConfigurationError} on a missing value. */
export function loadProducerConfig(env: EnvironmentVariables = process.env): ProducerConfig {
  return {
    outboxTableName: required(env, ENV.OUTBOX_TABLE_NAME),
    partitionKeyName: required(env, ENV.OUTBOX_PARTITION_KEY_NAME),
    sortKeyName: optional(env, ENV.OUTBOX_SORT_KEY_NAME),
    timeToLiveAttributeName: optional(env, ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME),
    eventRetentionSeconds: positiveInteger(env, ENV.OUTBOX_EVENT_RETENTION_SECONDS),
    eventSource: required(env, ENV.EVENT_SOURCE),
    ...optionalByteCount(env, ENV.MAX_EVENT_BYTES, 'maxEventBytes'),
  };
}

/** `{ [key]: n }` for a variable set to a positive whole number of bytes, `{}` when it is unset. */
function optionalByteCount<K extends string>(env: EnvironmentVariables, name: string, key: K): { [k in K]?: number } {
  const raw = optional(env, name);
  if (raw === undefined) return {};
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) {
    throw new ConfigurationError(`environment variable ${name} must be a positive whole number of bytes, but '${raw}' was given`);
  }
  return { [key]: value } as { [k in K]?: number };
}
