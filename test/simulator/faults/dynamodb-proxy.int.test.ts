/**
 * The per-environment DynamoDB fault proxy against the shared DynamoDB Local: requests are forwarded, numbered within
 * an invocation, and each fault does what it says to the client and to the table.
 */
import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { inject } from 'vitest';
import { startDynamoDbProxy, type DynamoDbProxy, type ProxiedCrash, type ProxiedRequest, type RequestFault } from '../../../simulator/faults/dynamodb-proxy';
import { createTable, LOCAL_CREDENTIALS, localClient, uniqueTableName } from '../../support/dynamodb-client';

const table = uniqueTableName('proxy');
let proxy: DynamoDbProxy;
let direct: DynamoDBClient;

/** A client of the proxy that does not retry, so each fault reaches the test as it is. */
function proxiedClient(): DynamoDBClient {
  return new DynamoDBClient({ endpoint: proxy.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
}

/** A put; `giveUpAfterMs` aborts it when no answer came by then (a crashed request is never answered). */
function put(client: DynamoDBClient, pk: string, giveUpAfterMs?: number): Promise<unknown> {
  const abortSignal = giveUpAfterMs === undefined ? undefined : AbortSignal.timeout(giveUpAfterMs);
  return client.send(new PutItemCommand({ TableName: table, Item: { pk: { S: pk } } }), { abortSignal });
}

async function exists(pk: string): Promise<boolean> {
  const { Item } = await direct.send(new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true }));
  return Item !== undefined;
}

/** Starts an invocation whose faults come from `faults` by request index, recording what the proxy saw. */
function begin(faults: Record<number, RequestFault> = {}): { seen: ProxiedRequest[]; crashes: ProxiedCrash[] } {
  const seen: ProxiedRequest[] = [];
  const crashes: ProxiedCrash[] = [];
  proxy.beginInvocation(
    (request) => {
      seen.push(request);
      return faults[request.index] ?? 'none';
    },
    (crash) => crashes.push(crash),
  );
  return { seen, crashes };
}

beforeAll(async () => {
  direct = localClient();
  await createTable(direct, table, { partitionKey: 'pk' });
  proxy = await startDynamoDbProxy(inject('dynamoDbEndpoint'));
});
afterAll(() => proxy.stop());

describe('DynamoDB fault proxy', () => {
  test('forwards requests outside an invocation without asking for faults', async () => {
    const client = proxiedClient();
    await put(client, 'outside');
    expect(await exists('outside')).toBe(true);
  });

  test('numbers the requests of an invocation from 1 and names their operation; a new invocation starts again at 1', async () => {
    const client = proxiedClient();
    const first = begin();
    await put(client, 'numbered-1');
    await client.send(new GetItemCommand({ TableName: table, Key: { pk: { S: 'numbered-1' } } }));
    proxy.endInvocation();
    expect(first.seen.map(({ index, operation }) => ({ index, operation }))).toEqual([
      { index: 1, operation: 'PutItem' },
      { index: 2, operation: 'GetItem' },
    ]);
    expect(JSON.parse(first.seen[0].body.toString('utf8'))).toMatchObject({ TableName: table, Item: { pk: { S: 'numbered-1' } } });

    const second = begin();
    await put(client, 'numbered-2');
    proxy.endInvocation();
    expect(second.seen.map(({ index }) => index)).toEqual([1]);
  });

  test('throttle: the client gets a ThrottlingException and the write is not applied', async () => {
    begin({ 1: 'throttle' });
    const error = await put(proxiedClient(), 'throttled').catch((caught: unknown) => caught);
    proxy.endInvocation();
    expect(error).toMatchObject({ name: 'ThrottlingException', $metadata: { httpStatusCode: 400 } });
    expect(await exists('throttled')).toBe(false);
  });

  test('lose-response: the write is applied but the client never gets the reply', async () => {
    begin({ 1: 'lose-response' });
    const error = await put(proxiedClient(), 'lost').catch((caught: unknown) => caught);
    proxy.endInvocation();
    expect(error).toBeInstanceOf(Error);
    expect(String((error as Error).message)).toMatch(/socket hang up|ECONNRESET/);
    expect(await exists('lost')).toBe(true);
  });

  test('crash-before: onCrash hears of it, the request is never forwarded nor answered, and neither is any later one', async () => {
    const { crashes } = begin({ 2: 'crash-before' });
    const client = proxiedClient();
    await put(client, 'before-crash');
    const crashed = await put(client, 'crashed-before', 300).catch((caught: unknown) => caught);
    const after = await put(client, 'after-crash', 300).catch((caught: unknown) => caught);
    proxy.endInvocation();
    expect(crashes).toEqual([{ atRequest: 2, afterCommit: false }]);
    expect(crashed).toMatchObject({ name: 'AbortError' });
    expect(after).toMatchObject({ name: 'AbortError' });
    expect(await exists('before-crash')).toBe(true);
    expect(await exists('crashed-before')).toBe(false);
    expect(await exists('after-crash')).toBe(false);
  });

  test('crash-after: the write is applied, onCrash hears of it after the commit, and the client gets no answer', async () => {
    const { crashes } = begin({ 1: 'crash-after' });
    const crashed = await put(proxiedClient(), 'crashed-after', 300).catch((caught: unknown) => caught);
    proxy.endInvocation();
    expect(crashes).toEqual([{ atRequest: 1, afterCommit: true }]);
    expect(crashed).toMatchObject({ name: 'AbortError' });
    expect(await exists('crashed-after')).toBe(true);
  });

  test('onAnswered hears whether DynamoDB applied each request, its reply lost or not: none for a throttled one, not applied for a refused condition, with the refusal', async () => {
    const answers: { index: number; applied: boolean }[] = [];
    const refusals: string[] = [];
    const faults: Record<number, RequestFault> = { 2: 'lose-response', 3: 'throttle', 5: 'crash-after' };
    proxy.beginInvocation(
      (request) => faults[request.index] ?? 'none',
      () => undefined,
      (request, answer) => {
        answers.push({ index: request.index, applied: answer.applied });
        if (answer.refusal !== undefined) refusals.push(answer.refusal.toString('utf8'));
      },
    );
    const client = proxiedClient();
    await put(client, 'answered-1');
    await put(client, 'answered-2').catch(() => undefined);
    await put(client, 'answered-3').catch(() => undefined);
    const refused = new PutItemCommand({ TableName: table, Item: { pk: { S: 'answered-1' } }, ConditionExpression: 'attribute_not_exists(pk)' });
    await client.send(refused).catch(() => undefined);
    await put(client, 'answered-5', 300).catch(() => undefined);
    proxy.endInvocation();
    expect(answers).toEqual([
      { index: 1, applied: true },
      { index: 2, applied: true },
      { index: 4, applied: false },
      { index: 5, applied: true },
    ]);
    // the refusal's body: what the ledger reads a transaction's cancellation reasons from (observation/outbox-writes.ts)
    expect(refusals).toEqual([expect.stringContaining('ConditionalCheckFailedException')]);
  });

  test('after endInvocation, requests are forwarded again', async () => {
    begin({ 1: 'crash-before' });
    proxy.endInvocation();
    await put(proxiedClient(), 'after-end');
    expect(await exists('after-end')).toBe(true);
  });
});
