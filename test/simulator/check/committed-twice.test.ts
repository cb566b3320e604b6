/** A producer the run drove commits each command once: a later attempt that commits an earlier attempt's transaction again under new ids is named. */
import { describe, expect, test } from 'vitest';
import { checkCommittedTwice } from '../../../simulator/check/committed-twice';
import { fixFor } from '../../../simulator/check/violation-cause';
import type { SimulatedEvent } from '../../../simulator/observation/run-facts';

const event = (id: string, type: string, subject: string): [string, SimulatedEvent] => [id, { id, type, subject, data: {} }];
const events = new Map([
  event('a-1', 'OrderPlaced', 'ord-x'),
  event('a-2', 'OrderPlaced', 'ord-y'),
  event('p-1', 'PaymentRequested', 'ord-x'),
  event('s-1', 'OrderShipped', 'order-1'),
  event('b-1', 'OrderPlaced', 'order-2'),
]);

describe('checkCommittedTwice', () => {
  test('a later attempt commits the command again under a new id and a new subject: one violation naming the producer, the command, the attempts and the fix', () => {
    const transactions = new Map([
      ['producer|3|1', [['a-1']]],
      ['producer|3|2', [['a-2']]],
      ['producer|4|1', [['b-1']]],
    ]);
    const [finding, ...rest] = checkCommittedTwice('Shop/PlaceOrder', transactions, events);
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({ kind: 'command-committed-twice', causes: [{ kind: 'event-id-per-attempt', producer: 'Shop/PlaceOrder', eventIds: ['a-1', 'a-2'], fix: fixFor('event-id-per-attempt') }] });
    expect(finding!.detail).toBe(
      'the producer Shop/PlaceOrder committed command #3 again at attempt 2 after attempt 1 had committed it: event a-2 (OrderPlaced of ord-y) repeats a-1. ' +
        'Its retry after a commit whose reply was lost (or after a crash that followed the commit) drew new ids, so the command committed a second time: ' +
        fixFor('event-id-per-attempt'),
    );
  });

  test('a correct producer: a retry that commits the same ids, or nothing; a command split over two transactions whose retry commits the second; invocations that are no attempt', () => {
    const transactions = new Map([
      ['producer|0|1', [['a-1']]],
      ['producer|0|2', [['a-1']]],
      ['producer|1|1', [['p-1']]],
      ['producer|1|2', [['s-1']]],
      ['Mapping|m-1|1', [['a-2']]],
      ['producer|2|1', [['b-1']]],
    ]);
    expect(checkCommittedTwice('Shop/PlaceOrder', transactions, events)).toEqual([]);
  });
});
