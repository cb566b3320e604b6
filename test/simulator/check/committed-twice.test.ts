/** A producer the run drove commits each command once: a retry that commits again what a commit of the command had committed, under new ids, is named. */
import { describe, expect, test } from 'vitest';
import { checkCommittedTwice } from '../../../simulator/check/committed-twice';
import { fixFor } from '../../../simulator/check/violation-cause';
import type { OutboxRequest } from '../../../simulator/observation/outbox-writes';
import type { SimulatedEvent } from '../../../simulator/observation/run-facts';

const event = (id: string, type: string, subject: string, data: Record<string, unknown> = {}): [string, SimulatedEvent] => [id, { id, type, subject, data }];
const events = new Map([
  event('a-1', 'OrderPlaced', 'ord-x'),
  event('a-2', 'OrderPlaced', 'ord-y'),
  event('p-1', 'PaymentRequested', 'ord-x'),
  event('s-1', 'OrderShipped', 'order-1'),
  event('b-1', 'OrderPlaced', 'order-2'),
  // a command that reserves its lines, one transaction each, ids from the command
  event('reserved-order-2-a', 'LineReserved', 'order-2', { line: 'order-2-a' }),
  event('reserved-order-2-b', 'LineReserved', 'order-2', { line: 'order-2-b' }),
  event('reserved-order-2-c', 'LineReserved', 'order-2', { line: 'order-2-c' }),
  // a loop that retries its own write with a new order id: the same content under new ids
  event('r-1', 'OrderPlaced', 'ord-1', { orderId: 'ord-1', totalCents: 100 }),
  event('r-2', 'OrderPlaced', 'ord-2', { orderId: 'ord-2', totalCents: 100 }),
]);
const applied = (eventIds: string[], fault?: string): OutboxRequest => ({ operation: 'TransactWriteItems', tables: ['Orders', 'Outbox'], eventIds, applied: true, ...(fault === undefined ? {} : { fault }) });
const refused = (eventIds: string[]): OutboxRequest => ({ operation: 'TransactWriteItems', tables: ['Orders', 'Outbox'], eventIds, applied: false });

describe('checkCommittedTwice', () => {
  test('a later attempt commits the command again under a new id and a new subject: one violation naming the producer, the command (from 1), the attempts, the requests and the fix', () => {
    const requests = new Map([
      ['producer|3|1', [applied(['a-1'], 'lose-response')]],
      ['producer|3|2', [applied(['a-2'])]],
      ['producer|4|1', [applied(['b-1'])]],
    ]);
    const [finding, ...rest] = checkCommittedTwice('Shop/PlaceOrder', requests, events);
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({
      kind: 'command-committed-twice',
      causes: [
        {
          kind: 'event-id-per-attempt',
          producer: 'Shop/PlaceOrder',
          eventIds: ['a-1', 'a-2'],
          command: { number: 4, committedAt: 1, committedAgainAt: 2 },
          requests: [
            { operation: 'TransactWriteItems', tables: ['Orders', 'Outbox'], count: 1, fault: 'lose-response' },
            { operation: 'TransactWriteItems', tables: ['Orders', 'Outbox'], count: 1 },
          ],
          fix: fixFor('event-id-per-attempt'),
        },
      ],
    });
    expect(finding!.detail).toBe(
      'the producer Shop/PlaceOrder committed command #4 again at attempt 2 after attempt 1 had committed it: event a-2 (OrderPlaced of ord-y) repeats a-1. ' +
        'Its retry after a commit whose reply was lost (or after a crash that followed the commit) drew new ids, so the command committed a second time: ' +
        fixFor('event-id-per-attempt'),
    );
  });

  test('a correct producer: a retry that commits the same ids, or nothing; a command split over two transactions whose retry commits the second; invocations that are no attempt', () => {
    const requests = new Map([
      ['producer|0|1', [applied(['a-1'])]],
      ['producer|0|2', [applied(['a-1'])]],
      ['producer|1|1', [applied(['p-1'])]],
      ['producer|1|2', [applied(['s-1'])]],
      ['Mapping|m-1|1', [applied(['a-2'])]],
      ['producer|2|1', [applied(['b-1'])]],
    ]);
    expect(checkCommittedTwice('Shop/PlaceOrder', requests, events)).toEqual([]);
  });

  test('a command whose lines are transactions of one event type, ids from the command: the retry is refused for the line the crashed attempt committed and commits the lines it stopped before: not named', () => {
    const requests = new Map([
      ['producer|1|1', [applied(['reserved-order-2-a'], 'crash-after')]],
      ['producer|1|2', [refused(['reserved-order-2-a']), applied(['reserved-order-2-b']), applied(['reserved-order-2-c'])]],
    ]);
    expect(checkCommittedTwice('Shop/ReserveLines', requests, events)).toEqual([]);
  });

  test('the same lines, re-run in any order inside the retry (the refusal after the next line\'s commit): not named', () => {
    const requests = new Map([
      ['producer|1|1', [applied(['reserved-order-2-a'], 'crash-after')]],
      ['producer|1|2', [applied(['reserved-order-2-b']), refused(['reserved-order-2-a']), applied(['reserved-order-2-c'])]],
    ]);
    expect(checkCommittedTwice('Shop/ReserveLines', requests, events)).toEqual([]);
  });

  test('lines of one type whose retry re-runs the first line but draws a new id for the second it had committed: named, the second line', () => {
    const requests = new Map([
      ['producer|1|1', [applied(['reserved-order-2-a']), applied(['reserved-order-2-b'], 'crash-after')]],
      ['producer|1|2', [refused(['reserved-order-2-a']), applied(['reserved-order-2-c'])]],
    ]);
    const [finding] = checkCommittedTwice('Shop/ReserveLines', requests, events);
    expect(finding?.causes).toMatchObject([{ eventIds: ['reserved-order-2-b', 'reserved-order-2-c'], command: { number: 2, committedAt: 1, committedAgainAt: 2 } }]);
  });

  test('inside one attempt: a write whose reply was lost, retried by the producer with new ids and the same content: named "within attempt"', () => {
    const requests = new Map([['producer|0|1', [applied(['r-1'], 'lose-response'), applied(['r-2'])]]]);
    const [finding] = checkCommittedTwice('Shop/PlaceOrder', requests, events);
    expect(finding?.causes).toMatchObject([{ eventIds: ['r-1', 'r-2'], command: { number: 1, committedAt: 1, committedAgainAt: 1 } }]);
    expect(finding?.detail).toContain('committed command #1 again within attempt 1, after a write of that attempt whose reply was lost had committed it: event r-2 (OrderPlaced of ord-2) repeats r-1');
  });

  test('inside one attempt, not named: a batch\'s lines of one type (the first line\'s reply lost, retried with its own id, then the next line), a reply seen, and a retry that re-sends the lost write', () => {
    const requests = new Map([
      ['producer|0|1', [applied(['reserved-order-2-a'], 'lose-response'), refused(['reserved-order-2-a']), applied(['reserved-order-2-b'])]],
      ['producer|1|1', [applied(['reserved-order-2-a'], 'lose-response'), applied(['reserved-order-2-b']), applied(['reserved-order-2-c'])]],
      ['producer|2|1', [applied(['r-1']), applied(['r-2'])]],
      ['producer|3|1', [applied(['r-1'], 'lose-response'), refused(['r-1']), applied(['r-2'])]],
    ]);
    expect(checkCommittedTwice('Shop/PlaceOrder', requests, events)).toEqual([]);
  });

  describe('review r17', () => {
    const lines = new Map([
      // three tickets of one order, written at once (Promise.all), ids from the command: the same content once the id and subject are left out
      event('issued-order-1-t0', 'TicketIssued', 'order-1-t0', { orderId: 'order-1-t0', totalCents: 100 }),
      event('issued-order-1-t1', 'TicketIssued', 'order-1-t1', { orderId: 'order-1-t1', totalCents: 100 }),
      event('issued-order-1-t2', 'TicketIssued', 'order-1-t2', { orderId: 'order-1-t2', totalCents: 100 }),
      event('issued-x-1', 'TicketIssued', 'x-1', { orderId: 'x-1', totalCents: 100 }),
      // lines reserved under random event ids, each line's item written with attribute_not_exists
      event('u-1', 'LineReserved', 'order-2', { line: 'a' }),
      event('u-3', 'LineReserved', 'order-2', { line: 'b' }),
      event('u-4', 'LineReserved', 'order-2', { line: 'c' }),
      event('o-1', 'OrderPlaced', 'order-3'),
      event('o-2', 'OrderPlaced', 'order-3'),
      event('audit-1', 'AuditLogged', 'order-3'),
    ]);
    const line = (key: string) => `Lines ${JSON.stringify({ pk: { S: key } })}`;

    test('R17-1: parallel writes of one command, ids from the command, the first reply lost and the SDK re-sending it after the others were answered: not named', () => {
      const requests = new Map([
        ['producer|0|1', [applied(['issued-order-1-t0'], 'lose-response'), applied(['issued-order-1-t1']), applied(['issued-order-1-t2']), refused(['issued-order-1-t0'])]],
        // the re-send comes in the next attempt (the process died before the SDK re-sent it)
        ['producer|1|1', [applied(['issued-order-1-t0'], 'lose-response'), applied(['issued-order-1-t1'], 'crash-after')]],
        ['producer|1|2', [refused(['issued-order-1-t0']), refused(['issued-order-1-t1']), applied(['issued-order-1-t2'])]],
      ]);
      expect(checkCommittedTwice('Shop/IssueTickets', requests, lines)).toEqual([]);
    });

    test('R17-1: the same parallel writes where nothing ever re-sends the lost write, and a new id commits its content: named', () => {
      const requests = new Map([['producer|0|1', [applied(['issued-order-1-t0'], 'lose-response'), applied(['issued-order-1-t1']), applied(['issued-x-1'])]]]);
      const [finding] = checkCommittedTwice('Shop/IssueTickets', requests, lines);
      expect(finding?.causes).toMatchObject([{ eventIds: ['issued-order-1-t0', expect.any(String)], command: { number: 1, committedAt: 1, committedAgainAt: 1 } }]);
    });

    test('R17-2: a line re-run under a new event id, refused by the condition on the line\'s own item, then the lines the crashed attempt stopped before: not named', () => {
      const requests = new Map([
        ['producer|0|1', [{ ...applied(['u-1'], 'crash-after'), items: [line('order-2-a')] }]],
        ['producer|0|2', [{ ...refused(['u-2']), items: [line('order-2-a')], refusedItems: [line('order-2-a')] }, { ...applied(['u-3']), items: [line('order-2-b')] }, { ...applied(['u-4']), items: [line('order-2-c')] }]],
      ]);
      expect(checkCommittedTwice('Shop/ReserveLines', requests, lines)).toEqual([]);
    });

    test('R17-2: named all the same when the refusal was not the line item\'s condition (a conflict, another item\'s condition) or the line was written again', () => {
      const attempt1: [string, OutboxRequest[]] = ['producer|0|1', [{ ...applied(['u-1'], 'crash-after'), items: [line('order-2-a')] }]];
      const conflict = new Map<string, OutboxRequest[]>([attempt1, ['producer|0|2', [{ ...refused(['u-2']), items: [line('order-2-a')] }, { ...applied(['u-3']), items: [line('order-2-b')] }]]]);
      const otherItem = new Map<string, OutboxRequest[]>([attempt1, ['producer|0|2', [{ ...refused(['u-2']), items: [line('order-2-a'), line('stock')], refusedItems: [line('stock')] }, { ...applied(['u-3']), items: [line('order-2-b')] }]]]);
      for (const requests of [conflict, otherItem]) {
        expect(checkCommittedTwice('Shop/ReserveLines', requests, lines)[0]?.causes).toMatchObject([{ eventIds: ['u-1', 'u-3'], command: { number: 1, committedAt: 1, committedAgainAt: 2 } }]);
      }
    });

    test('R17-9: a retry that commits the command again plus one more event (types OrderPlaced + AuditLogged after OrderPlaced): named', () => {
      const requests = new Map([
        ['producer|0|1', [applied(['o-1'], 'crash-after')]],
        ['producer|0|2', [applied(['o-2', 'audit-1'])]],
      ]);
      const [finding] = checkCommittedTwice('Shop/PlaceOrder', requests, lines);
      expect(finding?.causes).toMatchObject([{ eventIds: ['o-1', 'o-2'], command: { number: 1, committedAt: 1, committedAgainAt: 2 } }]);
    });
  });

  describe('review r17b', () => {
    const account = 'Accounts {"pk":"acct-1"}';
    const counter = 'Inventory {"pk":"sku-1"}';
    const deposits = new Map([
      event('d-1', 'Deposited', 'acct-1', { cents: 100 }),
      event('d-2', 'Deposited', 'acct-1', { cents: 100 }),
      event('d-3', 'Deposited', 'acct-1', { cents: 100 }),
      event('la-1', 'LineReserved', 'order-1', { line: 'a' }),
      event('lb-1', 'LineReserved', 'order-1', { line: 'b' }),
      event('la-2', 'LineReserved', 'order-1', { line: 'a' }),
      event('lb-2', 'LineReserved', 'order-1', { line: 'b' }),
      event('lc-2', 'LineReserved', 'order-1', { line: 'c' }),
      // lines added to one order item, ids from the command: one type, one item, the data tells them apart
      event('added-order-1-a', 'LineAdded', 'order-1', { line: 'a' }),
      event('added-order-1-b', 'LineAdded', 'order-1', { line: 'b' }),
    ]);
    const commit = (eventIds: string[], items: string[], fault?: string): OutboxRequest => ({ ...applied(eventIds, fault), ...(items.length === 0 ? {} : { items }) });
    const refusal = (eventIds: string[], items: string[], refusedItems: string[]): OutboxRequest => ({ ...refused(eventIds), ...(items.length === 0 ? {} : { items }), ...(refusedItems.length === 0 ? {} : { refusedItems }) });
    const lineItem = (line: string) => `Lines {"pk":"order-1-${line}"}`;

    test('R17B-1: a version (If-Match) refusal on the account the crashed attempt wrote, then a re-read and a commit of the same account and type under a new id: named', () => {
      const requests = new Map([
        ['producer|0|1', [commit(['d-1'], [account], 'crash-after')]],
        ['producer|0|2', [refusal(['d-2'], [account], [account]), commit(['d-3'], [account])]],
      ]);
      const [finding] = checkCommittedTwice('Bank/Deposit', requests, deposits);
      expect(finding?.causes).toMatchObject([{ eventIds: ['d-1', 'd-3'], command: { number: 1, committedAt: 1, committedAgainAt: 2 } }]);
    });

    test('R17B-1: the same inside one attempt (the reply lost, the loop\'s retry refused by the version, re-read, committed): named "within attempt"', () => {
      const requests = new Map([['producer|0|1', [commit(['d-1'], [account], 'lose-response'), refusal(['d-2'], [account], [account]), commit(['d-3'], [account])]]]);
      const [finding] = checkCommittedTwice('Bank/Deposit', requests, deposits);
      expect(finding?.causes).toMatchObject([{ eventIds: ['d-1', 'd-3'], command: { number: 1, committedAt: 1, committedAgainAt: 1 } }]);
    });

    test('R17B-1: the reply lost, the SDK\'s re-send refused (same ids), then the loop\'s retry under a new id commits the same account, or the same event when no business item: named', () => {
      const withItem = new Map([['producer|0|1', [commit(['d-1'], [account], 'lose-response'), refusal(['d-1'], [account], [account]), commit(['d-3'], [account])]]]);
      const eventsOnly = new Map([['producer|0|1', [commit(['d-1'], [], 'lose-response'), refusal(['d-1'], [], []), commit(['d-3'], [])]]]);
      for (const requests of [withItem, eventsOnly]) {
        expect(checkCommittedTwice('Bank/Deposit', requests, deposits)[0]?.causes).toMatchObject([{ eventIds: ['d-1', 'd-3'], command: { number: 1, committedAt: 1, committedAgainAt: 1 } }]);
      }
    });

    test('R17B-1: a refusal on an item two lines wrote (a shared counter) excuses neither: the retry that commits line b again under a new id is named, with line b\'s first commit', () => {
      const requests = new Map([
        ['producer|0|1', [commit(['la-1'], [counter]), commit(['lb-1'], [counter], 'crash-after')]],
        ['producer|0|2', [refusal(['la-2'], [counter], [counter]), commit(['lb-2'], [counter])]],
      ]);
      const [finding] = checkCommittedTwice('Shop/Reserve', requests, deposits);
      expect(finding?.causes).toMatchObject([{ eventIds: ['lb-1', 'lb-2'], command: { number: 1, committedAt: 1, committedAgainAt: 2 } }]);
    });

    test('R17B-1: lines drawn per attempt (a random line key) that also write a shared counter, a refusal on the counter: it excuses neither line, the retry that commits line b again is named', () => {
      const requests = new Map([
        ['producer|0|1', [commit(['la-1'], [lineItem('r1'), counter]), commit(['lb-1'], [lineItem('r2'), counter], 'crash-after')]],
        ['producer|0|2', [refusal(['la-2'], [lineItem('r3'), counter], [counter]), commit(['lb-2'], [lineItem('r4'), counter])]],
      ]);
      const [finding] = checkCommittedTwice('Shop/Reserve', requests, deposits);
      expect(finding?.causes).toMatchObject([{ eventIds: ['lb-1', 'lb-2'], command: { number: 1, committedAt: 1, committedAgainAt: 2 } }]);
    });

    test('R17B-1, not named: lines under random ids, each refused by its own line item, the next line writing its own item and a shared counter; lines added to one item with ids from the command, re-sent and refused, then the next line', () => {
      const ownLines = new Map([
        ['producer|0|1', [commit(['la-1'], [lineItem('a'), counter], 'crash-after')]],
        ['producer|0|2', [refusal(['la-2'], [lineItem('a'), counter], [lineItem('a')]), commit(['lb-2'], [lineItem('b'), counter]), commit(['lc-2'], [lineItem('c'), counter])]],
      ]);
      const order = 'Orders {"pk":"order-1"}';
      const addedAcross = new Map([
        ['producer|0|1', [commit(['added-order-1-a'], [order], 'crash-after')]],
        ['producer|0|2', [refusal(['added-order-1-a'], [order], [order]), commit(['added-order-1-b'], [order])]],
      ]);
      const addedWithin = new Map([['producer|0|1', [commit(['added-order-1-a'], [order], 'lose-response'), refusal(['added-order-1-a'], [order], [order]), commit(['added-order-1-b'], [order])]]]);
      for (const requests of [ownLines, addedAcross, addedWithin]) expect(checkCommittedTwice('Shop/Reserve', requests, deposits)).toEqual([]);
    });
  });

  describe('review r18a', () => {
    const account = 'Accounts {"pk":"acct-1"}';
    const row = (id: string) => `Accounts {"pk":"ROW#${id}"}`;
    const order = 'Orders {"pk":"ord-1"}';
    const counter = 'Inventory {"pk":"sku-1"}';
    const facts = new Map([
      event('d-1', 'Deposited', 'acct-1', { cents: 100 }),
      event('d-2', 'Deposited', 'acct-1', { cents: 100 }),
      event('d-3', 'Deposited', 'acct-1', { cents: 100 }),
      // a state machine under random event ids, each transition conditional on the order's status
      event('s-1', 'OrderStatusChanged', 'ord-1', { status: 'PLACED' }),
      event('s-2', 'OrderStatusChanged', 'ord-1', { status: 'PLACED' }),
      event('s-3', 'OrderStatusChanged', 'ord-1', { status: 'CONFIRMED' }),
      // lines of one shape (the data names the sku, not the line), each on its own line item, random event ids
      event('la-1', 'LineReserved', 'order-1', { sku: 'sku-1' }),
      event('la-2', 'LineReserved', 'order-1', { sku: 'sku-1' }),
      event('lb-2', 'LineReserved', 'order-1', { sku: 'sku-1' }),
      event('lb-1', 'LineReserved', 'order-1', { sku: 'sku-1' }),
      // two identical lines added to one order item, ids from the command
      event('added-order-1-0', 'LineAdded', 'order-1', { sku: 'sku-1' }),
      event('added-order-1-1', 'LineAdded', 'order-1', { sku: 'sku-1' }),
    ]);
    const commit = (eventIds: string[], items: string[], fault?: string): OutboxRequest => ({ ...applied(eventIds, fault), items });
    const refusal = (eventIds: string[], items: string[], refusedItems: string[]): OutboxRequest => ({ ...refused(eventIds), items, refusedItems });
    const lineItem = (line: string) => `Lines {"pk":"order-1-${line}"}`;

    test('R18A-1: a version (If-Match) refusal on the account, then a re-read and a deposit again whose transaction also puts a ledger row under a random id: named', () => {
      const requests = new Map([
        ['producer|0|1', [commit(['d-1'], [account, row('r1')], 'lose-response')]],
        ['producer|0|2', [refusal(['d-2'], [account, row('r2')], [account]), commit(['d-3'], [account, row('r3')])]],
      ]);
      const [finding, ...rest] = checkCommittedTwice('Bank/Deposit', requests, facts);
      expect(rest).toEqual([]);
      expect(finding?.causes).toMatchObject([{ eventIds: ['d-1', 'd-3'], command: { number: 1, committedAt: 1, committedAgainAt: 2 } }]);
    });

    test('R18A-1: the same inside one attempt, by the loop\'s retry under a new id or after the SDK\'s re-send (the ledger row refused too, by its attribute_not_exists): named "within attempt"', () => {
      const loop = new Map([['producer|0|1', [commit(['d-1'], [account, row('r1')], 'lose-response'), refusal(['d-2'], [account, row('r2')], [account]), commit(['d-3'], [account, row('r3')])]]]);
      const resend = new Map([['producer|0|1', [commit(['d-1'], [account, row('r1')], 'lose-response'), refusal(['d-1'], [account, row('r1')], [account, row('r1')]), commit(['d-3'], [account, row('r3')])]]]);
      for (const requests of [loop, resend]) {
        expect(checkCommittedTwice('Bank/Deposit', requests, facts)[0]?.causes).toMatchObject([{ eventIds: ['d-1', 'd-3'], command: { number: 1, committedAt: 1, committedAgainAt: 1 } }]);
      }
    });

    test('R18A-9, not named: two conditional transitions of one order (NEW->PLACED refused as done, then PLACED->CONFIRMED), random event ids, across attempts and inside one', () => {
      const across = new Map([
        ['producer|0|1', [commit(['s-1'], [order], 'lose-response')]],
        ['producer|0|2', [refusal(['s-2'], [order], [order]), commit(['s-3'], [order])]],
      ]);
      const within = new Map([['producer|0|1', [commit(['s-1'], [order], 'lose-response'), refusal(['s-2'], [order], [order]), commit(['s-3'], [order])]]]);
      for (const requests of [across, within]) expect(checkCommittedTwice('Shop/PlaceAndConfirm', requests, facts)).toEqual([]);
    });

    test('not named: lines of one shape under random ids, each on its own line item and a shared counter, the retry refused by the line it had reserved, then the next line', () => {
      const requests = new Map([
        ['producer|0|1', [commit(['la-1'], [lineItem('a'), counter], 'crash-after')]],
        ['producer|0|2', [refusal(['la-2'], [lineItem('a'), counter], [lineItem('a')]), commit(['lb-2'], [lineItem('b'), counter])]],
      ]);
      expect(checkCommittedTwice('Shop/Reserve', requests, facts)).toEqual([]);
    });

    test('a refusal on a shared counter that comes after the retry committed line b again (lines written in any order, line keys drawn per attempt): it excuses neither line, named', () => {
      const requests = new Map([
        ['producer|0|1', [commit(['la-1'], [lineItem('r1'), counter]), commit(['lb-1'], [lineItem('r2'), counter], 'crash-after')]],
        ['producer|0|2', [commit(['lb-2'], [lineItem('r4'), counter]), refusal(['la-2'], [lineItem('r3'), counter], [counter])]],
      ]);
      const [finding] = checkCommittedTwice('Shop/Reserve', requests, facts);
      // the two lines carry the same data: the repeat is paired with the first of them
      expect(finding?.causes).toMatchObject([{ eventIds: ['la-1', 'lb-2'], command: { number: 1, committedAt: 1, committedAgainAt: 2 } }]);
    });

    test('not named: two identical lines added to one order item, ids from the command, the retry re-sending the first (refused) and adding the second', () => {
      const requests = new Map([
        ['producer|0|1', [commit(['added-order-1-0'], [order], 'crash-after')]],
        ['producer|0|2', [refusal(['added-order-1-0'], [order], [order]), commit(['added-order-1-1'], [order])]],
      ]);
      expect(checkCommittedTwice('Shop/AddLines', requests, facts)).toEqual([]);
    });
  });
});
