/** The cause of an effect applied again: a transactional consumer's writes outside its inbox transaction. */
import { describe, expect, test } from 'vitest';
import { OWN_CLIENT_COUNTED, OwnClientWrites } from '../../../simulator/check/own-client-writes';

describe('OwnClientWrites', () => {
  test('names the tables a watched consumer wrote outside its inbox transaction, with the count; none for writes in it, reads or other functions', () => {
    const writes = new OwnClientWrites();
    writes.watch('Stack/Billing', 'Inbox');
    writes.onRequest('Stack/Billing', 'TransactWriteItems', JSON.stringify({ TransactItems: [{ Put: { TableName: 'Inbox' } }, { Update: { TableName: 'Ledger' } }] }));
    writes.onRequest('Stack/Billing', 'GetItem', JSON.stringify({ TableName: 'Ledger' }));
    writes.onRequest('Stack/Other', 'UpdateItem', JSON.stringify({ TableName: 'Ledger' }));
    expect(writes.cause('Stack/Billing')).toBeUndefined();

    writes.onRequest('Stack/Billing', 'UpdateItem', JSON.stringify({ TableName: 'Ledger' }));
    writes.onRequest('Stack/Billing', 'UpdateItem', JSON.stringify({ TableName: 'Ledger' }));
    writes.onRequest('Stack/Billing', 'TransactWriteItems', JSON.stringify({ TransactItems: [{ Put: { TableName: 'Outbox' } }] }));

    expect(writes.cause('Stack/Billing')).toBe(
      // the counts are the function's whole run's, so they do not read as one event's writes (new-user trial NU15-9)
      `its consumer wrote outside its inbox transaction, with its own client: Ledger (2 UpdateItem), Outbox (1 TransactWriteItems)${OWN_CLIENT_COUNTED}; ` +
        'a redelivery (after a crash, a refused commit or a lost response) applies such a write again: write through the transaction (tx.put, tx.update, tx.emit)',
    );
  });

  test("names a write to the consumer's own outbox as an outbox event written outside the transaction, instead of tx.emit", () => {
    const writes = new OwnClientWrites();
    writes.watch('Stack/Billing', 'Inbox', 'Outbox');
    writes.onRequest('Stack/Billing', 'TransactWriteItems', JSON.stringify({ TransactItems: [{ Put: { TableName: 'Outbox' } }] }));
    writes.onRequest('Stack/Billing', 'TransactWriteItems', JSON.stringify({ TransactItems: [{ Put: { TableName: 'Outbox' } }] }));
    writes.onRequest('Stack/Billing', 'UpdateItem', JSON.stringify({ TableName: 'Ledger' }));

    expect(writes.cause('Stack/Billing')).toMatch(
      /^its consumer wrote outside its inbox transaction, with its own client: an outbox event written outside the consumer's transaction \(2 TransactWriteItems on Outbox\), instead of tx\.emit, Ledger \(1 UpdateItem\), over the whole run, every attempt counted; a redelivery/,
    );
  });

  test("an aggregate consumer (no inbox): its commits (the Put with the processed ids, with the events it emits) are in its transaction; a write of apply()'s own client is named, in apply()", () => {
    const writes = new OwnClientWrites();
    writes.watchAggregate('Stack/Stats', 'Outbox');
    const commit = { TransactItems: [{ Put: { TableName: 'Stats', Item: { pk: { S: 'c-1' }, processedMessages: { L: [] } } } }, { Put: { TableName: 'Outbox' } }] };
    writes.onRequest('Stack/Stats', 'TransactWriteItems', JSON.stringify(commit));
    writes.onRequest('Stack/Stats', 'PutItem', JSON.stringify({ TableName: 'Stats', Item: { pk: { S: 'c-1' }, processedMessages: { L: [] } } }));
    expect(writes.cause('Stack/Stats')).toBeUndefined();
    expect(writes.causeOf('Stack/Stats', 'Stats', ['e-1'])).toBeUndefined();

    writes.onRequest('Stack/Stats', 'UpdateItem', JSON.stringify({ TableName: 'Loyalty', Key: { pk: { S: 'c-1' } } }));
    expect(writes.cause('Stack/Stats')).toBe(
      `its apply() wrote outside the aggregate's transaction, with its own client: Loyalty (1 UpdateItem)${OWN_CLIENT_COUNTED}; ` +
        'a redelivery (after a crash, a refused commit or a lost response) applies such a write again: return the change as the state from apply() (and emit with tx.emit)',
    );
    expect(writes.causeOf('Stack/Stats', 'Stats', ['e-1'])).toMatchObject({ kind: 'write-outside-transaction', subscriber: 'Stats', requests: [{ operation: 'UpdateItem', tables: ['Loyalty'], count: 1 }] });
  });
});
