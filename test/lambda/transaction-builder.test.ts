import { describe, expect, test } from 'vitest';
import { MAX_STAGED_WRITES, TransactionBuilder } from '../../lambda/consumer/transaction-builder';
import { TransactionLimitError } from '../../lambda/errors';

describe('TransactionBuilder', () => {
  test('stages each kind of write, in order, DocumentClient style', () => {
    const tx = new TransactionBuilder();
    tx.put({ TableName: 'T', Item: { pk: 'a' } });
    tx.update({ TableName: 'T', Key: { pk: 'b' }, UpdateExpression: 'ADD n :one', ExpressionAttributeValues: { ':one': 1 } });
    tx.delete({ TableName: 'T', Key: { pk: 'c' } });
    tx.conditionCheck({ TableName: 'T', Key: { pk: 'd' }, ConditionExpression: 'attribute_exists(pk)' });
    expect(tx.items.map((action) => Object.keys(action)[0])).toEqual(['Put', 'Update', 'Delete', 'ConditionCheck']);
    expect(tx.items[1]?.Update?.Key).toEqual({ pk: 'b' });
  });

  test('fails at the write that leaves no room for the inbox record', () => {
    const tx = new TransactionBuilder();
    for (let i = 0; i < MAX_STAGED_WRITES; i++) tx.delete({ TableName: 'T', Key: { pk: String(i) } });
    expect(MAX_STAGED_WRITES).toBe(99);
    expect(() => tx.delete({ TableName: 'T', Key: { pk: 'one-too-many' } })).toThrow(TransactionLimitError);
    expect(() => tx.delete({ TableName: 'T', Key: { pk: 'one-too-many' } })).toThrow(
      'a handler may stage at most 99 writes (DynamoDB allows 100 actions per transaction and the inbox record takes one), but it staged write number 100',
    );
    expect(tx.items).toHaveLength(99);
  });
});
