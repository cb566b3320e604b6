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

  it('with the events the subscriber was given, names each aggregate held: where it stopped, the sequence it waits for and whether that event is dead-lettered', () => {
    const eventsById = new Map<string, SimulatedEvent>(
      [['A', 1], ['A', 2], ['A', 3], ['B', 1], ['B', 2], ['C', 1]].map(([aggregateId, sequence]) => [
        `${aggregateId}${sequence}`,
        { id: `${aggregateId}${sequence}`, type: 't', data: {}, ordering: { aggregateId: String(aggregateId), sequence: Number(sequence) } },
      ]),
    );
    const coverage = aggregateOrderCoverage(['A1', 'C1'], eventsById, { matched: eventsById.keys(), deadLettered: new Set(['A2']) });
    expect(coverage).toEqual({
      aggregates: 2,
      events: 2,
      held: [
        { aggregateId: 'A', appliedUpTo: 1, waitsFor: { sequence: 2, eventId: 'A2' }, cause: 'dead-lettered' },
        { aggregateId: 'B', appliedUpTo: 0, waitsFor: { sequence: 1, eventId: 'B1' }, cause: 'not applied' },
      ],
    });
    // a sequence applied over the missing one is a gap (the order check's), not held
    expect(aggregateOrderCoverage(['B2'], eventsById, { matched: ['B1', 'B2'], deadLettered: new Set(['B1']) })).toEqual({ aggregates: 1, events: 1 });
    // none held: no held field
    expect(aggregateOrderCoverage(['C1'], eventsById, { matched: ['C1'], deadLettered: new Set() })).toEqual({ aggregates: 1, events: 1 });
  });
});
