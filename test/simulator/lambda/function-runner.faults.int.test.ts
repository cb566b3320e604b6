/**
 * DynamoDB faults through the runner: a handler writing to DynamoDB Local through its environment's proxy (found by
 * the SDK in AWS_ENDPOINT_URL_DYNAMODB), with crashes before and after the commit, throttles and lost responses.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { RequestFault } from '../../../simulator/faults/dynamodb-proxy';
import type { FaultKind } from '../../../simulator/faults/fault-plan';
import type { BatchMessage } from '../../../simulator/faults/fault-steering';
import type { FunctionRunner } from '../../../simulator/lambda/function-runner';
import { createTable, localClient, uniqueTableName } from '../../support/dynamodb-client';
import { assetDirectory, functionModel, requireOf, runner } from './handler-kit';

const table = uniqueTableName('runner-faults');
const WRITER = `
const { DynamoDBClient, PutItemCommand } = ${requireOf('@aws-sdk/client-dynamodb')};
const client = new DynamoDBClient({});
exports.handler = async (event) => {
  await client.send(new PutItemCommand({ TableName: process.env.TABLE_NAME, Item: { pk: { S: event.pk } } }));
  return 'stored ' + event.pk;
};
`;

/** invocation key → request index → fault */
const plan: Record<string, Record<number, RequestFault>> = {
  'crash-before': { 1: 'crash-before' },
  'crash-after': { 1: 'crash-after' },
  throttle: { 1: 'throttle' },
  'lose-response': { 1: 'lose-response' },
};
const requests: { invocationKey: string; index: number; operation: string }[] = [];
/** invocation key → the batch's messages decideFault was given with its requests */
const batches = new Map<string, readonly BatchMessage[]>();
const faults: [FaultKind, string][] = [];
/** The faults each invocation met, by the invocation key the runner was given. */
const faultsOfInvocation: [FaultKind, string][] = [];
let client: DynamoDBClient;
let asset: { directory: string; remove(): void };
let run: FunctionRunner;

beforeAll(async () => {
  client = localClient();
  await createTable(client, table, { partitionKey: 'pk' });
  asset = assetDirectory({ 'index.js': WRITER });
  run = runner(functionModel(asset.directory, { key: 'Stack/Writer' }), {
    environment: { TABLE_NAME: table },
    decideFault: (invocationKey, request, _environment, messages) => {
      batches.set(invocationKey, messages);
      requests.push({ invocationKey, index: request.index, operation: request.operation });
      return plan[invocationKey]?.[request.index] ?? 'none';
    },
    observer: {
      onFault: (kind, subject, detail) => {
        faults.push([kind, subject]);
        if (detail?.invocationKey !== undefined) faultsOfInvocation.push([kind, detail.invocationKey]);
      },
    },
  });
});
afterAll(async () => {
  await run.stop();
  asset.remove();
});

async function stored(pk: string): Promise<boolean> {
  const { Item } = await client.send(new GetItemCommand({ TableName: table, Key: { pk: { S: pk } }, ConsistentRead: true }));
  return Item !== undefined;
}

describe('FunctionRunner with DynamoDB faults', () => {
  test('crash before the request: the invocation ends crashed, nothing is written, the next invocation is a cold start', async () => {
    expect(await run.invoke({ pk: 'crash-before' }, 'crash-before')).toEqual({ kind: 'crashed', atRequest: 1, afterCommit: false });
    expect(await stored('crash-before')).toBe(false);
    expect(faults).toContainEqual(['crash', 'Stack/Writer']);
    expect(await run.invoke({ pk: 'after-crash' }, 'after-crash')).toEqual({ kind: 'returned', response: 'stored after-crash' });
    expect(run.stats()).toEqual({ invocations: 2, coldStarts: 2, preInitialized: 0, crashes: 1 });
  });

  test('crash after the commit: the invocation ends crashed, but the write was applied', async () => {
    expect(await run.invoke({ pk: 'crash-after' }, 'crash-after')).toEqual({ kind: 'crashed', atRequest: 1, afterCommit: true });
    expect(await stored('crash-after')).toBe(true);
    expect(faults).toContainEqual(['crash-after-commit', 'Stack/Writer']);
  });

  test('a throttled request is retried by the SDK and the invocation succeeds', async () => {
    expect(await run.invoke({ pk: 'throttle' }, 'throttle')).toEqual({ kind: 'returned', response: 'stored throttle' });
    expect(requests.filter(({ invocationKey }) => invocationKey === 'throttle')).toEqual([
      { invocationKey: 'throttle', index: 1, operation: 'PutItem' },
      { invocationKey: 'throttle', index: 2, operation: 'PutItem' },
    ]);
    expect(faults).toContainEqual(['throttle', 'Stack/Writer']);
    // the ledger ties the fault to the invocation by its key (a receive failed at an injected fault: observation/injected-receives.ts)
    expect(faultsOfInvocation.filter(([, invocationKey]) => invocationKey === 'throttle')).toEqual([['throttle', 'throttle']]);
  });

  test('a lost response is retried by the SDK (the write was already applied) and the invocation succeeds', async () => {
    expect(await run.invoke({ pk: 'lose-response' }, 'lose-response')).toEqual({ kind: 'returned', response: 'stored lose-response' });
    expect(requests.filter(({ invocationKey }) => invocationKey === 'lose-response').map(({ index }) => index)).toEqual([1, 2]);
    expect(faults).toContainEqual(['lost-response', 'Stack/Writer']);
    expect(await stored('lose-response')).toBe(true);
  });

  test("decideFault is given the messages of the invocation's SQS batch, with their receive counts, event ids and FIFO groups (fault steering counts each message's failed receives and spares its last), none for another event", async () => {
    const record = (messageId: string, eventId: string, attributes: Record<string, string>) => ({ messageId, body: JSON.stringify({ id: eventId, type: 'OrderPlaced' }), attributes });
    await run.invoke({ pk: 'batch', Records: [record('m-1', 'e-1', { ApproximateReceiveCount: '5', MessageGroupId: 'order-1' }), record('m-2', 'e-2', { ApproximateReceiveCount: '1' })] }, 'batch');
    await run.invoke({ pk: 'not-sqs' }, 'not-sqs');
    expect(batches.get('batch')).toEqual([
      { messageId: 'm-1', receiveCount: 5, eventId: 'e-1', groupId: 'order-1' },
      { messageId: 'm-2', receiveCount: 1, eventId: 'e-2' },
    ]);
    expect(batches.get('not-sqs')).toEqual([]);
  });
});
