import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { TransactionLimitError } from '../../lambda/errors';
import { itemSize, MAX_ITEM_BYTES } from '../../lambda/transaction/item-size';
import { actionPayloadBytes, assertItemFits, MAX_TRANSACTION_BYTES, validateTransactionLimits } from '../../lambda/transaction/limits';
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

/** An item of exactly `bytes` bytes (by the documented rules): `pk` plus a padding string. */
function itemOf(pk: string, bytes: number): Record<string, unknown> {
  const padding = bytes - itemSize({ pk, pad: '' });
  return { pk, pad: 'x'.repeat(padding) };
}

describe('validateTransactionLimits: sizes', () => {
  test('accepts a Put of an item of exactly 400 KB', () => {
    expect(itemSize(itemOf('a', MAX_ITEM_BYTES))).toBe(409_600);
    expect(() => validateTransactionLimits([put('T', itemOf('a', MAX_ITEM_BYTES))])).not.toThrow();
  });

  test('fails on a Put of an item over 400 KB, naming the limit, the size and the action', () => {
    const actions = [update('T', { pk: 'a' }), put('Ledger', itemOf('b', MAX_ITEM_BYTES + 1))];
    expect(() => validateTransactionLimits(actions, { describe: (i) => `staged write ${i}` })).toThrow(TransactionLimitError);
    expect(() => validateTransactionLimits(actions, { describe: (i) => `staged write ${i}` })).toThrow(
      'action 1 (staged write 1) writes an item of 409,601 bytes, but the DynamoDB item size limit is 409,600 bytes (400 KB)',
    );
  });

  test('fails when the items add up to more than 4 MB, naming the limit, the total and the largest action', () => {
    // eleven items of 390,000 bytes: each fits, together 4,290,000 > 4,194,304
    const actions = Array.from({ length: 11 }, (_, i) => put('T', itemOf(`k${i}`, i === 7 ? 390_001 : 390_000)));
    expect(MAX_TRANSACTION_BYTES).toBe(4_194_304);
    expect(() => validateTransactionLimits(actions)).toThrow(
      "the items of a transaction may add up to at most 4,194,304 bytes (4 MB, DynamoDB TransactWriteItems limit), but these add up to at least 4,290,001 bytes; the largest is action 7 (Put on table 'T') with 390,001 bytes",
    );
  });

  test('accepts items that add up to exactly 4 MB', () => {
    const actions = Array.from({ length: 16 }, (_, i) => put('T', itemOf(`k${i}`, MAX_TRANSACTION_BYTES / 16)));
    expect(() => validateTransactionLimits(actions)).not.toThrow();
  });

  test('counts what DynamoDB Local counts: a Put its item, the others their key, and every action its expressions with each value and name they reference', () => {
    expect(actionPayloadBytes(put('T', { pk: 'abc', n: 7 }))).toBe(2 + 3 + 1 + 2);
    // key + 'SET x = :x' + the value 1
    expect(actionPayloadBytes(update('T', { pk: 'abc' }))).toBe(2 + 3 + 10 + 2);
    expect(actionPayloadBytes({ Delete: { TableName: 'T', Key: { pk: 'abc' } } })).toBe(5);
    expect(actionPayloadBytes({ ConditionCheck: { TableName: 'T', Key: { pk: 'abc' }, ConditionExpression: 'attribute_exists(pk)' } })).toBe(5 + 20);
    // a value referenced twice counts twice, a name counts its own length, per reference
    expect(
      actionPayloadBytes({ ConditionCheck: { TableName: 'T', Key: { pk: 'abc' }, ConditionExpression: '#n = :v OR #n = :v', ExpressionAttributeNames: { '#n': 'name' }, ExpressionAttributeValues: { ':v': 'xyz' } } }),
    ).toBe(5 + 18 + 2 * 4 + 2 * 3);
  });

  test('assertItemFits names the item it was given', () => {
    expect(() => assertItemFits(itemOf('a', MAX_ITEM_BYTES + 10), "inbox record 'x'")).toThrow(
      "inbox record 'x' writes an item of 409,610 bytes, but the DynamoDB item size limit is 409,600 bytes (400 KB)",
    );
  });
});
