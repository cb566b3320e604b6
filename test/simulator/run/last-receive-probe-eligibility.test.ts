/**
 * Which subscribers the last-receive probe takes: a queue whose retention would drop a message failed at every receive
 * before its last (retention below maxReceiveCount x the visibility timeout) is not probed, so that SQS's retention,
 * not the consumer, never decides the probe's outcome.
 */
import { describe, expect, test } from 'vitest';
import type { SubscriberView } from '../../../simulator/observation/run-facts';
import { isProbed } from '../../../simulator/run/last-receive-probe';

const subscriber = (messageRetentionSeconds: number, visibilityTimeoutSeconds = 180, maxReceiveCount = 5): SubscriberView =>
  ({
    function: { key: 'S/Audit' },
    environment: { PROCESSING_MODE: 'transactional' },
    queue: { model: { fifo: false, redrive: { maxReceiveCount }, messageRetentionSeconds, visibilityTimeoutSeconds } },
  }) as unknown as SubscriberView;

describe('isProbed: the queue keeps a message through every receive', () => {
  test('a queue retaining a message for maxReceiveCount x the visibility timeout is probed; a shorter retention is not', () => {
    expect(isProbed(subscriber(4 * 24 * 3600), 3600)).toBe(true);
    expect(isProbed(subscriber(5 * 180), 3600)).toBe(true);
    expect(isProbed(subscriber(10 * 60), 3600)).toBe(false);
    expect(isProbed(subscriber(5 * 180 - 1), 3600)).toBe(false);
  });
});
