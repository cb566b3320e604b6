/**
 * Issue 39 item 3: a violation carries its cause as fields (simulator/check/violation-cause.ts): the kind, the
 * subscriber, the events, the invocations, the requests, the setting and the fix. Unit level, from recorded requests
 * and invocations (the run-level tests are in test/simulator/run/planted-mistakes.int.test.ts).
 */
import { describe, expect, test } from 'vitest';
import { attributedRun as run } from './attribution-run';
import { checkDualWrites } from '../../../simulator/check/dual-writes';
import { OwnClientWrites } from '../../../simulator/check/own-client-writes';
import { fixFor } from '../../../simulator/check/violation-cause';
import type { SimulatedEvent } from '../../../simulator/observation/run-facts';

const inboxCommit = (eventId: string, token: string) => ({ TransactItems: [{ Update: { TableName: 'Ledger' } }, { Put: { TableName: 'Inbox', Item: { pk: { S: `Billing#${eventId}` }, writeToken: { S: token } } } }] });

describe('structured causes', () => {
  test('an expired deduplication window: the setting, its value, the delay the run needed, both invocations', () => {
    const flow = run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox', windowSeconds: 60 });
    flow.invoke([['e-1', 1]], [{ body: inboxCommit('e-1', 't1'), applied: true }]);
    flow.later(180);
    flow.invoke([['e-1', 2]], [{ body: inboxCommit('e-1', 't2'), applied: true }]);

    expect(flow.attribution.causes('Fn', ['e-1'])).toEqual([
      {
        kind: 'deduplication-window-expired',
        subscriber: 'Billing',
        eventIds: ['e-1'],
        invocations: [
          { number: 1, receive: 1, atSeconds: 0, role: 'applied' },
          { number: 2, receive: 2, atSeconds: 180, role: 'applied-again' },
        ],
        requests: [{ operation: 'TransactWriteItems', tables: ['Inbox', 'Ledger'], count: 2 }],
        setting: { name: 'IEF_DEDUPLICATION_WINDOW_SECONDS', value: 60, observedDelay: 180 },
        fix: fixFor('deduplication-window-expired'),
      },
    ]);
  });

  test('a non-idempotent ADD in a step re-run by an SDK retry after a lost response, within one invocation: named, with the request and its fault', () => {
    const flow = run({ subscriber: 'Counter', mode: 'multi-step', inboxTable: 'Inbox' });
    const add = { TableName: 'Counters', Key: { pk: { S: 'COUNTER#e-1' } }, UpdateExpression: 'ADD applied :one' };
    flow.invoke([['e-1', 1]], [
      { body: { TableName: 'Inbox', Key: { pk: { S: 'Counter#e-1' } } }, operation: 'UpdateItem', applied: true },
      { body: add, operation: 'UpdateItem', fault: 'lose-response', applied: true },
      { body: add, operation: 'UpdateItem', applied: true },
    ]);

    expect(flow.attribution.cause('Fn', ['e-1'])).toMatch(/^event e-1: applied twice by invocation #1 \(receive 1, at \+0 s\): its UpdateItem on Counters was applied by DynamoDB, its response lost, and the SDK's retry sent it again/);
    expect(flow.attribution.causes('Fn', ['e-1'])).toEqual([
      {
        kind: 'sdk-retry-after-lost-response',
        subscriber: 'Counter',
        eventIds: ['e-1'],
        invocations: [{ number: 1, receive: 1, atSeconds: 0, role: 'applied' }],
        requests: [
          { operation: 'UpdateItem', tables: ['Counters'], count: 1, fault: 'lose-response' },
          { operation: 'UpdateItem', tables: ['Counters'], count: 1 },
        ],
        fix: fixFor('sdk-retry-after-lost-response', 'multi-step'),
      },
    ]);
  });

  test('an ADD whose response was lost twice, each time resent by the SDK, is told applied 3 times by the invocation, not twice', () => {
    const flow = run({ subscriber: 'Counter', mode: 'multi-step', inboxTable: 'Inbox' });
    const add = { TableName: 'Counters', Key: { pk: { S: 'COUNTER#e-1' } }, UpdateExpression: 'ADD applied :one' };
    flow.invoke([['e-1', 1]], [
      { body: { TableName: 'Inbox', Key: { pk: { S: 'Counter#e-1' } } }, operation: 'UpdateItem', applied: true },
      { body: add, operation: 'UpdateItem', fault: 'lose-response', applied: true },
      { body: add, operation: 'UpdateItem', fault: 'lose-response', applied: true },
      { body: add, operation: 'UpdateItem', applied: true },
    ]);

    expect(flow.attribution.cause('Fn', ['e-1'])).toMatch(/^event e-1: applied 3 times by invocation #1 \(receive 1, at \+0 s\): its UpdateItem on Counters was applied by DynamoDB, its response lost 2 times, and the SDK's retry sent it again each time/);
  });

  test('a one-time effect told by nothing the run shows has no cause (no guess)', () => {
    const flow = run({ subscriber: 'Counter', mode: 'multi-step', inboxTable: 'Inbox' });
    flow.invoke([['e-1', 1]], [{ body: { TableName: 'Counters', Key: { pk: { S: 'COUNTER#e-1' } } }, operation: 'UpdateItem', applied: true }]);

    expect(flow.attribution.causes('Fn', ['e-1'])).toEqual([]);
  });

  test('own-client writes: an outbox write outside the transaction is told from a plain write outside it', () => {
    const writes = new OwnClientWrites();
    writes.watch('Billing', 'Inbox', 'Outbox');
    writes.onRequest('Billing', 'TransactWriteItems', JSON.stringify({ TransactItems: [{ Put: { TableName: 'Outbox' } }] }));
    writes.watch('Other', 'Inbox');
    writes.onRequest('Other', 'UpdateItem', JSON.stringify({ TableName: 'Ledger' }));

    expect(writes.causeOf('Billing', 'Billing', ['e-1'])).toEqual({
      kind: 'outbox-write-outside-transaction',
      subscriber: 'Billing',
      eventIds: ['e-1'],
      invocations: [],
      requests: [{ operation: 'TransactWriteItems', tables: ['Outbox'], count: 1 }],
      fix: fixFor('outbox-write-outside-transaction'),
    });
    expect(writes.causeOf('Other', 'Other', ['e-2'])?.kind).toBe('write-outside-transaction');
    expect(writes.causeOf('Unwritten', 'Unwritten', ['e-3'])).toBeUndefined();
  });

  test('dual-write: an event without its change that repeats the type and subject of a claimed one is one command committed under two ids', () => {
    const event = (id: string, subject: string): [string, SimulatedEvent] => [id, { id, type: 'OrderPlaced', subject, data: {} }];
    const eventsById = new Map([event('uuid-a', 'order-1'), event('uuid-b', 'order-1'), event('uuid-c', 'order-2'), event('stray', 'order-9')]);

    const [violation] = checkDualWrites(
      'Orders/PlaceOrder',
      [
        { subject: 'order order-1', eventIds: ['uuid-b'] },
        { subject: 'order order-2', eventIds: ['uuid-c'] },
      ],
      new Set(eventsById.keys()),
      new Set(eventsById.keys()),
      eventsById,
    );

    expect(violation?.detail).toMatch(/^2 event\(s\) the producer Orders\/PlaceOrder wrote are in the outbox without a business change that has them .*: uuid-a; stray; 1 of them repeat a command committed under another id \(uuid-a and uuid-b: OrderPlaced of order-1\): the producer draws a new event id on each attempt/);
    expect(violation?.causes).toEqual([{ kind: 'event-id-per-attempt', producer: 'Orders/PlaceOrder', eventIds: ['uuid-b', 'uuid-a'], invocations: [], requests: [], fix: fixFor('event-id-per-attempt') }]);
  });
});
