import { DescribeTableCommand, DescribeTimeToLiveCommand, PutItemCommand, QueryCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { App, Stack } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, test } from 'vitest';
import { InboxTable } from '../../../lib/consumer/inbox-table';
import { OutboxTable } from '../../../lib/outbox';
import { createTableInput, createTables, type LocalTable } from '../../../simulator/aws/tables';
import type { TableModel } from '../../../simulator/model/flow-model';
import { localClient, uniqueTableName } from '../../support/dynamodb-client';
import { BLOCKED_MESSAGES_INDEX } from '../support/example-models';

const STACK = 'TablesTest';

/** The tables the library's own constructs synthesize (what the example app's outbox and inboxes are), as table models. */
function tablesOfTheConstructs(): { outbox: TableModel; inbox: TableModel } {
  const app = new App({ builtinCloudFormationValidation: false, context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, STACK);
  new OutboxTable(stack, 'Outbox');
  new InboxTable(stack, 'Inbox');
  const resources = Template.fromStack(stack).findResources('AWS::DynamoDB::Table');
  const model = (logicalId: string): TableModel => {
    const properties = resources[logicalId]?.Properties as Record<string, never>;
    const stream = properties.StreamSpecification as { StreamViewType?: TableModel['streamViewType'] } | undefined;
    const timeToLive = properties.TimeToLiveSpecification as { AttributeName: string; Enabled: boolean } | undefined;
    return {
      key: `${STACK}/${logicalId}`,
      stackName: STACK,
      logicalId,
      keySchema: properties.KeySchema,
      attributeDefinitions: properties.AttributeDefinitions,
      globalSecondaryIndexes: properties.GlobalSecondaryIndexes ?? [],
      localSecondaryIndexes: properties.LocalSecondaryIndexes ?? [],
      ...(stream?.StreamViewType !== undefined && { streamViewType: stream.StreamViewType }),
      ...(timeToLive?.Enabled === true && { timeToLiveAttribute: timeToLive.AttributeName }),
    };
  };
  const logicalIdStartingWith = (prefix: string): string => {
    const [logicalId, ...others] = Object.keys(resources).filter((id) => id.startsWith(prefix));
    if (logicalId === undefined || others.length > 0) throw new Error(`expected one table whose logical id starts with ${prefix}: ${Object.keys(resources).join(', ')}`);
    return logicalId;
  };
  return { outbox: model(logicalIdStartingWith('Outbox')), inbox: model(logicalIdStartingWith('Inbox')) };
}

let client: DynamoDBClient;
let models: { outbox: TableModel; inbox: TableModel };
let created: ReadonlyMap<string, LocalTable>;

beforeAll(async () => {
  client = localClient();
  models = tablesOfTheConstructs();
  const names = new Map([models.outbox, models.inbox].map((table) => [table.key, uniqueTableName(table.logicalId)]));
  created = await createTables(client, [models.outbox, models.inbox], (table) => names.get(table.key) ?? 'unknown');
});

const describeTable = async (key: string) => {
  const local = created.get(key);
  if (local === undefined) throw new Error(`no local table for ${key}`);
  return (await client.send(new DescribeTableCommand({ TableName: local.tableName }))).Table;
};

describe('createTables on the tables of the library constructs', () => {
  test('the template models are what the example app synthesizes: outbox with stream and TTL, inbox with a GSI and TTL', () => {
    expect(models.outbox.streamViewType).toBe('NEW_IMAGE');
    expect(models.outbox.timeToLiveAttribute).toBe('expiresAt');
    expect(models.outbox.keySchema.map((key) => key.KeyType)).toEqual(['HASH', 'RANGE']);
    expect(models.inbox.globalSecondaryIndexes.map((index) => index.IndexName)).toEqual(['BlockedMessages']);
    expect(models.inbox.timeToLiveAttribute).toBe('expiresAt');
    expect(models.inbox.streamViewType).toBeUndefined();
  });

  test('returns every table by resource key with its name and ARN, and the stream ARN only where there is a stream', () => {
    const outbox = created.get(models.outbox.key);
    const inbox = created.get(models.inbox.key);
    expect(outbox?.tableName).toMatch(/^Outbox/);
    expect(outbox?.tableArn).toMatch(new RegExp(`:table/${outbox?.tableName}$`));
    expect(outbox?.streamArn).toMatch(new RegExp(`:table/${outbox?.tableName}/stream/`));
    expect(inbox?.tableArn).toMatch(new RegExp(`:table/${inbox?.tableName}$`));
    expect(inbox).not.toHaveProperty('streamArn');
  });

  test('creates the outbox as the template defines it: keys, on-demand, stream with new images; TTL not turned on in DynamoDB Local (it deletes by the real clock)', async () => {
    const table = await describeTable(models.outbox.key);
    expect(table?.TableStatus).toBe('ACTIVE');
    expect(table?.KeySchema).toEqual(models.outbox.keySchema);
    expect(table?.AttributeDefinitions).toEqual(expect.arrayContaining([...models.outbox.attributeDefinitions]));
    expect(table?.BillingModeSummary?.BillingMode).toBe('PAY_PER_REQUEST');
    expect(table?.StreamSpecification).toEqual({ StreamEnabled: true, StreamViewType: 'NEW_IMAGE' });
    // the served endpoint tells the template's TTL (table-clock-proxy.ts); DynamoDB Local's own would delete by the real clock
    const timeToLive = await client.send(new DescribeTimeToLiveCommand({ TableName: created.get(models.outbox.key)?.tableName }));
    expect(timeToLive.TimeToLiveDescription?.TimeToLiveStatus).toBe('DISABLED');
  });

  test('creates the inbox with its BlockedMessages index (keys and projection kept), and the index answers queries', async () => {
    const table = await describeTable(models.inbox.key);
    expect(table?.GlobalSecondaryIndexes?.map(({ IndexName, KeySchema, Projection, IndexStatus }) => ({ IndexName, KeySchema, Projection, IndexStatus }))).toEqual([
      { ...BLOCKED_MESSAGES_INDEX, IndexStatus: 'ACTIVE' },
    ]);
    const tableName = created.get(models.inbox.key)?.tableName;
    await client.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'billing#e1' }, blockedSubscriber: { S: 'billing' }, blockedAt: { S: '2024-01-01T00:00:00Z' } } }));
    const blocked = await client.send(
      new QueryCommand({
        TableName: tableName,
        IndexName: 'BlockedMessages',
        KeyConditionExpression: 'blockedSubscriber = :subscriber',
        ExpressionAttributeValues: { ':subscriber': { S: 'billing' } },
      }),
    );
    expect(blocked.Items?.map((item) => item.pk?.S)).toEqual(['billing#e1']);
    const timeToLive = await client.send(new DescribeTimeToLiveCommand({ TableName: tableName }));
    expect(timeToLive.TimeToLiveDescription?.TimeToLiveStatus).toBe('DISABLED');
  });
});

describe('createTables with other template settings', () => {
  const base: TableModel = {
    key: `${STACK}/Other`,
    stackName: STACK,
    logicalId: 'Other',
    keySchema: [
      { AttributeName: 'pk', KeyType: 'HASH' },
      { AttributeName: 'sk', KeyType: 'RANGE' },
    ],
    attributeDefinitions: [
      { AttributeName: 'pk', AttributeType: 'S' },
      { AttributeName: 'sk', AttributeType: 'S' },
      { AttributeName: 'at', AttributeType: 'N' },
    ],
    globalSecondaryIndexes: [],
    localSecondaryIndexes: [],
  };

  test('keeps a local secondary index with an INCLUDE projection, and a stream of new and old images', async () => {
    const table: TableModel = {
      ...base,
      localSecondaryIndexes: [
        { IndexName: 'ByTime', KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }, { AttributeName: 'at', KeyType: 'RANGE' }], Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['status'] } },
      ],
      streamViewType: 'NEW_AND_OLD_IMAGES',
    };
    const tableName = uniqueTableName('Lsi');
    const local = (await createTables(client, [table], () => tableName)).get(table.key);
    const description = (await client.send(new DescribeTableCommand({ TableName: tableName }))).Table;
    expect(description?.LocalSecondaryIndexes?.map(({ IndexName, Projection }) => ({ IndexName, Projection }))).toEqual([
      { IndexName: 'ByTime', Projection: { ProjectionType: 'INCLUDE', NonKeyAttributes: ['status'] } },
    ]);
    expect(description?.StreamSpecification?.StreamViewType).toBe('NEW_AND_OLD_IMAGES');
    expect(local?.streamArn).toBe(description?.LatestStreamArn);
  });

  test('drops provisioned throughput and other index settings, and bills on demand', () => {
    const input = createTableInput(
      {
        ...base,
        globalSecondaryIndexes: [
          {
            IndexName: 'ByTime',
            KeySchema: [{ AttributeName: 'at', KeyType: 'HASH' }],
            Projection: { ProjectionType: 'KEYS_ONLY' },
            ProvisionedThroughput: { ReadCapacityUnits: 5, WriteCapacityUnits: 5 },
            ContributorInsightsSpecification: { Enabled: true },
          },
        ],
      },
      'name',
    );
    expect(input).toEqual({
      TableName: 'name',
      BillingMode: 'PAY_PER_REQUEST',
      KeySchema: base.keySchema,
      AttributeDefinitions: base.attributeDefinitions,
      GlobalSecondaryIndexes: [{ IndexName: 'ByTime', KeySchema: [{ AttributeName: 'at', KeyType: 'HASH' }], Projection: { ProjectionType: 'KEYS_ONLY' } }],
    });
  });

  test('an index whose name is not a literal is refused, naming the table and the index position', () => {
    const table: TableModel = { ...base, globalSecondaryIndexes: [{ IndexName: { 'Fn::Sub': '${AWS::StackName}-index' }, KeySchema: [], Projection: {} }] };
    expect(() => createTableInput(table, 'name')).toThrow(`table ${STACK}/Other: GlobalSecondaryIndexes[0] has no literal IndexName (got {"Fn::Sub":"\${AWS::StackName}-index"})`);
  });

  test('a failure in DynamoDB Local names the table key and the local name', async () => {
    const tableName = created.get(models.outbox.key)?.tableName ?? 'missing';
    const valid: TableModel = { ...base, attributeDefinitions: base.attributeDefinitions.slice(0, 2) };
    await expect(createTables(client, [valid], () => tableName)).rejects.toThrow(new RegExp(`^table ${STACK}/Other: creating '${tableName}' in DynamoDB Local failed: .*preexisting.*a table of that name exists already`, 'i'));
  });
});
