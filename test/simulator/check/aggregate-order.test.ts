import { describe, expect, it } from 'vitest';
import { checkAggregateOrder } from '../../../simulator/check/aggregate-order';
import type { SimulatedEvent } from '../../../simulator/observation/run-facts';

/** Events `<aggregate><sequence>`, e.g. A1, A2, B1, with their ordering. */
function events(...ids: string[]): Map<string, SimulatedEvent> {
  return new Map(ids.map((id) => [id, { id, type: 't', data: {}, ordering: { aggregateId: id.slice(0, 1), sequence: Number(id.slice(1)) } }]));
}

describe('checkAggregateOrder', () => {
  const all = events('A1', 'A2', 'A3', 'B1', 'B2');

  it('passes each aggregate applied in sequence order, aggregates interleaved, a duplicate acknowledged after its first', () => {
    expect(checkAggregateOrder('Shipping', ['A1', 'B1', 'A2', 'A1', 'B2', 'A3'], all)).toEqual([]);
  });

  it('an event applied before an earlier sequence of its aggregate is a violation naming both', () => {
    const violations = checkAggregateOrder('Shipping', ['A1', 'A3', 'A2', 'B1', 'B2'], all);
    expect(violations).toEqual([
      { kind: 'aggregate-order', subscriber: 'Shipping', detail: 'aggregate A: event A3 (sequence 3) was applied before sequence 2 of its aggregate (applied order: 1, 3, 2)' },
    ]);
  });

  it('a gap never filled (a later sequence applied, an earlier one never) is reported; an unapplied tail is not', () => {
    const violations = checkAggregateOrder('Shipping', ['A1', 'A3', 'B1'], all);
    expect(violations).toEqual([
      { kind: 'aggregate-order', subscriber: 'Shipping', detail: 'aggregate A: sequence 2 was never applied, but 3 was (a gap never filled; applied order: 1, 3)' },
    ]);
  });

  it('events acknowledged by one invocation are not ordered among themselves (a batch applied in order, then acknowledged together after a crash); an inversion across invocations still is', () => {
    // A1 and A2 applied by an invocation that crashed after its commits; the redelivered batch [A1, A2, A3] answered
    // A1, A2 as duplicates and applied A3, and its messages were deleted in another order than the batch's
    expect(checkAggregateOrder('Shipping', [['A3', 'A2', 'A1'], 'B1'], all)).toEqual([]);
    expect(checkAggregateOrder('Shipping', [['A1', 'A3'], ['A2']], all)).toEqual([
      { kind: 'aggregate-order', subscriber: 'Shipping', detail: 'aggregate A: event A3 (sequence 3) was applied before sequence 2 of its aggregate (applied order: 1, 3, 2)' },
    ]);
  });

  it("events one invocation answered together are ordered by the commits of their inbox records, when known: an order broken inside one batch is seen", () => {
    // one batch [A1, A2, A3], applied A3, A2, A1 by a consumer that reversed it
    expect(checkAggregateOrder('Shipping', [['A1', 'A2', 'A3']], all, new Map([['A3', 1], ['A2', 2], ['A1', 3]]))).toEqual([
      { kind: 'aggregate-order', subscriber: 'Shipping', detail: 'aggregate A: event A3 (sequence 3) was applied before sequence 1 of its aggregate (applied order: 3, 2, 1)' },
    ]);
    // applied in order by an invocation that crashed after its commits, answered by the redelivery in another order
    expect(checkAggregateOrder('Shipping', [['A3', 'A1', 'A2']], all, new Map([['A1', 1], ['A2', 2], ['A3', 3]]))).toEqual([]);
    // an event whose commit is not known (no inbox record of the runtime) keeps the group's shared rank
    expect(checkAggregateOrder('Shipping', [['B2', 'B1']], all, new Map([['A1', 1]]))).toEqual([]);
  });

  it('ignores events without an ordering (the standard path)', () => {
    expect(checkAggregateOrder('Shipping', ['X9', 'A1'], all)).toEqual([]);
  });
});
