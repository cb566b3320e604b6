import { DescribeTableCommand, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, test } from 'vitest';
import { createTable, localClient, uniqueTableName } from './dynamodb-client';

describe('DynamoDB Local harness', () => {
  test('serves a real DynamoDB API on loopback', async () => {
    const client = localClient();
    const tableName = uniqueTableName('harness');
    await createTable(client, tableName, { partitionKey: 'pk', sortKey: 'sk' });
    const described = await client.send(new DescribeTableCommand({ TableName: tableName }));
    expect(described.Table?.KeySchema).toEqual([
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ]);
    const listed = await client.send(new ListTablesCommand({}));
    expect(listed.TableNames).toContain(tableName);
  });
});
