/**
 * A consumer commits each follow-up of an event it received once: one whose outbox write is outside its inbox
 * transaction (an outbox write of its own, a new id each run, instead of `tx.emit`) and that commits a follow-up again
 * at a redelivery is named at that subscriber, with no probe (new-user trial NU18-1).
 */
import { describe, expect, test } from 'vitest';
import { checkFollowUpsCommittedTwice } from '../../../simulator/check/follow-ups-committed-twice';
import { fixFor } from '../../../simulator/check/violation-cause';
import { attributedRun as run } from './attribution-run';

let commits = 0;
/** A transactional commit: the handler's staged actions, then the runtime's inbox record. */
function commit(eventId: string, ...actions: object[]): object {
  commits += 1;
  return { TransactItems: [...actions, { Put: { TableName: 'Inbox', Item: { pk: { S: `Billing#${eventId}` }, writeToken: { S: `token-${commits}` } } } }] };
}
/** An outbox item as `Outbox` and `tx.emit` put it. */
const outboxPut = (eventId: string, condition = false) => ({ Put: { TableName: 'Outbox', Item: { pk: { S: `OUTBOX#${eventId}` }, iefEventId: { S: eventId } }, ...(condition ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}) } });
/** A second outbox transaction of the handler's own (`outbox.transactWrite`). */
const ownWrite = (applied: boolean, ...eventIds: string[]) => ({ body: { TransactItems: eventIds.map((eventId) => outboxPut(eventId)) }, applied });
const TYPES: Record<string, string> = { 'billed-a': 'OrderBilled', 'billed-b': 'OrderBilled', 'billed-c': 'OrderBilled', 'billed-d': 'OrderBilled', 'receipt-a': 'ReceiptIssued', 'billed-x': 'OrderBilled', 'billed-y': 'OrderBilled' };
const typeOf = (eventId: string): string | undefined => TYPES[eventId];
const billing = () => run({ subscriber: 'Billing', mode: 'transactional', inboxTable: 'Inbox', outboxTable: 'Outbox' });

describe('checkFollowUpsCommittedTwice', () => {
  test('an outbox write of its own before a refused commit, then the redelivery writes again under a new id and commits: one violation at Billing, the received event, both follow-ups, the invocations and the fix', () => {
    const flow = billing();
    flow.invoke([['o-1', 1]], [ownWrite(true, 'billed-a'), { body: commit('o-1', { Update: { TableName: 'Ledger' } }), fault: 'conflict', applied: false }]);
    flow.later(180);
    flow.invoke([['o-1', 2]], [ownWrite(true, 'billed-b'), { body: commit('o-1', { Update: { TableName: 'Ledger' } }), applied: true }]);
    // another order, billed once
    flow.invoke([['o-2', 1]], [ownWrite(true, 'billed-c'), { body: commit('o-2'), applied: true }]);

    const [finding, ...rest] = checkFollowUpsCommittedTwice('Billing', flow.attribution.followUps('Fn'), typeOf);
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({
      kind: 'follow-up-committed-twice',
      subscriber: 'Billing',
      causes: [
        {
          kind: 'outbox-write-outside-transaction',
          subscriber: 'Billing',
          receivedEventId: 'o-1',
          eventIds: ['billed-a', 'billed-b'],
          invocations: [
            { number: 1, receive: 1, atSeconds: 0, role: 'applied' },
            { number: 2, receive: 2, atSeconds: 180, role: 'applied-again' },
          ],
          requests: [{ operation: 'TransactWriteItems', tables: ['Outbox'], count: 2 }],
          fix: fixFor('outbox-write-outside-transaction'),
        },
      ],
    });
    expect(finding!.detail).toBe(
      'the subscriber Billing committed the follow-up of 1 received event(s) again under a new id: event o-1, received by invocation #1 (receive 1, at +0 s) and again by invocation #2 (receive 2, at +180 s): OrderBilled billed-a, then billed-b. ' +
        'Its outbox write is outside its inbox transaction, so a run of the handler whose commit was refused, or that crashed or met a lost response, still committed its follow-up, and the redelivery committed it again as a new event each subscriber applies: ' +
        fixFor('outbox-write-outside-transaction'),
    );
  });

  test('a crash after the outbox write of its own: the redelivery commits the follow-up again (the same invocation numbers as the run tells them)', () => {
    const flow = billing();
    flow.invoke([['o-1', 1]], [ownWrite(true, 'billed-a'), { body: commit('o-1'), fault: 'crash-before', applied: false }], { kind: 'crashed', atRequest: 2, afterCommit: false });
    flow.later(180);
    flow.invoke([['o-1', 2]], [ownWrite(true, 'billed-b'), { body: commit('o-1'), applied: true }]);
    const [finding] = checkFollowUpsCommittedTwice('Billing', flow.attribution.followUps('Fn'), typeOf);
    expect(finding?.causes?.map((cause) => [cause.receivedEventId, cause.eventIds])).toEqual([['o-1', ['billed-a', 'billed-b']]]);
  });

  test('a correct consumer: tx.emit in the commit, a refused commit and its redelivery commit the follow-up once; a redelivery after the commit writes nothing', () => {
    const flow = billing();
    flow.invoke([['o-1', 1]], [{ body: commit('o-1', outboxPut('billed-a')), fault: 'conflict', applied: false }]);
    flow.later(180);
    flow.invoke([['o-1', 2]], [{ body: commit('o-1', outboxPut('billed-b')), applied: true }]);
    flow.invoke([['o-2', 1]], [{ body: commit('o-2', outboxPut('billed-c')), fault: 'lose-response', applied: true }]);
    flow.later(180);
    flow.invoke([['o-2', 2]], []);
    expect(checkFollowUpsCommittedTwice('Billing', flow.attribution.followUps('Fn'), typeOf)).toEqual([]);
  });

  test('a follow-up written with a deterministic id and a condition before the commit: the second write is refused, nothing is committed twice', () => {
    const flow = billing();
    const conditioned = (applied: boolean) => ({ body: { TransactItems: [outboxPut('billed-x', true)] }, applied });
    flow.invoke([['o-1', 1]], [conditioned(true), { body: commit('o-1'), fault: 'conflict', applied: false }]);
    flow.later(180);
    flow.invoke([['o-1', 2]], [conditioned(false), { body: commit('o-1'), applied: true }]);
    expect(checkFollowUpsCommittedTwice('Billing', flow.attribution.followUps('Fn'), typeOf)).toEqual([]);
  });

  test('an outbox write of its own that DynamoDB never applied (the process crashed before it), then the redelivery\'s, applied: the follow-up committed once', () => {
    const flow = billing();
    flow.invoke([['o-1', 1]], [{ ...ownWrite(false, 'billed-a'), fault: 'crash-before' }], { kind: 'crashed', atRequest: 1, afterCommit: false });
    flow.later(180);
    flow.invoke([['o-1', 2]], [ownWrite(true, 'billed-b'), { body: commit('o-1'), applied: true }]);
    expect(checkFollowUpsCommittedTwice('Billing', flow.attribution.followUps('Fn'), typeOf)).toEqual([]);
  });

  test('one follow-up of each of two types, two events of one type in one write, and one id written twice (the same event, overwritten): none is a follow-up committed twice', () => {
    const flow = billing();
    flow.invoke([['o-1', 1]], [ownWrite(true, 'billed-a'), ownWrite(true, 'receipt-a'), { body: commit('o-1'), applied: true }]);
    flow.invoke([['o-2', 1]], [ownWrite(true, 'billed-c', 'billed-d'), { body: commit('o-2'), applied: true }]);
    flow.invoke([['o-3', 1]], [ownWrite(true, 'billed-y'), { body: commit('o-3'), fault: 'conflict', applied: false }]);
    flow.later(180);
    flow.invoke([['o-3', 2]], [ownWrite(true, 'billed-y'), { body: commit('o-3'), applied: true }]);
    expect(checkFollowUpsCommittedTwice('Billing', flow.attribution.followUps('Fn'), typeOf)).toEqual([]);
  });
});
