import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { TransactionLimitError } from '../../lambda/errors';
import { validateTransactionLimits } from '../../lambda/transaction/limits';
import { NumberValue } from '@aws-sdk/lib-dynamodb';

const update = (table: string, key: Record<string, unknown>): TransactWriteItem => ({
  Update: { TableName: table, Key: key, UpdateExpression: 'SET x = :x', ExpressionAttributeValues: { ':x': 1 } },
});
const put = (table: string, item: Record<string, unknown>): TransactWriteItem => ({ Put: { TableName: table, Item: item } });

describe('validateTransactionLimits', () => {
  test('accepts 100 actions on distinct items', () => {
    expect(() => validateTransactionLimits(Array.from({ length: 100 }, (_, i) => update('T', { pk: `k${i}` })))).not.toThrow();
  });

  test('fails on 101 actions, naming the limit, the count and the breakdown', () => {
    const actions = Array.from({ length: 101 }, (_, i) => update('T', { pk: `k${i}` }));
    expect(() => validateTransactionLimits(actions, { breakdown: '100 items + 1 events' })).toThrow(
      'a transaction may hold at most 100 actions (DynamoDB TransactWriteItems limit), but 101 were given (100 items + 1 events)',
    );
  });

  test('fails on no action', () => {
    expect(() => validateTransactionLimits([])).toThrow(/at least 1 action, but 0 were given/);
  });

  test('fails on an action with two operations or none', () => {
    const both = { ...update('T', { pk: 'a' }), ...put('T', { pk: 'b' }) };
    expect(() => validateTransactionLimits([both])).toThrow(/action 0 must hold exactly one of Put, Update, Delete or ConditionCheck, but holds Put and Update/);
    expect(() => validateTransactionLimits([{}])).toThrow(/but holds none/);
  });

  test('fails on two Key actions on the same item, naming both', () => {
    let thrown: unknown;
    try {
      validateTransactionLimits([update('Ledger', { pk: 'a' }), { Delete: { TableName: 'Ledger', Key: { pk: 'a' } } }]);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(TransactionLimitError);
    expect((thrown as Error).message).toBe(
      `actions 0 (Update on table 'Ledger') and 1 (Delete on table 'Ledger') both target the item with key {"pk":"a"} in table 'Ledger'; DynamoDB allows one action per item in a transaction`,
    );
  });

  test('fails on a Put and an Update of one item, learning the key schema from the Update', () => {
    expect(() => validateTransactionLimits([put('Orders', { pk: 'o1', sk: 'v1', total: 5 }), update('Orders', { pk: 'o1', sk: 'v1' })])).toThrow(
      /actions 0 .* and 1 .* both target the item/,
    );
  });

  test('fails on two Puts of one item when the key schema is known', () => {
    const knownKeySchemas = new Map([['Outbox', { partitionKey: 'pk', sortKey: 'sk' }]]);
    const actions = [put('Outbox', { pk: 'OUTBOX#1', sk: 'OUTBOX#1', a: 1 }), put('Outbox', { pk: 'OUTBOX#1', sk: 'OUTBOX#1', a: 2 })];
    expect(() => validateTransactionLimits(actions, { knownKeySchemas })).toThrow(/both target the item/);
  });

  test('items that differ only in the sort key, or live in different tables, are distinct', () => {
    const knownKeySchemas = new Map([['T', { partitionKey: 'pk', sortKey: 'sk' }]]);
    expect(() =>
      validateTransactionLimits([put('T', { pk: 'a', sk: '1' }), put('T', { pk: 'a', sk: '2' }), update('U', { pk: 'a', sk: '1' })], { knownKeySchemas }),
    ).not.toThrow();
  });

  test('treats a number and an equal NumberValue as one key', () => {
    expect(() => validateTransactionLimits([update('T', { id: 42 }), update('T', { id: new NumberValue('42') })])).toThrow(/both target the item/);
  });

  test('leaves Puts on tables of unknown key schema to DynamoDB', () => {
    expect(() => validateTransactionLimits([put('T', { pk: 'a' }), put('T', { pk: 'a' })])).not.toThrow();
  });

  test('uses the caller description of each action', () => {
    expect(() => validateTransactionLimits([update('T', { pk: 'a' }), update('T', { pk: 'a' })], { describe: (i) => `thing ${i}` })).toThrow(
      /actions 0 \(thing 0\) and 1 \(thing 1\)/,
    );
  });
});
