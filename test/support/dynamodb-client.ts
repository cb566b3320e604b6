import {
  AttributeDefinition,
  CreateTableCommand,
  CreateTableCommandInput,
  DynamoDBClient,
  DynamoDBClientConfig,
  KeySchemaElement,
} from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { inject } from 'vitest';

/** Static credentials for DynamoDB Local; nothing here reaches AWS. */
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/** A client for the shared DynamoDB Local (or another endpoint, such as a fault-injecting proxy in front of it). */
export function localClient(overrides: DynamoDBClientConfig = {}): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: inject('dynamoDbEndpoint'),
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    ...overrides,
  });
}

/** A table name no other test uses. */
export function uniqueTableName(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

/** Creates an on-demand table with a string partition key (and optional string sort key). */
export async function createTable(
  client: DynamoDBClient,
  tableName: string,
  keys: { partitionKey: string; sortKey?: string },
  extra: Partial<CreateTableCommandInput> = {},
): Promise<void> {
  const attributes: AttributeDefinition[] = [{ AttributeName: keys.partitionKey, AttributeType: 'S' }];
  const schema: KeySchemaElement[] = [{ AttributeName: keys.partitionKey, KeyType: 'HASH' }];
  if (keys.sortKey !== undefined) {
    attributes.push({ AttributeName: keys.sortKey, AttributeType: 'S' });
    schema.push({ AttributeName: keys.sortKey, KeyType: 'RANGE' });
  }
  await client.send(
    new CreateTableCommand({
      TableName: tableName,
      AttributeDefinitions: attributes,
      KeySchema: schema,
      BillingMode: 'PAY_PER_REQUEST',
      ...extra,
    }),
  );
}
