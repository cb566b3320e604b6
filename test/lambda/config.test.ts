import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, test, vi } from 'vitest';
import { assertProcessingMode, ConfigurationError, loadConsumerBaseConfig, loadConsumerConfig, loadLeaseConsumerConfig, loadProducerConfig } from '../../lambda/config';
import { ENV, LAMBDA_ENV, PROCESSING_MODE } from '../../lambda/contract/environment';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';

const consumerEnv = {
  [ENV.SUBSCRIBER_NAME]: 'billing',
  [ENV.INBOX_TABLE_NAME]: 'Inbox',
  [ENV.DEDUPLICATION_WINDOW_SECONDS]: '86400',
  [ENV.DEAD_LETTER_QUEUE_URL]: 'https://sqs.eu-west-1.amazonaws.com/1/dlq',
};

const producerEnv = {
  [ENV.OUTBOX_TABLE_NAME]: 'Outbox',
  [ENV.OUTBOX_PARTITION_KEY_NAME]: 'pk',
  [ENV.OUTBOX_SORT_KEY_NAME]: 'sk',
  [ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME]: 'expiresAt',
  [ENV.OUTBOX_EVENT_RETENTION_SECONDS]: '604800',
  [ENV.EVENT_SOURCE]: 'orders',
};

describe('loadConsumerConfig', () => {
  test('reads every value', () => {
    expect(loadConsumerConfig(consumerEnv)).toEqual({
      subscriberName: 'billing',
      inboxTableName: 'Inbox',
      deduplicationWindowSeconds: 86400,
      deadLetterQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/1/dlq',
    });
  });

  test('the dead-letter queue URL is optional', () => {
    expect(loadConsumerConfig({ ...consumerEnv, [ENV.DEAD_LETTER_QUEUE_URL]: undefined }).deadLetterQueueUrl).toBeUndefined();
    expect(loadConsumerConfig({ ...consumerEnv, [ENV.DEAD_LETTER_QUEUE_URL]: ' ' }).deadLetterQueueUrl).toBeUndefined();
  });

  test.each([ENV.SUBSCRIBER_NAME, ENV.INBOX_TABLE_NAME, ENV.DEDUPLICATION_WINDOW_SECONDS])('fails if %s is missing', (name) => {
    expect(() => loadConsumerConfig({ ...consumerEnv, [name]: undefined })).toThrow(ConfigurationError);
    expect(() => loadConsumerConfig({ ...consumerEnv, [name]: undefined })).toThrow(`environment variable ${name} must be set`);
  });

  test('fails if a required value is only whitespace', () => {
    expect(() => loadConsumerConfig({ ...consumerEnv, [ENV.INBOX_TABLE_NAME]: '  ' })).toThrow(/IEF_INBOX_TABLE_NAME must be set/);
  });

  test.each(['0', '-5', '1.5', 'abc', '1e'])('fails if the deduplication window is %s', (raw) => {
    expect(() => loadConsumerConfig({ ...consumerEnv, [ENV.DEDUPLICATION_WINDOW_SECONDS]: raw })).toThrow(
      `environment variable IEF_DEDUPLICATION_WINDOW_SECONDS must be a positive whole number of seconds, but '${raw}' was given`,
    );
  });

  test('the error is named ConfigurationError', () => {
    expect(() => loadConsumerConfig({})).toThrow(expect.objectContaining({ name: 'ConfigurationError' }));
  });
});

describe('processing mode and lease configuration', () => {
  test('reads the deployed processing mode', () => {
    expect(loadConsumerConfig({ ...consumerEnv, [ENV.PROCESSING_MODE]: 'multi-step' }).processingMode).toBe(PROCESSING_MODE.MULTI_STEP);
  });

  test('the processing mode is optional (a handler used outside the constructs)', () => {
    expect(loadConsumerConfig(consumerEnv).processingMode).toBeUndefined();
  });

  test('fails if the processing mode is unknown, listing the valid ones', () => {
    expect(() => loadConsumerConfig({ ...consumerEnv, [ENV.PROCESSING_MODE]: 'exactly-once' })).toThrow(
      "environment variable IEF_PROCESSING_MODE must be one of transactional, lease, multi-step, aggregate, but 'exactly-once' was given",
    );
  });

  test('the base configuration needs no inbox (aggregate mode)', () => {
    expect(loadConsumerBaseConfig({ [ENV.SUBSCRIBER_NAME]: 'ledger', [ENV.PROCESSING_MODE]: 'aggregate' })).toEqual({
      subscriberName: 'ledger',
      deadLetterQueueUrl: undefined,
      processingMode: 'aggregate',
    });
  });

  test('reads the function name Lambda sets (AWS_LAMBDA_FUNCTION_NAME), for the metrics dimension unique per deployment', () => {
    expect(LAMBDA_ENV.FUNCTION_NAME).toBe('AWS_LAMBDA_FUNCTION_NAME');
    expect(loadConsumerBaseConfig({ [ENV.SUBSCRIBER_NAME]: 'ledger', [LAMBDA_ENV.FUNCTION_NAME]: 'Prod-Billing-Fn' }).functionName).toBe('Prod-Billing-Fn');
    expect(loadConsumerBaseConfig({ [ENV.SUBSCRIBER_NAME]: 'ledger' }).functionName).toBeUndefined();
  });

  test('a lease consumer reads the lease duration in seconds', () => {
    expect(loadLeaseConsumerConfig({ ...consumerEnv, [ENV.LEASE_DURATION_SECONDS]: '45' }).leaseDurationSeconds).toBe(45);
  });

  test('a lease consumer keeps blocked bodies only when IEF_KEEP_BLOCKED_MESSAGE_BODY is true', () => {
    const env = { ...consumerEnv, [ENV.LEASE_DURATION_SECONDS]: '45' };
    expect(loadLeaseConsumerConfig(env).keepBlockedMessageBody).toBe(false);
    expect(loadLeaseConsumerConfig({ ...env, [ENV.KEEP_BLOCKED_MESSAGE_BODY]: 'false' }).keepBlockedMessageBody).toBe(false);
    expect(loadLeaseConsumerConfig({ ...env, [ENV.KEEP_BLOCKED_MESSAGE_BODY]: 'true' }).keepBlockedMessageBody).toBe(true);
    expect(() => loadLeaseConsumerConfig({ ...env, [ENV.KEEP_BLOCKED_MESSAGE_BODY]: 'yes' })).toThrow("IEF_KEEP_BLOCKED_MESSAGE_BODY must be 'true' or 'false', but 'yes' was given");
  });

  test('fails if a lease consumer has no lease duration', () => {
    expect(() => loadLeaseConsumerConfig(consumerEnv)).toThrow('environment variable IEF_LEASE_DURATION_SECONDS must be set');
  });

  test('fails if the factory does not implement the deployed mode, naming both', () => {
    const config = loadConsumerConfig({ ...consumerEnv, [ENV.PROCESSING_MODE]: 'lease' });
    expect(() => assertProcessingMode(config, PROCESSING_MODE.TRANSACTIONAL, 'createTransactionalConsumer')).toThrow(
      /subscriber 'billing' was deployed with processingMode 'lease', but its handler uses createTransactionalConsumer, which implements 'transactional'/,
    );
  });

  test('accepts the matching factory, and any factory when no mode was deployed', () => {
    const lease = loadConsumerConfig({ ...consumerEnv, [ENV.PROCESSING_MODE]: 'lease' });
    expect(() => assertProcessingMode(lease, PROCESSING_MODE.LEASE, 'createLeaseConsumer')).not.toThrow();
    expect(() => assertProcessingMode(loadConsumerConfig(consumerEnv), PROCESSING_MODE.AGGREGATE, 'createAggregateConsumer')).not.toThrow();
  });
});

describe('loadProducerConfig', () => {
  test('reads every value', () => {
    expect(loadProducerConfig(producerEnv)).toEqual({
      outboxTableName: 'Outbox',
      partitionKeyName: 'pk',
      sortKeyName: 'sk',
      timeToLiveAttributeName: 'expiresAt',
      eventRetentionSeconds: 604800,
      eventSource: 'orders',
    });
  });

  test('the sort key and TTL attribute are optional', () => {
    const config = loadProducerConfig({ ...producerEnv, [ENV.OUTBOX_SORT_KEY_NAME]: undefined, [ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME]: '' });
    expect(config.sortKeyName).toBeUndefined();
    expect(config.timeToLiveAttributeName).toBeUndefined();
  });

  test.each([ENV.OUTBOX_TABLE_NAME, ENV.OUTBOX_PARTITION_KEY_NAME, ENV.OUTBOX_EVENT_RETENTION_SECONDS, ENV.EVENT_SOURCE])('fails if %s is missing', (name) => {
    expect(() => loadProducerConfig({ ...producerEnv, [name]: undefined })).toThrow(`environment variable ${name} must be set`);
  });

  test("reads the flow's per-event limit, a positive whole number of bytes (issue 30: a full relay batch fits one PublishBatch)", () => {
    expect(loadProducerConfig({ ...producerEnv, [ENV.MAX_EVENT_BYTES]: '26214' }).maxEventBytes).toBe(26_214);
    expect(loadProducerConfig(producerEnv).maxEventBytes).toBeUndefined();
    expect(() => loadProducerConfig({ ...producerEnv, [ENV.MAX_EVENT_BYTES]: '25KiB' })).toThrow(
      "environment variable IEF_MAX_EVENT_BYTES must be a positive whole number of bytes, but '25KiB' was given",
    );
  });

  test('fails if the retention is not a positive whole number', () => {
    expect(() => loadProducerConfig({ ...producerEnv, [ENV.OUTBOX_EVENT_RETENTION_SECONDS]: '7d' })).toThrow(
      "environment variable IEF_OUTBOX_EVENT_RETENTION_SECONDS must be a positive whole number of seconds, but '7d' was given",
    );
  });
});

describe('a factory used under another deployed mode names both modes, even when that mode lacks its variables', () => {
  // what the constructs set per mode: aggregate mode has no inbox, transactional mode no lease duration
  const deployed = {
    aggregate: { [ENV.SUBSCRIBER_NAME]: 'stats', [ENV.PROCESSING_MODE]: 'aggregate' },
    transactional: { ...consumerEnv, [ENV.PROCESSING_MODE]: 'transactional' },
  };

  test('createTransactionalConsumer in a subscriber deployed as aggregate (no inbox variables)', () => {
    vi.stubEnv(ENV.OUTBOX_TABLE_NAME, '');
    for (const [name, value] of Object.entries(deployed.aggregate)) vi.stubEnv(name, value);
    try {
      expect(() => createTransactionalConsumer({ handle: () => undefined, client: new DynamoDBClient({ region: 'us-east-1' }) })).toThrow(
        /subscriber 'stats' was deployed with processingMode 'aggregate', but its handler uses createTransactionalConsumer, which implements 'transactional'/,
      );
    } finally {
      vi.unstubAllEnvs();
    }
  });

  test('loadConsumerConfig in a subscriber deployed as aggregate says the mode has no inbox', () => {
    expect(() => loadConsumerConfig(deployed.aggregate)).toThrow(ConfigurationError);
    expect(() => loadConsumerConfig(deployed.aggregate)).toThrow(
      /subscriber 'stats' was deployed with processingMode 'aggregate', which has no inbox table \(IEF_INBOX_TABLE_NAME is not set\), but its handler needs one/,
    );
  });

  test('loadLeaseConsumerConfig in a subscriber deployed as transactional says the mode has no lease', () => {
    expect(() => loadLeaseConsumerConfig(deployed.transactional)).toThrow(ConfigurationError);
    expect(() => loadLeaseConsumerConfig(deployed.transactional)).toThrow(
      /subscriber 'billing' was deployed with processingMode 'transactional', which sets no lease duration \(IEF_LEASE_DURATION_SECONDS is not set\), but its handler needs one: only 'lease' and 'multi-step' subscribers/,
    );
  });

  test('without a deployed mode, or in a mode that sets them, a missing variable is still reported as missing', () => {
    expect(() => loadConsumerConfig({ [ENV.SUBSCRIBER_NAME]: 'x' })).toThrow('environment variable IEF_INBOX_TABLE_NAME must be set');
    expect(() => loadLeaseConsumerConfig({ ...consumerEnv, [ENV.PROCESSING_MODE]: 'lease' })).toThrow('environment variable IEF_LEASE_DURATION_SECONDS must be set');
  });
});
