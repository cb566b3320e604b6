/**
 * Transaction conflicts through the runner: two invocations of one function on two execution environments, each with
 * its own proxy, share the run's arbiter, so a write of one meets the other's ongoing transaction as on DynamoDB. The
 * transaction is held ongoing at a gate between the proxies and DynamoDB Local.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { inject } from 'vitest';
import { TransactionConflicts } from '../../../simulator/aws/transaction-conflicts';
import type { FunctionRunner } from '../../../simulator/lambda/function-runner';
import { createTable, localClient, uniqueTableName } from '../../support/dynamodb-client';
import { startUpstreamGate, type UpstreamGate } from '../../support/upstream-gate';
import { assetDirectory, functionModel, requireOf, runner } from './handler-kit';

const table = uniqueTableName('runner-conflicts');
/** `transaction` writes the item in a TransactWriteItems, `put` with a PutItem; a failure is answered with its name. */
const WRITER = `
const { DynamoDBClient, PutItemCommand, TransactWriteItemsCommand } = ${requireOf('@aws-sdk/client-dynamodb')};
const client = new DynamoDBClient({});
exports.handler = async (event) => {
  const Item = { pk: { S: event.pk }, by: { S: event.action } };
  const command = event.action === 'transaction'
    ? new TransactWriteItemsCommand({ TransactItems: [{ Put: { TableName: process.env.TABLE_NAME, Item } }] })
    : new PutItemCommand({ TableName: process.env.TABLE_NAME, Item });
  try {
    await client.send(command);
    return 'written';
  } catch (error) {
    return error.name;
  }
};
`;

let client: DynamoDBClient;
let gate: UpstreamGate;
let asset: { directory: string; remove(): void };
let conflicts: TransactionConflicts;
let run: FunctionRunner;

beforeAll(async () => {
  client = localClient();
  await createTable(client, table, { partitionKey: 'pk' });
  gate = await startUpstreamGate(inject('dynamoDbEndpoint'));
  asset = assetDirectory({ 'index.js': WRITER });
  conflicts = new TransactionConflicts(async (tableName) => (tableName === table ? ['pk'] : undefined));
  // the function's timeout is real time in the runner: the transaction waits at the gate while the second environment
  // starts cold, which takes longer than the kit's 5 s on a loaded machine (the first invocation was then terminated,
  // its hold released, and the PutItem admitted: seen failing in CI). A limit that catches a hang, not a slow machine
  run = runner(functionModel(asset.directory, { key: 'Stack/Writer', timeoutSeconds: 600 }), {
    environment: { TABLE_NAME: table },
    dynamoDbEndpoint: gate.endpoint,
    maxEnvironments: 2,
    transactionConflicts: conflicts,
  });
});
afterAll(async () => {
  await run.stop();
  await gate.stop();
  asset.remove();
  client.destroy();
});

describe('FunctionRunner with a shared TransactionConflicts', () => {
  test("a PutItem of one environment meets another environment's ongoing transaction: TransactionConflictException", async () => {
    const held = gate.holdNext('TransactWriteItems');
    const transaction = run.invoke({ action: 'transaction', pk: 'contended' }, 'transaction');
    await held.arrived;
    // the first environment is busy with the transaction: this invocation gets the second
    expect(await run.invoke({ action: 'put', pk: 'contended' }, 'put')).toEqual({ kind: 'returned', response: 'TransactionConflictException' });
    held.release();
    expect(await transaction).toEqual({ kind: 'returned', response: 'written' });
    expect(run.stats().coldStarts).toBe(2);
    expect(conflicts.figures()).toEqual({ refused: 1, byOperation: { PutItem: 1 } });
    const { Item } = await client.send(new GetItemCommand({ TableName: table, Key: { pk: { S: 'contended' } }, ConsistentRead: true }));
    expect(Item?.by?.S).toBe('transaction');
  });
});
