/**
 * The simulator's DynamoDB proxies with one shared arbiter of transaction conflicts, against DynamoDB Local: requests of
 * different execution environments meet as they would on DynamoDB, and the arbiter decides last, after IAM and after the
 * request's fault. A transaction is held ongoing at a gate between the proxy and DynamoDB Local for as long as a test
 * wants.
 */
import { DynamoDBClient, GetItemCommand, PutItemCommand, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { inject } from 'vitest';
import { TransactionConflicts } from '../../../simulator/aws/transaction-conflicts';
import { startDynamoDbProxy, type DynamoDbProxy, type ProxiedCrash, type RequestFault } from '../../../simulator/faults/dynamodb-proxy';
import { createTable, LOCAL_CREDENTIALS, localClient, uniqueTableName } from '../../support/dynamodb-client';
import { startUpstreamGate, whileOngoing, type UpstreamGate } from '../../support/upstream-gate';

const table = uniqueTableName('proxy-conflicts');
let direct: DynamoDBClient;
let gate: UpstreamGate;
let conflicts: TransactionConflicts;
/** Two environments' proxies sharing `conflicts`, and one that denies every request (IAM). */
let first: DynamoDbProxy;
let second: DynamoDbProxy;
let denying: DynamoDbProxy;
/** Each proxy's client; none retries, so each refusal reaches the test as it is. */
const clients = new Map<DynamoDbProxy, DynamoDBClient>();

function clientOf(proxy: DynamoDbProxy): DynamoDBClient {
  let client = clients.get(proxy);
  if (client === undefined) {
    client = new DynamoDBClient({ endpoint: proxy.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
    clients.set(proxy, client);
  }
  return client;
}

/** A put; `giveUpAfterMs` aborts it when no answer came by then (a crashed request is never answered). */
function put(proxy: DynamoDbProxy, pk: string, giveUpAfterMs?: number): Promise<unknown> {
  const abortSignal = giveUpAfterMs === undefined ? undefined : AbortSignal.timeout(giveUpAfterMs);
  return clientOf(proxy).send(new PutItemCommand({ TableName: table, Item: { pk: { S: pk }, by: { S: 'put' } } }), { abortSignal });
}

async function storedBy(pk: string): Promise<string | undefined> {
  const { Item } = await direct.send(new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true }));
  return Item?.by?.S;
}

/** Holds a transaction of `first` on item `pk` ongoing at the gate while `meanwhile` runs; then lets it commit. */
function whileTransactionOngoing(pk: string, meanwhile: () => Promise<void>): Promise<void> {
  const transaction = new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: table, Item: { pk: { S: pk }, by: { S: 'transaction' } } } }] });
  return whileOngoing(gate, 'TransactWriteItems', () => clientOf(first).send(transaction), meanwhile);
}

/** Starts an invocation on `proxy` whose requests all get `fault`; returns the crashes it reports. */
function invocation(proxy: DynamoDbProxy, fault: RequestFault): ProxiedCrash[] {
  const crashes: ProxiedCrash[] = [];
  proxy.beginInvocation(
    () => fault,
    (crash) => crashes.push(crash),
  );
  return crashes;
}

beforeAll(async () => {
  direct = localClient();
  await createTable(direct, table, { partitionKey: 'pk' });
  gate = await startUpstreamGate(inject('dynamoDbEndpoint'));
  conflicts = new TransactionConflicts(async (tableName) => (tableName === table ? ['pk'] : undefined));
  first = await startDynamoDbProxy(gate.endpoint, { transactionConflicts: conflicts });
  second = await startDynamoDbProxy(gate.endpoint, { transactionConflicts: conflicts });
  denying = await startDynamoDbProxy(gate.endpoint, { transactionConflicts: conflicts, authorize: async () => 'no identity-based policy allows the dynamodb:PutItem action' });
});
afterAll(async () => {
  for (const client of clients.values()) client.destroy();
  await Promise.all([first.stop(), second.stop(), denying.stop()]);
  await gate.stop();
  direct.destroy();
});

describe('DynamoDB proxies sharing one TransactionConflicts', () => {
  test("a write of one environment meets another environment's ongoing transaction: TransactionConflictException, not applied", async () => {
    const before = conflicts.figures().refused;
    await whileTransactionOngoing('shared', async () => {
      invocation(second, 'none');
      expect(await put(second, 'shared').catch((error: unknown) => error)).toMatchObject({ name: 'TransactionConflictException' });
      second.endInvocation();
      // outside an invocation too
      expect(await put(second, 'shared').catch((error: unknown) => error)).toMatchObject({ name: 'TransactionConflictException' });
      await put(second, 'shared-other');
    });
    expect(await storedBy('shared')).toBe('transaction');
    expect(await storedBy('shared-other')).toBe('put');
    expect(conflicts.figures().refused - before).toBe(2);
    // the transaction's reply came back: the item is free again
    await put(second, 'shared');
    expect(await storedBy('shared')).toBe('put');
  });

  test('IAM decides first: a denied request is AccessDeniedException, not a conflict', async () => {
    const before = conflicts.figures().refused;
    await whileTransactionOngoing('denied', async () => {
      expect(await put(denying, 'denied').catch((error: unknown) => error)).toMatchObject({ name: 'AccessDeniedException' });
    });
    expect(conflicts.figures().refused).toBe(before);
  });

  test('the fault decides next: a throttled or crashed-before request never reaches the arbiter', async () => {
    const before = conflicts.figures().refused;
    await whileTransactionOngoing('faulted', async () => {
      invocation(second, 'throttle');
      expect(await put(second, 'faulted').catch((error: unknown) => error)).toMatchObject({ name: 'ThrottlingException' });
      second.endInvocation();
      const crashes = invocation(second, 'crash-before');
      expect(await put(second, 'faulted', 300).catch((error: unknown) => error)).toMatchObject({ name: 'AbortError' });
      second.endInvocation();
      expect(crashes).toEqual([{ atRequest: 1, afterCommit: false }]);
    });
    expect(conflicts.figures().refused).toBe(before);
  });

  test('a request that would be forwarded is refused when it conflicts: lose-response loses the refusal, crash-after crashes with nothing applied', async () => {
    const before = conflicts.figures().refused;
    await whileTransactionOngoing('forwarded', async () => {
      invocation(second, 'lose-response');
      const lost = await put(second, 'forwarded').catch((error: unknown) => error);
      second.endInvocation();
      expect(String((lost as Error).message)).toMatch(/socket hang up|ECONNRESET/);
      const crashes = invocation(second, 'crash-after');
      expect(await put(second, 'forwarded', 300).catch((error: unknown) => error)).toMatchObject({ name: 'AbortError' });
      second.endInvocation();
      expect(crashes).toEqual([{ atRequest: 1, afterCommit: false }]);
    });
    expect(await storedBy('forwarded')).toBe('transaction');
    expect(conflicts.figures().refused - before).toBe(2);
  });
});
