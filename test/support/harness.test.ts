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
    // every page: the shared server holds the tables of every test file (a page has at most 100 names)
    const listed: string[] = [];
    let startAfter: string | undefined;
    do {
      const page = await client.send(new ListTablesCommand({ ExclusiveStartTableName: startAfter }));
      listed.push(...(page.TableNames ?? []));
      startAfter = page.LastEvaluatedTableName;
    } while (startAfter !== undefined);
    expect(listed).toContain(tableName);
  });
});
