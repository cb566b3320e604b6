/**
 * The 4 MB TransactWriteItems check against a real DynamoDB Local. Local rejects a transaction whose "payload" is over
 * 4 MB and says how large it was: a Put counts its item, an Update, Delete or ConditionCheck its key, and every action
 * also counts its expressions (their UTF-8 text, and each `:value` and `#name` they reference, once per reference).
 * A fixed filler pushes every transaction over the limit, so the reported payload minus the filler's is the action's.
 */
import { DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, test } from 'vitest';
import { actionPayloadBytes, MAX_TRANSACTION_BYTES, validateTransactionLimits } from '../../lambda/transaction/limits';
import { localClient } from '../support/dynamodb-client';
import { createKeyedTable } from '../support/proof/tables';

let documents: DynamoDBDocumentClient;
let table: string;

beforeAll(async () => {
  const client = localClient();
  documents = DynamoDBDocumentClient.from(client);
  table = await createKeyedTable(client, 'payload');
});

/** Eleven Puts of 390,000-byte items: over 4 MB on their own. */
const filler = (): TransactWriteItem[] => Array.from({ length: 11 }, (_, i) => ({ Put: { TableName: table, Item: { pk: `filler-${String(i).padStart(2, '0')}`, a: 'x'.repeat(390_000) } } }));

/** The payload size DynamoDB Local reports for `actions` (placed first, so Local has counted them when it gives up). */
async function localPayload(actions: TransactWriteItem[]): Promise<number> {
  const error = await documents.send(new TransactWriteCommand({ TransactItems: [...actions, ...filler()] })).then(
    () => new Error('DynamoDB Local accepted a transaction over 4 MB'),
    (rejection: Error) => rejection,
  );
  const size = /Payload Size: (\d+)/.exec(error.message)?.[1];
  if (size === undefined) throw error;
  return Number(size);
}

const shapes = (): Array<[string, TransactWriteItem]> => [
  ['a Put', { Put: { TableName: table, Item: { pk: 'k1', a: 'abc', n: 12345 } } }],
  ['a conditional Put with names and values', { Put: { TableName: table, Item: { pk: 'k1' }, ConditionExpression: 'attribute_not_exists(#p) OR #a <> :v', ExpressionAttributeNames: { '#p': 'pk', '#a': 'abcdef' }, ExpressionAttributeValues: { ':v': 'Zoë €uro 😀' } } }],
  ['an Update referencing a value twice', { Update: { TableName: table, Key: { pk: 'k1' }, UpdateExpression: 'SET a = :v, b = :v', ExpressionAttributeValues: { ':v': 'abcdefghij' } } }],
  ['an Update with a condition', { Update: { TableName: table, Key: { pk: 'k1' }, UpdateExpression: 'SET #a.#b = :v ADD n :n', ConditionExpression: 'attribute_exists(#a) AND n < :max', ExpressionAttributeNames: { '#a': 'mm', '#b': 'nnn' }, ExpressionAttributeValues: { ':v': { x: 'abc', y: [1, 2] }, ':n': 1, ':max': 1.5 } } }],
  ['an Update with list_append and a set', { Update: { TableName: table, Key: { pk: 'k1' }, UpdateExpression: 'SET l = list_append(if_not_exists(l, :empty), :add) ADD s :s', ExpressionAttributeValues: { ':empty': [], ':add': ['abc'], ':s': new Set(['ab', 'cde']) } } }],
  ['an Update whose placeholders share a prefix', { Update: { TableName: table, Key: { pk: 'k1' }, UpdateExpression: 'SET a = :v, b = :vv', ExpressionAttributeValues: { ':v': 'abc', ':vv': 'defgh' } } }],
  ['a REMOVE', { Update: { TableName: table, Key: { pk: 'k1' }, UpdateExpression: 'REMOVE a' } }],
  ['a Delete', { Delete: { TableName: table, Key: { pk: 'k1' } } }],
  ['a conditional Delete', { Delete: { TableName: table, Key: { pk: 'k1' }, ConditionExpression: 'a = :v', ExpressionAttributeValues: { ':v': 'abcdefghij' } } }],
  ['a ConditionCheck', { ConditionCheck: { TableName: table, Key: { pk: 'k1' }, ConditionExpression: 'attribute_exists(pk)' } }],
  ['a ConditionCheck with values and functions', { ConditionCheck: { TableName: table, Key: { pk: 'k1' }, ConditionExpression: '  a IN (:v, :w) OR size(a) > :n  ', ExpressionAttributeValues: { ':v': 'abcdefghij', ':w': 'x', ':n': 3 } } }],
];

describe('actionPayloadBytes agrees with DynamoDB Local to the byte', () => {
  test.each(shapes())('%s', async (_name, action) => {
    const base = await localPayload([]);
    expect(actionPayloadBytes(action)).toBe((await localPayload([action])) - base);
  });
});

describe('the 4 MB check counts what DynamoDB Local counts', () => {
  test('ConditionChecks whose condition values add up to more than 4 MB are refused before sending, as Local refuses them', async () => {
    const checks: TransactWriteItem[] = Array.from({ length: 11 }, (_, i) => ({
      ConditionCheck: { TableName: table, Key: { pk: `c${i}` }, ConditionExpression: 'attribute_not_exists(a) OR a <> :v', ExpressionAttributeValues: { ':v': 'x'.repeat(390_000) } },
    }));
    await expect(documents.send(new TransactWriteCommand({ TransactItems: checks }))).rejects.toThrow(/Transaction payload size cannot exceed 4MB/);
    expect(() => validateTransactionLimits(checks)).toThrow(/may add up to at most 4,194,304 bytes/);
  });

  test('a transaction of exactly 4 MB by that count is accepted by Local and by the check', async () => {
    const updates: TransactWriteItem[] = Array.from({ length: 16 }, (_, i) => ({
      Update: { TableName: table, Key: { pk: `u${String(i).padStart(2, '0')}` }, UpdateExpression: 'SET a = :v', ExpressionAttributeValues: { ':v': '' } },
    }));
    const fixed = updates.reduce((sum, action) => sum + actionPayloadBytes(action), 0);
    const each = (MAX_TRANSACTION_BYTES - fixed) / 16;
    const exact = updates.map((action) => ({ Update: { ...action.Update!, ExpressionAttributeValues: { ':v': 'x'.repeat(each) } } }));
    expect(exact.reduce((sum, action) => sum + actionPayloadBytes(action), 0)).toBe(MAX_TRANSACTION_BYTES);
    expect(() => validateTransactionLimits(exact)).not.toThrow();
    await expect(documents.send(new TransactWriteCommand({ TransactItems: exact }))).resolves.toBeDefined();
    const oneMore = [...exact.slice(0, 15), { Update: { ...exact[15]!.Update, ExpressionAttributeValues: { ':v': 'x'.repeat(each + 1) } } }];
    expect(() => validateTransactionLimits(oneMore)).toThrow(/but these add up to at least 4,194,305 bytes/);
    await expect(documents.send(new TransactWriteCommand({ TransactItems: oneMore }))).rejects.toThrow(/Transaction payload size cannot exceed 4MB/);
  });
});
