import { describe, expect, test } from 'vitest';
import { callsOutsideLease, leaseCallsText, type CallOutsideLease, type RuntimeWrite } from '../../../simulator/check/outside-calls';

/** A claim's Put (the lease held) and a completion (the lease removed), as the runtime sends them. */
const put = JSON.stringify({ TableName: 'Inbox', Item: { pk: { S: 'Receipts#x' }, leaseExpiresAtEpochMilliseconds: { N: '10000000000000' } } });
const complete = JSON.stringify({
  TableName: 'Inbox',
  UpdateExpression: 'SET #s0 = :s0 REMOVE #r0',
  ExpressionAttributeNames: { '#s0': 'status', '#r0': 'leaseExpiresAtEpochMilliseconds' },
  ExpressionAttributeValues: { ':s0': { S: 'COMPLETED' } },
});
const write = (eventId: string, sequence: number, body: string, applied = true): RuntimeWrite => ({ eventId, sequence, applied, body });
const call = (path: string, afterRequest: number, query?: string[]) => ({ method: 'POST', host: '127.0.0.1:9', path, afterRequest, ...(query === undefined ? {} : { query }) });
const carried = ['evt-A', 'evt-B'];
const subjects = new Map([
  ['evt-A', '2'],
  ['evt-B', '3'],
]);

describe('callsOutsideLease judges a call by the events it was made for (review r16b)', () => {
  test("a call for B made while A's lease is held, B's claim refused, is outside B's lease (R16B-2)", () => {
    const outside = callsOutsideLease([call('/receipts/evt-B', 2)], [write('evt-A', 1, put), write('evt-B', 2, put, false)], carried, subjects);
    expect(outside.map(({ eventIds, when, shared }) => ({ eventIds, when, shared }))).toEqual([{ eventIds: ['evt-B'], when: 'after-lease', shared: false }]);
  });

  test("a batch call that names no event, made while A holds its lease and B does not: unattributed, for B alone; never outside", () => {
    // it may be A's handle calling inside A's lease, or a call outside B's: the run cannot place it
    const unplaced = callsOutsideLease([call('/receipts', 1)], [write('evt-A', 1, put)], carried, subjects);
    expect(unplaced.map(({ eventIds, unattributed }) => ({ eventIds, unattributed }))).toEqual([{ eventIds: ['evt-B'], unattributed: true }]);
  });

  test('a batch call that names no event, made while every carried event holds its lease, is inside', () => {
    expect(callsOutsideLease([call('/receipts', 2)], [write('evt-A', 1, put), write('evt-B', 2, put)], carried, subjects)).toEqual([]);
  });

  test("a call for B made before B's claim, after A completed, is before B's claim (R16B-3)", () => {
    const outside = callsOutsideLease([call('/receipts/evt-B', 2)], [write('evt-A', 1, put), write('evt-A', 2, complete)], carried, subjects);
    expect(outside.map(({ eventIds, when }) => ({ eventIds, when }))).toEqual([{ eventIds: ['evt-B'], when: 'before-claim' }]);
  });

  test('an id or subject counts as named only as a whole path segment or query value (R16B-4)', () => {
    // subject "2" is not named by /v2/receipts: the call is the batch's
    expect(callsOutsideLease([call('/v2/receipts', 0)], [], carried, subjects).map(({ eventIds, shared }) => ({ eventIds, shared }))).toEqual([{ eventIds: carried, shared: true }]);
    expect(callsOutsideLease([call('/api/142', 0)], [], carried, new Map([['evt-A', '42']]))[0]!.shared).toBe(true);
    // a whole segment, with or without an extension, names it; evt-1 is not named by evt-10
    expect(callsOutsideLease([call('/customers/2/receipts', 0)], [], carried, subjects)[0]!.eventIds).toEqual(['evt-A']);
    expect(callsOutsideLease([call('/receipts/evt-1.json', 0)], [], ['evt-1', 'evt-10'], new Map())[0]!.eventIds).toEqual(['evt-1']);
    // a query value names it too
    expect(callsOutsideLease([call('/receipts', 0, ['evt-B'])], [], carried, subjects)[0]!.eventIds).toEqual(['evt-B']);
  });

  test('a read (GET, HEAD, OPTIONS) applies nothing: never counted as an effect outside the lease (R16B-1)', () => {
    for (const method of ['GET', 'HEAD', 'OPTIONS']) expect(callsOutsideLease([{ ...call('/flags', 0), method }], [], carried, subjects), method).toEqual([]);
    expect(callsOutsideLease([{ ...call('/flags', 0), method: 'PUT' }], [], carried, subjects)).toHaveLength(1);
  });
});

describe('leaseCallsText never makes a call it cannot place the cause', () => {
  const outside = (invocation: string, unattributed = false, leased = false): { invocation: string; call: CallOutsideLease; leased: boolean } => ({
    invocation,
    call: { call: call('/receipts', 0), when: 'after-lease', eventIds: ['evt-B'], shared: false, ...(unattributed ? { unattributed } : {}) },
    leased,
  });

  test("calls repeated only unattributed (a batch's call naming no event, made while another event held its lease): no cause", () => {
    // a correct handle of A calls /receipts inside A's lease in two deliveries whose claim of B was refused
    expect(leaseCallsText([outside('invocation #2', true), outside('invocation #5', true)], false)).toBeUndefined();
  });

  test('a site repeated outside the lease is told with its unattributed calls beside it, which its counts leave out', () => {
    const told = leaseCallsText([outside('invocation #2'), outside('invocation #5', true), outside('invocation #9')], false);

    expect(told?.text).toBe(
      'POST 127.0.0.1:9/receipts was called outside the lease by invocation #2 and again by invocation #9, each time after the lease ended (completed, released or refused); ' +
        '1 more call(s) of it the run cannot place, by invocation #5 (it names no event, and another event of its batch held its lease then)',
    );
    expect(told?.calls).toEqual([{ method: 'POST', host: '127.0.0.1:9', path: '/receipts', count: 2, when: 'after-lease' }]);
    expect(told?.made).toEqual([{ index: 0 }, { index: 2 }]);
  });
});
