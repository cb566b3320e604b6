/**
 * A producer command that failed every attempt after a write of its own was applied unseen: when its attempts put
 * different event ids, the id is the mistake (`event-id-per-attempt`), not the API (new-user trial NU18-6).
 */
import { describe, expect, test } from 'vitest';
import { checkProducerFailures } from '../../../simulator/check/producer-failures';
import { fixFor } from '../../../simulator/check/violation-cause';

const REFUSED = "the invocation threw TransactionCancelledError: transaction cancelled, nothing was written: action 0 (item Put on table 'Orders'): ConditionalCheckFailed";

describe('producer-failed, after an unseen write of its own', () => {
  test('attempts that put different event ids: the cause event-id-per-attempt with its fix, and no advice to use transactWriteOnce', () => {
    const figures = { total: 4, succeeded: 3, retried: 3, failed: [{ index: 1, reason: REFUSED, afterUnseenWrite: true }] };
    const attempts = [['order-placed-1f3a'], ['order-placed-77b0'], ['order-placed-c2d4']];

    const [violation] = checkProducerFailures(figures, 3, (failure) => (failure.index === 1 ? { producer: 'App/Orders/PlaceOrder', attempts } : undefined));

    expect(violation!.causes).toEqual([
      { kind: 'event-id-per-attempt', producer: 'App/Orders/PlaceOrder', eventIds: ['order-placed-1f3a', 'order-placed-77b0'], invocations: [], requests: [], fix: fixFor('event-id-per-attempt') },
    ]);
    expect(violation!.detail).toContain('Its attempts put different event ids (order-placed-1f3a at attempt 1, order-placed-77b0 at attempt 2)');
    expect(violation!.detail).not.toContain('transactWriteOnce');
  });

  test('attempts that put the same event id keep the transactWriteOnce advice, with no cause', () => {
    const figures = { total: 4, succeeded: 3, retried: 3, failed: [{ index: 1, reason: REFUSED, afterUnseenWrite: true }] };

    const [violation] = checkProducerFailures(figures, 3, () => ({ producer: 'App/Orders/PlaceOrder', attempts: [['order-placed-order-2'], ['order-placed-order-2'], ['order-placed-order-2']] }));

    expect(violation!.causes).toBeUndefined();
    expect(violation!.detail).toContain('Outbox.transactWriteOnce');
  });

  test('commands failed with differing ids and with the same id are told apart, each with its own advice', () => {
    const figures = {
      total: 4,
      succeeded: 2,
      retried: 6,
      failed: [
        { index: 0, reason: REFUSED, afterUnseenWrite: true },
        { index: 2, reason: REFUSED, afterUnseenWrite: true },
      ],
    };
    const ids: Record<number, string[][]> = { 0: [['a-1'], ['a-2'], ['a-3']], 2: [['c'], ['c'], ['c']] };

    const violations = checkProducerFailures(figures, 3, (failure) => ({ producer: 'P', attempts: ids[failure.index]! }));

    expect(violations.map((violation) => [violation.detail.match(/\(#\d+\)/)?.[0], violation.causes?.map((cause) => cause.kind) ?? []])).toEqual([
      ['(#1)', ['event-id-per-attempt']],
      ['(#3)', []],
    ]);
  });
});
