import { describe, expect, it } from 'vitest';
import { aggregateOrderCoverage } from '../../../simulator/check/aggregate-order-coverage';
import type { SimulatedEvent } from '../../../simulator/observation/run-facts';

describe('aggregateOrderCoverage', () => {
  it('counts each ordered event once, however often and however grouped it was acknowledged, and the aggregates they belong to; events of the standard path are not counted', () => {
    const eventsById = new Map<string, SimulatedEvent>([
      ['A1', { id: 'A1', type: 't', data: {}, ordering: { aggregateId: 'A', sequence: 1 } }],
      ['A2', { id: 'A2', type: 't', data: {}, ordering: { aggregateId: 'A', sequence: 2 } }],
      ['B1', { id: 'B1', type: 't', data: {}, ordering: { aggregateId: 'B', sequence: 1 } }],
      ['standard', { id: 'standard', type: 't', data: {} }],
    ]);
    expect(aggregateOrderCoverage([['A2', 'A1'], 'A1', 'B1', 'standard', 'unknown'], eventsById)).toEqual({ aggregates: 2, events: 3 });
    expect(aggregateOrderCoverage([], eventsById)).toEqual({ aggregates: 0, events: 0 });
  });
});
