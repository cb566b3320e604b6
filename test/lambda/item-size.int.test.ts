/**
 * The item size calculator checked against a real DynamoDB Local: Local rounds write capacity per started 1 KB exactly
 * (see docs/BENCHMARKS.md), so an item the calculator sizes at 1,024 bytes must cost 1 WCU and one at 1,025 bytes 2 WCU;
 * and Local must accept an item of exactly 400 KB and reject one byte more.
 */
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeAll, describe, expect, test } from 'vitest';
import { itemSize, MAX_ITEM_BYTES } from '../../lambda/transaction/item-size';
import { localClient } from '../support/dynamodb-client';
import { createKeyedTable } from '../support/proof/tables';

let documents: DynamoDBDocumentClient;
let table: string;

beforeAll(async () => {
  const client = localClient();
  documents = DynamoDBDocumentClient.from(client);
  table = await createKeyedTable(client, 'item-size');
});

/** `base` padded with a string attribute so that the calculator sizes it at exactly `bytes`. */
function padded(base: Record<string, unknown>, bytes: number): Record<string, unknown> {
  const item = { ...base, pad: '' };
  const missing = bytes - itemSize(item);
  if (missing < 0) throw new Error(`base item is already ${itemSize(item)} bytes`);
  return { ...item, pad: 'x'.repeat(missing) };
}

async function writeUnits(item: Record<string, unknown>): Promise<number | undefined> {
  const response = await documents.send(new PutCommand({ TableName: table, Item: item, ReturnConsumedCapacity: 'TOTAL' }));
  return response.ConsumedCapacity?.CapacityUnits;
}

const shapes: Array<[string, Record<string, unknown>]> = [
  ['strings', { pk: 'strings', name: 'Zoë €uro 😀' }],
  ['numbers', { pk: 'numbers', zero: 0, small: 7, big: 12345678901234, negative: -0.000125, round: 1000000, paired: 123.4, tiny: 1.5e-7 }],
  ['binary, booleans and null', { pk: 'binary', blob: new Uint8Array(33), yes: true, no: false, nothing: null }],
  ['lists and maps', { pk: 'nested', list: ['a', 1, [true]], map: { id: 'e-1', inner: { deep: 'x' } }, empty: {} }],
  ['sets', { pk: 'sets', ss: new Set(['a', 'bc']), ns: new Set([1, 1234]), bs: new Set([new Uint8Array(3)]) }],
  ['a processed-messages list', { pk: 'aggregate', processedMessages: [{ id: 'e-1', fingerprint: `sha256:${'0'.repeat(64)}` }], aggregateVersion: 12 }],
];

describe('itemSize agrees with DynamoDB Local', () => {
  test.each(shapes)('%s: 1,024 bytes cost 1 WCU, 1,025 bytes 2 WCU', async (_name, base) => {
    expect(await writeUnits(padded(base, 1024))).toBe(1);
    expect(await writeUnits(padded(base, 1025))).toBe(2);
  });

  test.each(shapes)('%s: an item of 400 KB is accepted, one byte more is rejected', async (_name, base) => {
    await expect(documents.send(new PutCommand({ TableName: table, Item: padded(base, MAX_ITEM_BYTES) }))).resolves.toBeDefined();
    await expect(documents.send(new PutCommand({ TableName: table, Item: padded(base, MAX_ITEM_BYTES + 1) }))).rejects.toThrow(/size/i);
  });
});
