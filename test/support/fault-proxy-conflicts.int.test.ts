/**
 * The fault proxy's `transactionConflicts` option against DynamoDB Local: a request is held ongoing at a gate between
 * the proxy and DynamoDB Local (forwarded by the proxy, not yet answered) for as long as the test wants, and the SDK sees
 * what real DynamoDB answers a request that meets it (transaction-apis.html#transaction-conflict-handling).
 */
import {
  BatchWriteItemCommand,
  DynamoDBClient,
  GetItemCommand,
  PutItemCommand,
  TransactGetItemsCommand,
  TransactWriteItemsCommand,
  UpdateItemCommand,
  type AttributeValue,
  type TransactWriteItem,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { inject } from 'vitest';
import { TransactionConflicts } from '../../simulator/aws/transaction-conflicts';
import { describedKeySchemas } from './described-key-schemas';
import { createTable, LOCAL_CREDENTIALS, localClient, uniqueTableName } from './dynamodb-client';
import { startFaultProxy, type FaultProxy } from './fault-proxy';
import { startUpstreamGate, whileOngoing, type UpstreamGate } from './upstream-gate';

const table = uniqueTableName('conflicts');
let direct: DynamoDBClient;
let gate: UpstreamGate;
let proxy: FaultProxy;
let client: DynamoDBClient;

/** A client of `endpoint` that does not retry, so each refusal reaches the test as it is. */
function clientOf(endpoint: string): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
}

const key = (pk: string, sk = '1'): Record<string, AttributeValue> => ({ pk: { S: pk }, sk: { S: sk } });
const putAction = (pk: string, sk = '1'): TransactWriteItem => ({ Put: { TableName: table, Item: { ...key(pk, sk), state: { S: 'put' } } } });
const updateAction = (pk: string, sk = '1'): TransactWriteItem => ({ Update: { TableName: table, Key: key(pk, sk), UpdateExpression: 'SET #s = :s', ExpressionAttributeNames: { '#s': 'state' }, ExpressionAttributeValues: { ':s': { S: 'updated' } } } });
const transactWrite = (via: DynamoDBClient, ...actions: TransactWriteItem[]): Promise<unknown> => via.send(new TransactWriteItemsCommand({ TransactItems: actions }));
const putItem = (via: DynamoDBClient, pk: string, sk = '1'): Promise<unknown> => via.send(new PutItemCommand({ TableName: table, Item: { ...key(pk, sk), state: { S: 'single' } } }));
const transactGet = (via: DynamoDBClient, ...pks: string[]): Promise<unknown> => via.send(new TransactGetItemsCommand({ TransactItems: pks.map((pk) => ({ Get: { TableName: table, Key: key(pk) } })) }));

async function stateOf(pk: string, sk = '1'): Promise<string | undefined> {
  const { Item } = await direct.send(new GetItemCommand({ TableName: table, Key: key(pk, sk), ConsistentRead: true }));
  return Item?.state?.S;
}

beforeAll(async () => {
  direct = localClient();
  // partition and sort key: a Put's item is named by both, read from the key schema
  await createTable(direct, table, { partitionKey: 'pk', sortKey: 'sk' });
  gate = await startUpstreamGate(inject('dynamoDbEndpoint'));
  proxy = await startFaultProxy(gate.endpoint, { transactionConflicts: true });
  client = clientOf(proxy.endpoint);
});
afterAll(async () => {
  client.destroy();
  await proxy.stop();
  await gate.stop();
  direct.destroy();
});

describe('fault proxy with transactionConflicts: rule 1, a single write meets an ongoing TransactWriteItems', () => {
  test('a PutItem and an UpdateItem on an item of the transaction fail with TransactionConflictException, unapplied; another item passes', async () => {
    const before = proxy.transactionConflictFigures();
    await whileOngoing(
      gate,
      'TransactWriteItems',
      () => transactWrite(client, putAction('r1'), putAction('r1-other')),
      async () => {
        const putError = await putItem(client, 'r1').catch((error: unknown) => error);
        expect(putError).toMatchObject({ name: 'TransactionConflictException', $metadata: { httpStatusCode: 400 } });
        const updateError = await client
          .send(new UpdateItemCommand({ TableName: table, Key: key('r1'), UpdateExpression: 'SET #s = :s', ExpressionAttributeNames: { '#s': 'state' }, ExpressionAttributeValues: { ':s': { S: 'single' } } }))
          .catch((error: unknown) => error);
        expect(updateError).toMatchObject({ name: 'TransactionConflictException' });
        // same partition key, other sort key: another item
        await putItem(client, 'r1', '2');
      },
    );
    expect(await stateOf('r1')).toBe('put');
    expect(await stateOf('r1', '2')).toBe('single');
    const after = proxy.transactionConflictFigures();
    expect(after.refused - before.refused).toBe(2);
  });

  test("the Put's item is named by its key attributes alone: an Update of the same key conflicts whatever else the Put carries", async () => {
    await whileOngoing(
      gate,
      'TransactWriteItems',
      () => transactWrite(client, { Put: { TableName: table, Item: { ...key('r2'), state: { S: 'put' }, note: { S: 'x' } } } }),
      async () => {
        const error = await transactWrite(client, updateAction('r2')).catch((caught: unknown) => caught);
        expect(error).toMatchObject({ name: 'TransactionCanceledException' });
      },
    );
  });

  test('the item is let go when the reply has come back: a later write on it passes', async () => {
    await whileOngoing(gate, 'TransactWriteItems', () => transactWrite(client, putAction('r3')), async () => undefined);
    await putItem(client, 'r3');
    expect(await stateOf('r3')).toBe('single');
  });
});

describe('fault proxy with transactionConflicts: rule 2, a TransactWriteItems meets another ongoing one', () => {
  test('the second is cancelled with CancellationReasons [None, TransactionConflict] and applies nothing', async () => {
    await whileOngoing(
      gate,
      'TransactWriteItems',
      () => transactWrite(client, putAction('t1')),
      async () => {
        const error = await transactWrite(client, putAction('t1-free'), updateAction('t1')).catch((caught: unknown) => caught);
        expect(error).toMatchObject({
          name: 'TransactionCanceledException',
          CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }],
        });
      },
    );
    expect(await stateOf('t1')).toBe('put');
    expect(await stateOf('t1-free')).toBeUndefined();
  });

  test('transactions on disjoint items both commit', async () => {
    await whileOngoing(
      gate,
      'TransactWriteItems',
      () => transactWrite(client, putAction('d1'), putAction('d2')),
      () => transactWrite(client, putAction('d3'), putAction('d4')).then(() => undefined),
    );
    expect(await Promise.all(['d1', 'd2', 'd3', 'd4'].map((pk) => stateOf(pk)))).toEqual(['put', 'put', 'put', 'put']);
  });

  test('a transaction meeting an ongoing single PutItem is not a listed conflict: it commits', async () => {
    await whileOngoing(
      gate,
      'PutItem',
      () => putItem(client, 'p1'),
      () => transactWrite(client, updateAction('p1')).then(() => undefined),
    );
    expect(await stateOf('p1')).toBe('single');
  });
});

describe('fault proxy with transactionConflicts: rule 3, a TransactGetItems meets an ongoing write', () => {
  test.each([
    ['TransactWriteItems', (pk: string) => transactWrite(client, putAction(pk))],
    ['PutItem', (pk: string) => putItem(client, pk)],
    ['BatchWriteItem', (pk: string) => client.send(new BatchWriteItemCommand({ RequestItems: { [table]: [{ PutRequest: { Item: { ...key(pk), state: { S: 'batch' } } } }] } }))],
  ])('an ongoing %s cancels it, with the reason at the index of the conflicting Get', async (operation, write) => {
    const pk = `g-${operation}`;
    await whileOngoing(
      gate,
      operation,
      () => write(pk),
      async () => {
        const error = await transactGet(client, 'g-free', pk).catch((caught: unknown) => caught);
        expect(error).toMatchObject({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }] });
        // a plain read is no conflict
        await client.send(new GetItemCommand({ TableName: table, Key: key(pk) }));
      },
    );
    expect(await transactGet(client, 'g-free', pk)).toMatchObject({ Responses: [{}, { Item: key(pk) }] });
  });
});

describe('fault proxy with transactionConflicts: sharing and the default', () => {
  test('proxies sharing one arbiter see each other’s ongoing requests, and both count what it refused', async () => {
    const shared = new TransactionConflicts(describedKeySchemas(direct));
    const first = await startFaultProxy(gate.endpoint, { transactionConflicts: shared });
    const second = await startFaultProxy(gate.endpoint, { transactionConflicts: shared });
    const [firstClient, secondClient] = [clientOf(first.endpoint), clientOf(second.endpoint)];
    try {
      await whileOngoing(
        gate,
        'TransactWriteItems',
        () => transactWrite(firstClient, putAction('s1')),
        async () => {
          expect(await putItem(secondClient, 's1').catch((error: unknown) => error)).toMatchObject({ name: 'TransactionConflictException' });
        },
      );
      expect(first.transactionConflictFigures()).toEqual({ refused: 1, byOperation: { PutItem: 1 } });
      expect(second.transactionConflictFigures()).toEqual({ refused: 1, byOperation: { PutItem: 1 } });
    } finally {
      firstClient.destroy();
      secondClient.destroy();
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  test('without the option nothing is refused: the write passes while the transaction is ongoing, as DynamoDB Local serializes them', async () => {
    const plain = await startFaultProxy(gate.endpoint);
    const plainClient = clientOf(plain.endpoint);
    try {
      await whileOngoing(
        gate,
        'TransactWriteItems',
        () => transactWrite(plainClient, putAction('off1')),
        () => putItem(plainClient, 'off1').then(() => undefined),
      );
      // the put was applied first; the held transaction went on to DynamoDB Local after it
      expect(await stateOf('off1')).toBe('put');
      expect(plain.transactionConflictFigures()).toEqual({ refused: 0, byOperation: {} });
    } finally {
      plainClient.destroy();
      await plain.stop();
    }
  });
});
