/** A cause's fix is worded for the consumer's processing mode: a lease or multi-step consumer has no transaction to write through (new-user trial NU18-7). */
import { describe, expect, test } from 'vitest';
import { attributedRun as run } from './attribution-run';

/** One invocation whose effect's ADD had its response lost and was re-sent by the SDK. */
function resentAdd(mode: 'lease' | 'multi-step') {
  const flow = run({ subscriber: 'Receipts', mode, inboxTable: 'Inbox' });
  const add = { TableName: 'ReceiptLog', Key: { pk: { S: 'RECEIPT#order-1' } }, UpdateExpression: 'ADD sent :one' };
  flow.invoke([['e-1', 1]], [
    { body: { TableName: 'Inbox', Key: { pk: { S: 'Receipts#e-1' } } }, operation: 'UpdateItem', applied: true },
    { body: add, operation: 'UpdateItem', fault: 'lose-response', applied: true },
    { body: add, operation: 'UpdateItem', applied: true },
  ]);
  return flow.attribution.causes('Fn', ['e-1']);
}

describe("an SDK resend of a lease's or a step's ADD", () => {
  test("a lease consumer is told to make the write in its handle idempotent: no step, no transaction", () => {
    const [cause] = resentAdd('lease');

    expect(cause!.kind).toBe('sdk-retry-after-lost-response');
    expect(cause!.fix).toMatch(/^make the write in the lease's handle idempotent \(a condition on a per-event marker, SET of a computed value instead of ADD\)$/);
    expect(cause!.fix).not.toMatch(/step|transaction/);
  });

  test("a multi-step consumer is told to make the step's write idempotent: no transaction", () => {
    const [cause] = resentAdd('multi-step');

    expect(cause!.fix).toMatch(/^make the step's write idempotent/);
    expect(cause!.fix).not.toMatch(/transaction/);
  });
});

describe("a lease effect applied again, the run showing no why", () => {
  test("the fix names the lease's idempotency key, not the transaction", () => {
    const flow = run({ subscriber: 'Mailer', mode: 'lease', inboxTable: 'Inbox' });
    const claim = { body: { TableName: 'Inbox', Key: { pk: { S: 'Mailer#e-1' } } }, operation: 'UpdateItem', applied: true };
    const mail = { body: { TableName: 'Mail', Key: { pk: { S: 'mail' } } }, operation: 'UpdateItem', applied: true };
    flow.invoke([['e-1', 1]], [claim, mail], { kind: 'returned', response: {} }, ['e-1']);
    flow.later(180);
    flow.invoke([['e-1', 2]], [claim, mail]);

    const [cause] = flow.attribution.causes('Fn', ['e-1']);
    expect(cause!.kind).toBe('applied-again');
    expect(cause!.fix).toMatch(/context\.idempotencyKey/);
    expect(cause!.fix).not.toMatch(/transaction/);
  });
});
