/** Which outbox events a function's applied request wrote: what the dual-write check charges a producer with. */
import { describe, expect, test } from 'vitest';
import { businessItems, writtenOutboxEvents } from '../../../simulator/observation/outbox-writes';

const body = (request: unknown): Buffer => Buffer.from(JSON.stringify(request));
const outboxItem = (eventId: string, recordType = 'OutboxEvent.v1') => ({ pk: { S: `OUTBOX#${eventId}` }, iefRecordType: { S: recordType }, iefEventId: { S: eventId } });

describe('writtenOutboxEvents', () => {
  test("a transaction's outbox Puts, in request order; its business item, update and condition check are no events", () => {
    const request = {
      TransactItems: [
        { Put: { TableName: 'orders', Item: { pk: { S: 'order-1' } } } },
        { Put: { TableName: 'outbox', Item: outboxItem('placed-1') } },
        { Update: { TableName: 'outbox', Key: { pk: { S: 'OUTBOX#x' } }, UpdateExpression: 'SET a = :a', ExpressionAttributeValues: { ':a': { S: 'b' } } } },
        { ConditionCheck: { TableName: 'outbox', Key: { pk: { S: 'OUTBOX#y' } }, ConditionExpression: 'attribute_exists(pk)' } },
        { Put: { TableName: 'outbox', Item: outboxItem('placed-1.standard') } },
      ],
    };
    expect(writtenOutboxEvents('TransactWriteItems', body(request))).toEqual(['placed-1', 'placed-1.standard']);
  });

  test("an ordered event's head and history items both name it", () => {
    const request = { TransactItems: [{ Put: { TableName: 'outbox', Item: outboxItem('captured-1', 'OrderedOutboxHead.v1') } }, { Put: { TableName: 'outbox', Item: outboxItem('captured-1', 'OrderedOutboxEvent.v1') } }] };
    expect(writtenOutboxEvents('TransactWriteItems', body(request))).toEqual(['captured-1', 'captured-1']);
  });

  test('a PutItem and a BatchWriteItem of outbox items; deletes and other operations write none', () => {
    expect(writtenOutboxEvents('PutItem', body({ TableName: 'outbox', Item: outboxItem('one') }))).toEqual(['one']);
    expect(writtenOutboxEvents('BatchWriteItem', body({ RequestItems: { outbox: [{ PutRequest: { Item: outboxItem('two') } }, { DeleteRequest: { Key: { pk: { S: 'OUTBOX#three' } } } }] } }))).toEqual(['two']);
    expect(writtenOutboxEvents('UpdateItem', body({ TableName: 'outbox', Key: { pk: { S: 'OUTBOX#four' } } }))).toEqual([]);
    expect(writtenOutboxEvents('GetItem', body({ TableName: 'outbox', Key: { pk: { S: 'OUTBOX#five' } } }))).toEqual([]);
  });

  test('a body that is not JSON, or not of the shape, names nothing', () => {
    expect(writtenOutboxEvents('PutItem', Buffer.from('not json'))).toEqual([]);
    expect(writtenOutboxEvents('TransactWriteItems', body({ TransactItems: 'x' }))).toEqual([]);
    expect(writtenOutboxEvents('BatchWriteItem', body(null))).toEqual([]);
    expect(writtenOutboxEvents('PutItem', body({ TableName: 'outbox', Item: { iefEventId: { N: '1' } } }))).toEqual([]);
  });
});

describe('businessItems (review r17, R17-2)', () => {
  const keyNames = (table: string) => (table === 'lines' ? ['pk', 'sk'] : ['pk']);
  const request = body({
    TransactItems: [
      { Put: { TableName: 'lines', Item: { sk: { S: 'a' }, pk: { S: 'order-1' }, qty: { N: '1' } }, ConditionExpression: 'attribute_not_exists(pk)' } },
      { Put: { TableName: 'outbox', Item: outboxItem('u-1') } },
      { Update: { TableName: 'stock', Key: { pk: { S: 'sku-1' } }, UpdateExpression: 'ADD n :one' } },
      { ConditionCheck: { TableName: 'customers', Key: { pk: { S: 'c-1' } }, ConditionExpression: 'attribute_exists(pk)' } },
    ],
  });
  const lineItem = 'lines {"pk":{"S":"order-1"},"sk":{"S":"a"}}';

  test("the items a transaction writes outside the outbox, a Put's key read with its table's key names; those a cancellation refused for their condition", () => {
    expect(businessItems('TransactWriteItems', request, keyNames)).toEqual({ written: [lineItem, 'stock {"pk":{"S":"sku-1"}}'], refused: [] });
    const refusal = body({ __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException', CancellationReasons: [{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }] });
    expect(businessItems('TransactWriteItems', request, keyNames, refusal).refused).toEqual([lineItem, 'customers {"pk":{"S":"c-1"}}']);
  });

  test('no item refused by a conflict; none for another operation, a Put whose key is unknown, or a body that is no request', () => {
    const conflict = body({ CancellationReasons: [{ Code: 'TransactionConflict' }, { Code: 'None' }, { Code: 'None' }, { Code: 'None' }] });
    expect(businessItems('TransactWriteItems', request, keyNames, conflict).refused).toEqual([]);
    expect(businessItems('TransactWriteItems', request, () => [], body({ message: 'x' })).written).toEqual(['stock {"pk":{"S":"sku-1"}}']);
    expect(businessItems('PutItem', body({ TableName: 'lines', Item: { pk: { S: 'x' }, sk: { S: 'y' } } }), keyNames)).toEqual({ written: [], refused: [] });
    expect(businessItems('TransactWriteItems', Buffer.from('{'), keyNames)).toEqual({ written: [], refused: [] });
  });
});
