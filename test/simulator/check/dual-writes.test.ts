/** The producer side of the outbox: business changes against the outbox events, both ways. */
import { describe, expect, test } from 'vitest';
import { checkDualWrites } from '../../../simulator/check/dual-writes';
import { fixFor } from '../../../simulator/check/violation-cause';

const order = (id: number) => ({ subject: `order ${id}`, eventIds: [`placed-${id}`] });

describe('checkDualWrites', () => {
  test('passes when every change has its events and every event of the producer its change', () => {
    const outbox = new Set(['placed-1', 'placed-2', 'billed-1']);
    expect(checkDualWrites('Orders/PlaceOrder', [order(1), order(2)], outbox, new Set(['placed-1', 'placed-2']))).toEqual([]);
  });

  test('fails when a committed change has no event in the outbox, naming the change and the event', () => {
    expect(checkDualWrites('Orders/PlaceOrder', [order(1), order(2)], new Set(['placed-1']), new Set(['placed-1']))).toEqual([
      {
        kind: 'dual-write',
        detail: '1 event(s) of business changes the producer Orders/PlaceOrder committed are not in the outbox (the change committed without its event): order 2: event placed-2 missing',
        causes: [{ kind: 'change-and-event-written-apart', producer: 'Orders/PlaceOrder', eventIds: ['placed-2'], invocations: [], requests: [], fix: fixFor('change-and-event-written-apart') }],
      },
    ]);
  });

  test('fails when an event of the producer has no business change, and ignores the events of other writers', () => {
    const outbox = new Set(['placed-1', 'placed-9', 'billed-1']);
    expect(checkDualWrites('Orders/PlaceOrder', [order(1)], outbox, new Set(['placed-1', 'placed-9']))).toEqual([
      // an event without its change is as likely a retry's under a new id (command-committed-twice names those): no cause guessed
      { kind: 'dual-write', detail: '1 event(s) the producer Orders/PlaceOrder wrote are in the outbox without a business change that has them (the event committed without its change): placed-9' },
    ]);
  });

  test("an ordered event written for both paths brings its standard event (the derived id) into its change; a standard event without its ordered one is still an orphan", () => {
    const outbox = new Set(['placed-1', 'placed-1.standard', 'placed-9.standard']);
    expect(checkDualWrites('Orders/PlaceOrder', [order(1)], outbox, new Set(['placed-1', 'placed-1.standard', 'placed-9.standard']))).toEqual([
      // an event without its change is as likely a retry's under a new id (command-committed-twice names those): no cause guessed
      { kind: 'dual-write', detail: '1 event(s) the producer Orders/PlaceOrder wrote are in the outbox without a business change that has them (the event committed without its change): placed-9.standard' },
    ]);
  });

  test('names the first five gaps and counts the rest', () => {
    const changes = Array.from({ length: 7 }, (_, index) => order(index));
    const [violation] = checkDualWrites('Orders/PlaceOrder', changes, new Set(), new Set());
    expect(violation?.detail).toMatch(/^7 event\(s\) .*order 4: event placed-4 missing; and 2 more$/);
  });

  test('a missing event whose id ends with the subject of an event of the producer in the outbox under another id (a random id per attempt, a probe naming the derived id) names event-id-per-attempt on both violations', () => {
    const changes = [{ subject: 'order order-2', eventIds: ['order-placed-order-2'] }, { subject: 'order order-3', eventIds: ['order-placed-order-3'] }];
    const random = ['order-placed-7c3b', 'order-placed-13d7'];
    const eventsById = new Map([
      ['order-placed-7c3b', { id: 'order-placed-7c3b', type: 'OrderPlaced', subject: 'order-2' }],
      ['order-placed-13d7', { id: 'order-placed-13d7', type: 'OrderPlaced', subject: 'order-9' }],
    ]) as unknown as Parameters<typeof checkDualWrites>[4];
    const [missing, orphans] = checkDualWrites('Orders/PlaceOrder', changes, new Set(random), new Set(random), eventsById);
    const cause = { kind: 'event-id-per-attempt', producer: 'Orders/PlaceOrder', eventIds: ['order-placed-order-2', 'order-placed-7c3b'], invocations: [], requests: [], fix: fixFor('event-id-per-attempt') };
    expect(missing).toMatchObject({ kind: 'dual-write', causes: [cause] });
    expect(missing!.detail).toContain('1 of them is in the outbox under another id (order-placed-order-2 as order-placed-7c3b: OrderPlaced of order-2)');
    expect(missing!.detail).toContain(fixFor('event-id-per-attempt'));
    expect(orphans).toMatchObject({ kind: 'dual-write', causes: [cause] });
  });

  test('a change with two events, one missing and the other under a random id: the missing id is paired with the orphan of its own type, and the orphan, committed once, is not called a repeat (review r17, R17-8)', () => {
    // GIVEN the probe expects payment-requested-order-2 and order-placed-order-2; the producer wrote OrderPlaced as u-1 and never wrote PaymentRequested
    const changes = [{ subject: 'order-2', eventIds: ['payment-requested-order-2', 'order-placed-order-2'] }];
    const eventsById = new Map([['u-1', { id: 'u-1', type: 'OrderPlaced', subject: 'order-2' }]]) as unknown as Parameters<typeof checkDualWrites>[4];
    const [missing, orphans] = checkDualWrites('Orders/PlaceOrder', changes, new Set(['u-1']), new Set(['u-1']), eventsById);
    // THEN order-placed-order-2 (not payment-requested-order-2) is the one in the outbox as u-1
    expect(missing!.causes?.map((cause) => cause.eventIds)).toEqual([['order-placed-order-2', 'u-1']]);
    expect(missing!.detail).toContain('1 of them is in the outbox under another id (order-placed-order-2 as u-1: OrderPlaced of order-2)');
    // AND the orphan side says it is the change's event under another id than the probe's, not a repeat
    expect(orphans!.detail).not.toContain('repeat');
    expect(orphans!.detail).toContain('1 of them is a change\'s event under another id than the probe derives (u-1 as order-placed-order-2: OrderPlaced of order-2)');
  });

  test('two missing ids of one subject and one orphan of neither type: no pairing is guessed (review r17, R17-8)', () => {
    const changes = [{ subject: 'order-2', eventIds: ['payment-requested-order-2', 'order-placed-order-2'] }];
    const eventsById = new Map([['u-1', { id: 'u-1', type: 'Shipped', subject: 'order-2' }]]) as unknown as Parameters<typeof checkDualWrites>[4];
    const [missing, orphans] = checkDualWrites('Orders/PlaceOrder', changes, new Set(['u-1']), new Set(['u-1']), eventsById);
    expect(missing!.causes).toBeUndefined();
    expect(orphans!.causes).toBeUndefined();
  });
});
