/** The subject-spread check (simulator/check/subject-spread.ts): a subject over many one-event aggregates is reported. */
import { describe, expect, test } from 'vitest';
import { checkSubjectSpread, MIN_SPREAD_AGGREGATES, spreadSubjects } from '../../../simulator/check/subject-spread';
import type { SimulatedEvent } from '../../../simulator/observation/run-facts';

const event = (id: string, subject: string | undefined, aggregateId: string | undefined, sequence = 1): SimulatedEvent => ({
  id,
  type: 'OrderStepped',
  data: {},
  ...(subject === undefined ? {} : { subject }),
  ...(aggregateId === undefined ? {} : { ordering: { aggregateId, sequence } }),
});

/** The example's shape: each order its own aggregate, three steps each, subject = aggregate. */
const exampleLike = Array.from({ length: 25 }, (_, order) => [1, 2, 3].map((step) => event(`o${order}-${step}`, `order-${order}`, `order-${order}`, step))).flat();

describe('subject-spread', () => {
  test('passes apps whose aggregate is the entity (the example: 25 orders of three steps)', () => {
    expect(checkSubjectSpread(exampleLike)).toEqual([]);
  });

  test('fails a producer drawing a fresh aggregate per event, naming the subject, its aggregates and what to change', () => {
    const fresh = ['a', 'b', 'c', 'd'].map((step) => event(`e-${step}`, 'order-99', `e-${step}`));
    const [violation] = checkSubjectSpread([...fresh, ...exampleLike]);
    expect(violation?.kind).toBe('subject-spread');
    expect(violation?.detail).toMatch(/^1 subject\(s\) of ordered events are spread over 3 or more aggregates of one event each, so nothing orders their events: 'order-99' in 4 aggregates \(e-a, e-b, e-c, …\)\. .*aggregateId the id of the entity/);
  });

  test(`a subject over fewer than ${MIN_SPREAD_AGGREGATES} one-event aggregates, over aggregates one of which holds more events, or standard events: not reported`, () => {
    expect(spreadSubjects([event('1', 's', 'a1'), event('2', 's', 'a2')])).toEqual([]);
    // a customer (subject) whose orders (aggregates) have several events: they are ordered per order
    expect(spreadSubjects([event('1', 'c', 'o1'), event('2', 'c', 'o2'), event('3', 'c', 'o3'), event('4', 'c', 'o3', 2)])).toEqual([]);
    expect(spreadSubjects(['1', '2', '3'].map((id) => event(id, 's', undefined)))).toEqual([]);
    expect(spreadSubjects(['1', '2', '3'].map((id) => event(id, undefined, `a${id}`)))).toEqual([]);
  });
});
