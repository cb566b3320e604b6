/** A queue URL of AWS in a function's environment is given a local URL, so its messages stay on this machine. */
import { describe, expect, test } from 'vitest';
import { ExternalQueues } from '../../../simulator/run/external-queues';
import { frozenClock } from '../aws/queue-test-kit';

describe('ExternalQueues', () => {
  test('replaces an AWS SQS queue URL with a local one and creates its queue; other values stay', () => {
    const queues = new ExternalQueues({ endpoint: () => 'http://127.0.0.1:4000', clock: frozenClock() });

    const localized = queues.localize({
      PARTNER_QUEUE_URL: 'https://sqs.eu-west-1.amazonaws.com/999999999999/partner-orders',
      LEGACY_QUEUE_URL: 'https://eu-west-1.queue.amazonaws.com/999999999999/legacy.fifo',
      TABLE_NAME: 'orders',
      WEBHOOK: 'https://example.com/999999999999/hook',
    });

    expect(localized).toEqual({
      PARTNER_QUEUE_URL: 'http://127.0.0.1:4000/999999999999/partner-orders',
      LEGACY_QUEUE_URL: 'http://127.0.0.1:4000/999999999999/legacy.fifo',
      TABLE_NAME: 'orders',
      WEBHOOK: 'https://example.com/999999999999/hook',
    });
    const partner = queues.resolve('http://127.0.0.1:4000/999999999999/partner-orders');
    expect(partner?.address).toEqual({ name: 'partner-orders', url: 'http://127.0.0.1:4000/999999999999/partner-orders', arn: 'arn:aws:sqs:eu-west-1:999999999999:partner-orders' });
    expect(queues.resolve('http://127.0.0.1:4000/999999999999/legacy.fifo')?.model.fifo).toBe(true);
    expect(queues.all()).toHaveLength(2);
  });
});
