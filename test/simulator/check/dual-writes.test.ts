/** The producer side of the outbox: business changes against the outbox events, both ways. */
import { describe, expect, test } from 'vitest';
import { checkDualWrites } from '../../../simulator/check/dual-writes';

const order = (id: number) => ({ subject: `order ${id}`, eventIds: [`placed-${id}`] });

describe('checkDualWrites', () => {
  test('passes when every change has its events and every event of the producer its change', () => {
    const outbox = new Set(['placed-1', 'placed-2', 'billed-1']);
    expect(checkDualWrites('Orders/PlaceOrder', [order(1), order(2)], outbox, new Set(['placed-1', 'placed-2']))).toEqual([]);
  });

  test('fails when a committed change has no event in the outbox, naming the change and the event', () => {
    expect(checkDualWrites('Orders/PlaceOrder', [order(1), order(2)], new Set(['placed-1']), new Set(['placed-1']))).toEqual([
      { kind: 'dual-write', detail: '1 event(s) of business changes the producer Orders/PlaceOrder committed are not in the outbox (the change committed without its event): order 2: event placed-2 missing' },
    ]);
  });

  test('fails when an event of the producer has no business change, and ignores the events of other writers', () => {
    const outbox = new Set(['placed-1', 'placed-9', 'billed-1']);
    expect(checkDualWrites('Orders/PlaceOrder', [order(1)], outbox, new Set(['placed-1', 'placed-9']))).toEqual([
      { kind: 'dual-write', detail: '1 event(s) the producer Orders/PlaceOrder wrote are in the outbox without a business change that has them (the event committed without its change): placed-9' },
    ]);
  });

  test("an ordered event written for both paths brings its standard event (the derived id) into its change; a standard event without its ordered one is still an orphan", () => {
    const outbox = new Set(['placed-1', 'placed-1.standard', 'placed-9.standard']);
    expect(checkDualWrites('Orders/PlaceOrder', [order(1)], outbox, new Set(['placed-1', 'placed-1.standard', 'placed-9.standard']))).toEqual([
      { kind: 'dual-write', detail: '1 event(s) the producer Orders/PlaceOrder wrote are in the outbox without a business change that has them (the event committed without its change): placed-9.standard' },
    ]);
  });

  test('names the first five gaps and counts the rest', () => {
    const changes = Array.from({ length: 7 }, (_, index) => order(index));
    const [violation] = checkDualWrites('Orders/PlaceOrder', changes, new Set(), new Set());
    expect(violation?.detail).toMatch(/^7 event\(s\) .*order 4: event placed-4 missing; and 2 more$/);
  });
});
