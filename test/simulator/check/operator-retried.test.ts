/**
 * A lease or multi-step effect applied again after the scenario's operator resolved its blocked step TRY_AGAIN,
 * although the effect had been applied: the operator's decision is the cause, not the crash that blocked the step.
 */
import { describe, expect, test } from 'vitest';
import { fixFor } from '../../../simulator/check/violation-cause';
import { attributedRun as run, RETURNED } from './attribution-run';

const record = (fault?: 'crash-before') => ({ body: { TableName: 'Inbox', Key: { pk: { S: 'Receipts#e-1' } } }, operation: 'UpdateItem', applied: fault === undefined, ...(fault === undefined ? {} : { fault }) });
const receipt = { body: { TableName: 'ReceiptLog', Key: { pk: { S: 'RECEIPT#order-1' } }, UpdateExpression: 'ADD sent :one' }, operation: 'UpdateItem', applied: true };

/** The effect applied, the process dead before its completion; the redelivery finds the lease expired and blocks the record. */
function blockedAfterItsEffect() {
  const flow = run({ subscriber: 'Receipts', mode: 'lease', inboxTable: 'Inbox' });
  flow.invoke([['e-1', 1]], [record(), receipt, record('crash-before')], { kind: 'crashed', atRequest: 3, afterCommit: false });
  flow.later(180);
  flow.invoke([['e-1', 2]], [record()], RETURNED, ['e-1']);
  flow.later(180);
  return flow;
}

describe("the scenario's operator resolved a blocked step TRY_AGAIN although its effect had been applied (new-user trial NU18-2)", () => {
  test('the application after the TRY_AGAIN is the operator\'s doing: operator-retried-applied-step with its fix, never the onExpiredLease advice', () => {
    const flow = blockedAfterItsEffect();
    flow.attribution.onOperatorResolution('Receipts', 'e-1', 'effect', 'TRY_AGAIN');
    flow.later(180);
    flow.invoke([['e-1', 1]], [record(), receipt, record()]);

    const causes = flow.attribution.causes('Fn', ['e-1']);
    expect(causes.map((cause) => cause.kind)).toEqual(['operator-retried-applied-step']);
    expect(causes[0]!.fix).toBe(fixFor('operator-retried-applied-step'));
    expect(causes[0]!.fix).not.toMatch(/onExpiredLease/);
    expect(causes[0]!.invocations.map((invocation) => [invocation.number, invocation.role])).toEqual([
      [1, 'applied'],
      [3, 'applied-again'],
    ]);
    expect(flow.attribution.cause('Fn', ['e-1'])).toMatch(
      /applied again by invocation #3 \(receive 1, at \+540 s\), after the scenario's operator resolved the event's blocked step 'effect' TRY_AGAIN \(at \+360 s\), although invocation #1 \(receive 1, at \+0 s\) had applied its effect \(ReceiptLog: 1 UpdateItem\)/,
    );
  });

  test('a SUCCESS resolution, or a TRY_AGAIN of another event, leaves the story as the faults tell it (a redelivery after a crash)', () => {
    const flow = blockedAfterItsEffect();
    flow.attribution.onOperatorResolution('Receipts', 'e-1', 'effect', 'SUCCESS');
    flow.attribution.onOperatorResolution('Receipts', 'e-2', 'effect', 'TRY_AGAIN');
    flow.attribution.onOperatorResolution('Mailer', 'e-1', 'effect', 'TRY_AGAIN');
    flow.later(180);
    flow.invoke([['e-1', 1]], [record(), receipt, record()]);

    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).toEqual(['redelivery-after-crash']);
  });

  test('a TRY_AGAIN made before the effect was first applied is a right decision: not the cause', () => {
    const flow = run({ subscriber: 'Receipts', mode: 'lease', inboxTable: 'Inbox' });
    flow.attribution.onOperatorResolution('Receipts', 'e-1', 'effect', 'TRY_AGAIN');
    flow.invoke([['e-1', 1]], [record(), receipt, record('crash-before')], { kind: 'crashed', atRequest: 3, afterCommit: false });
    flow.later(180);
    flow.invoke([['e-1', 2]], [record(), receipt, record()]);

    expect(flow.attribution.causes('Fn', ['e-1']).map((cause) => cause.kind)).toEqual(['redelivery-after-crash']);
  });
});
