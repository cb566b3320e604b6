/** Reading which items a DynamoDB request names, and telling whether two references name one item. */
import { describe, expect, test } from 'vitest';
import { canonicalNumber, itemIdentity, itemReferences } from '../../../simulator/aws/request-items';

describe('itemReferences', () => {
  test('a PutItem names its Item, an UpdateItem and a DeleteItem their Key', () => {
    expect(itemReferences('PutItem', { TableName: 't', Item: { pk: { S: 'a' }, n: { N: '1' } } })).toEqual([{ tableName: 't', attributes: { pk: { S: 'a' }, n: { N: '1' } } }]);
    expect(itemReferences('UpdateItem', { TableName: 't', Key: { pk: { S: 'a' } }, UpdateExpression: 'SET n = :n' })).toEqual([{ tableName: 't', attributes: { pk: { S: 'a' } } }]);
    expect(itemReferences('DeleteItem', { TableName: 't', Key: { pk: { S: 'b' } } })).toEqual([{ tableName: 't', attributes: { pk: { S: 'b' } } }]);
  });

  test('a TransactWriteItems names one item per action, in request order, whatever the action', () => {
    const body = {
      TransactItems: [
        { Put: { TableName: 'a', Item: { pk: { S: '1' }, x: { S: 'x' } } } },
        { Update: { TableName: 'b', Key: { pk: { S: '2' } }, UpdateExpression: 'SET x = :x' } },
        { Delete: { TableName: 'c', Key: { pk: { S: '3' } } } },
        { ConditionCheck: { TableName: 'd', Key: { pk: { S: '4' } }, ConditionExpression: 'attribute_exists(pk)' } },
      ],
    };
    expect(itemReferences('TransactWriteItems', body)?.map(({ tableName, attributes }) => [tableName, attributes.pk])).toEqual([
      ['a', { S: '1' }],
      ['b', { S: '2' }],
      ['c', { S: '3' }],
      ['d', { S: '4' }],
    ]);
  });

  test("a TransactGetItems names each Get's Key; a BatchWriteItem each PutRequest's Item and DeleteRequest's Key", () => {
    expect(itemReferences('TransactGetItems', { TransactItems: [{ Get: { TableName: 't', Key: { pk: { S: '1' } } } }] })).toEqual([{ tableName: 't', attributes: { pk: { S: '1' } } }]);
    const batch = { RequestItems: { t: [{ PutRequest: { Item: { pk: { S: '1' } } } }, { DeleteRequest: { Key: { pk: { S: '2' } } } }], u: [{ DeleteRequest: { Key: { pk: { S: '3' } } } }] } };
    expect(itemReferences('BatchWriteItem', batch)).toEqual([
      { tableName: 't', attributes: { pk: { S: '1' } } },
      { tableName: 't', attributes: { pk: { S: '2' } } },
      { tableName: 'u', attributes: { pk: { S: '3' } } },
    ]);
  });

  test('a body without the shape of its operation names nothing (undefined), so the request is left to DynamoDB', () => {
    expect(itemReferences('PutItem', { TableName: 't' })).toBeUndefined();
    expect(itemReferences('UpdateItem', { Key: { pk: { S: 'a' } } })).toBeUndefined();
    expect(itemReferences('TransactWriteItems', { TransactItems: [] })).toBeUndefined();
    // one malformed action spoils the whole request: its reasons could not be given in request order
    expect(itemReferences('TransactWriteItems', { TransactItems: [{ Put: { TableName: 'a', Item: { pk: { S: '1' } } } }, { Get: { TableName: 'a', Key: { pk: { S: '2' } } } }] })).toBeUndefined();
    expect(itemReferences('TransactWriteItems', { TransactItems: [{ Put: { TableName: 'a', Item: {} }, Delete: { TableName: 'a', Key: {} } }] })).toBeUndefined();
    expect(itemReferences('BatchWriteItem', { RequestItems: { t: [{ PutRequest: {} }] } })).toBeUndefined();
    expect(itemReferences('PutItem', [])).toBeUndefined();
  });
});

describe('itemIdentity', () => {
  test("a Put's item and an Update's key name one item when their key attributes match; other attributes do not count", () => {
    const keys = ['pk', 'sk'];
    const put = itemIdentity({ tableName: 't', attributes: { sk: { S: '1' }, pk: { S: 'a' }, total: { N: '5' } } }, keys);
    const update = itemIdentity({ tableName: 't', attributes: { pk: { S: 'a' }, sk: { S: '1' } } }, keys);
    expect(put).toBeDefined();
    expect(put).toBe(update);
    expect(itemIdentity({ tableName: 't', attributes: { pk: { S: 'a' }, sk: { S: '2' } } }, keys)).not.toBe(put);
    expect(itemIdentity({ tableName: 'other', attributes: { pk: { S: 'a' }, sk: { S: '1' } } }, keys)).not.toBe(put);
  });

  test('values of different types never name one item: S "1" is not N 1', () => {
    expect(itemIdentity({ tableName: 't', attributes: { pk: { S: '1' } } }, ['pk'])).not.toBe(itemIdentity({ tableName: 't', attributes: { pk: { N: '1' } } }, ['pk']));
  });

  test('numbers name one item by value, as DynamoDB compares them', () => {
    const identity = (n: string): string | undefined => itemIdentity({ tableName: 't', attributes: { pk: { N: n } } }, ['pk']);
    expect(identity('1.50')).toBe(identity('1.5'));
    expect(identity('15e-1')).toBe(identity('1.5'));
    expect(identity('1.5')).not.toBe(identity('15'));
  });

  test('is undefined when a key attribute is missing or not an S, N or B value', () => {
    expect(itemIdentity({ tableName: 't', attributes: { pk: { S: 'a' } } }, ['pk', 'sk'])).toBeUndefined();
    expect(itemIdentity({ tableName: 't', attributes: { pk: { L: [] } } }, ['pk'])).toBeUndefined();
    expect(itemIdentity({ tableName: 't', attributes: { pk: 'a' } }, ['pk'])).toBeUndefined();
    expect(itemIdentity({ tableName: 't', attributes: { pk: { N: 'one' } } }, ['pk'])).toBeUndefined();
  });
});

describe('canonicalNumber', () => {
  test('spells every way of writing one value the same', () => {
    expect(new Set(['100', '100.0', '1e2', '+1E+2', '0100', '1000e-1', ' 100 '].map(canonicalNumber))).toEqual(new Set(['1e2']));
    expect(canonicalNumber('-0.25')).toBe('-25e-2');
    expect(canonicalNumber('.5')).toBe(canonicalNumber('0.5'));
  });

  test('zero is zero however it is written', () => {
    expect(['0', '0.000', '-0', '0e10'].map(canonicalNumber)).toEqual(['0', '0', '0', '0']);
  });

  test('is undefined for what is not a number', () => {
    expect(['', '.', 'e5', '1e', 'abc', '1.2.3', 'NaN'].map(canonicalNumber)).toEqual([undefined, undefined, undefined, undefined, undefined, undefined, undefined]);
  });
});
