/** A producer the run drove: the events each attempt of a command committed tell a new event id per attempt, without a producer probe. */
import { describe, expect, test } from 'vitest';
import { repeatedByAttempts } from '../../../simulator/check/producer-attempts';
import { fixFor } from '../../../simulator/check/violation-cause';
import type { SimulatedEvent } from '../../../simulator/observation/run-facts';

const event = (id: string, type: string, subject: string): [string, SimulatedEvent] => [id, { id, type, subject, data: {} }];
const events = new Map([event('a-1', 'OrderPlaced', 'order-1'), event('a-2', 'OrderPlaced', 'order-1'), event('b-1', 'OrderPlaced', 'order-2'), event('p-1', 'PaymentRequested', 'order-1')]);

describe('repeatedByAttempts', () => {
  test('a later attempt of one command that committed the same type and subject under another id: the command committed twice, the first attempt\'s id kept first', () => {
    const written = new Map([
      ['producer|0|1', ['a-1', 'p-1']],
      ['producer|0|2', ['a-2', 'p-1']],
      ['producer|1|1', ['b-1']],
    ]);
    expect(repeatedByAttempts('Shop/PlaceOrder', written, events)).toEqual([
      { kind: 'event-id-per-attempt', producer: 'Shop/PlaceOrder', eventIds: ['a-1', 'a-2'], invocations: [], requests: [], fix: fixFor('event-id-per-attempt') },
    ]);
  });

  test('a correct producer: every attempt writes the same ids (or a retry writes nothing new); another command\'s events and invocations that are no attempt are not compared', () => {
    const written = new Map([
      ['producer|0|1', ['a-1', 'p-1']],
      ['producer|0|2', ['a-1', 'p-1']],
      ['producer|1|2', ['b-1']],
      ['Mapping|m-1|1', ['a-2']],
    ]);
    expect(repeatedByAttempts('Shop/PlaceOrder', written, events)).toEqual([]);
  });

  test('a correct producer that commits two events of one type and subject per command, the same ids at each attempt: not named', () => {
    const twoOfOne = new Map([event('c-1', 'LineAdded', 'order-3'), event('c-2', 'LineAdded', 'order-3')]);
    const written = new Map([
      ['producer|2|1', ['c-1', 'c-2']],
      ['producer|2|2', ['c-1', 'c-2']],
    ]);
    expect(repeatedByAttempts('Shop/PlaceOrder', written, twoOfOne)).toEqual([]);
  });
});
