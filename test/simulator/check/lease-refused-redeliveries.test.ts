/** lease-outlasts-redelivery: a lease outlasting the visibility timeout fails the run on the refusals the run saw, whatever the operator did later. */
import { describe, expect, test } from 'vitest';
import { checkLeaseRefusedRedeliveries } from '../../../simulator/check/lease-refused-redeliveries';
import { fixFor } from '../../../simulator/check/violation-cause';

const lease = (seconds: string) => ({
  subscriber: 'Shipping',
  environment: { IEF_PROCESSING_MODE: 'multi-step', IEF_LEASE_DURATION_SECONDS: seconds },
  visibilityTimeoutSeconds: 180,
});
const refused = { messageId: 'm-1', eventId: 'order-1', logged: "failed (MessageInProgressError: message 'm-1' is in progress)", reported: true };

describe('lease-outlasts-redelivery', () => {
  test('a lease of 900 s on a queue of 180 s whose redelivery the live lease refused fails, naming the setting, with no dead letter left', () => {
    const [violation, ...rest] = checkLeaseRefusedRedeliveries(lease('900'), [refused], []);

    expect(rest).toEqual([]);
    expect(violation).toMatchObject({ kind: 'lease-outlasts-redelivery', subscriber: 'Shipping' });
    expect(violation?.detail).toContain('(events order-1)');
    expect(violation?.causes).toEqual([
      { kind: 'lease-outlasts-redelivery', subscriber: 'Shipping', eventIds: ['order-1'], invocations: [], requests: [], setting: { name: 'IEF_LEASE_DURATION_SECONDS', value: 900, needed: 175 }, fix: fixFor('lease-outlasts-redelivery') },
    ]);
  });

  test('a dead letter sent away for the live lease counts as a refusal', () => {
    const letter = { queueName: 'dlq', messageId: 'm-2', eventId: 'order-2', explanation: 'moved by SQS after 5 receives; MessageInProgressError: in progress' };
    expect(checkLeaseRefusedRedeliveries(lease('900'), [], [letter])[0]?.causes?.[0]?.eventIds).toEqual(['order-2']);
  });

  test('nothing when the lease fits the visibility timeout (a refusal then is a concurrent copy), or when no delivery was refused', () => {
    expect(checkLeaseRefusedRedeliveries(lease('30'), [refused], [])).toEqual([]);
    expect(checkLeaseRefusedRedeliveries(lease('900'), [{ ...refused, logged: 'failed (Error: boom)' }], [])).toEqual([]);
  });
});
