/**
 * The served DynamoDB endpoint (simulate --serve) answers UpdateTimeToLive itself, from the TTL it tells for each
 * table, and never lets it reach DynamoDB Local: there it would turn on deletion by the machine's clock (a time bomb
 * for a run on its own clock), and DescribeTimeToLive would go on telling the template's TTL after the operator
 * disabled it (review r18a, R18A-3). It refuses what DynamoDB refuses, with DynamoDB's texts.
 */
import { CreateTableCommand, DeleteTableCommand, DescribeTimeToLiveCommand, DynamoDBClient, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { startTableClockProxy } from '../../../simulator/aws/table-clock-proxy';
import { LOCAL_CREDENTIALS, localClient, uniqueTableName } from '../../support/dynamodb-client';

const outbox = uniqueTableName('ServedOutbox');
const plain = uniqueTableName('ServedPlain');

let proxy: LoopbackServer;
let served: DynamoDBClient;
const direct = localClient();

const create = (tableName: string) =>
  direct.send(new CreateTableCommand({ TableName: tableName, KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], BillingMode: 'PAY_PER_REQUEST' }));

beforeAll(async () => {
  await Promise.all([create(outbox), create(plain)]);
  // the run's outbox has TTL on `expiresAt` in its template; the other table none
  proxy = await startTableClockProxy(inject('dynamoDbEndpoint'), (_tableName, realCreatedAt) => realCreatedAt, async (tableName) => (tableName === outbox ? 'expiresAt' : undefined));
  served = new DynamoDBClient({ endpoint: proxy.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
});

afterAll(async () => {
  await proxy?.stop();
});

const describeServed = async (tableName: string) => (await served.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
const describeDirect = async (tableName: string) => (await direct.send(new DescribeTimeToLiveCommand({ TableName: tableName }))).TimeToLiveDescription;
const update = async (tableName: string, AttributeName: string, Enabled: boolean) => {
  try {
    return (await served.send(new UpdateTimeToLiveCommand({ TableName: tableName, TimeToLiveSpecification: { AttributeName, Enabled } }))).TimeToLiveSpecification;
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
};

describe('the served endpoint answers UpdateTimeToLive from the TTL it tells', () => {
  test("a run table with the template's TTL: enabling again is refused; disabling is told by DescribeTimeToLive after; enabling again is told too; DynamoDB Local's own TTL stays off", async () => {
    expect(await describeServed(outbox)).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresAt' });
    expect(await update(outbox, 'expiresAt', true)).toBe('ValidationException: TimeToLive is already enabled');
    expect(await update(outbox, 'ttl', true)).toBe('ValidationException: TimeToLive is active on a different AttributeName');
    expect(await update(outbox, 'ttl', false)).toBe('ValidationException: TimeToLive is active on a different AttributeName');
    expect(await describeDirect(outbox)).toEqual({ TimeToLiveStatus: 'DISABLED' });

    expect(await update(outbox, 'expiresAt', false)).toEqual({ AttributeName: 'expiresAt', Enabled: false });
    expect(await describeServed(outbox)).toEqual({ TimeToLiveStatus: 'DISABLED' });
    expect(await update(outbox, 'expiresAt', false)).toBe('ValidationException: TimeToLive is already disabled');

    expect(await update(outbox, 'expiresOn', true)).toEqual({ AttributeName: 'expiresOn', Enabled: true });
    expect(await describeServed(outbox)).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'expiresOn' });
    // DynamoDB Local never saw any of it: it would delete by the machine's clock
    expect(await describeDirect(outbox)).toEqual({ TimeToLiveStatus: 'DISABLED' });
  });

  test('a table without TTL: disabling is refused, enabling is told and never reaches DynamoDB Local; a table made again under its name starts without it', async () => {
    expect(await update(plain, 'ttl', false)).toBe('ValidationException: TimeToLive is already disabled');
    expect(await update(plain, 'ttl', true)).toEqual({ AttributeName: 'ttl', Enabled: true });
    expect(await describeServed(plain)).toEqual({ TimeToLiveStatus: 'ENABLED', AttributeName: 'ttl' });
    expect(await describeDirect(plain)).toEqual({ TimeToLiveStatus: 'DISABLED' });
    // deleted and made again (a restore under its own name): a new table, whose TTL DynamoDB restores not
    await direct.send(new DeleteTableCommand({ TableName: plain }));
    await create(plain);
    expect(await describeServed(plain)).toEqual({ TimeToLiveStatus: 'DISABLED' });
  });

  test('a table that does not exist and a malformed specification are refused as DynamoDB refuses them', async () => {
    expect(await update(uniqueTableName('Missing'), 'ttl', true)).toBe('ResourceNotFoundException: Cannot do operations on a non-existent table');
    expect(await update(plain, '', true)).toMatch(/^ValidationException: /);
    expect(await describeDirect(plain)).toEqual({ TimeToLiveStatus: 'DISABLED' });
  });
});
