/** Reading back, consistently, what the runtime wrote to the tables of the integration and proof tests. Not a test file. */
import { GetItemCommand, ScanCommand as LowLevelScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';

/** Every item of `tableName`, as plain values (the DocumentClient's view). */
export async function scanItems(client: DynamoDBClient, tableName: string): Promise<Array<Record<string, unknown>>> {
  return scanDocuments(DynamoDBDocumentClient.from(client), tableName);
}

/** Every item of `tableName` read with a DocumentClient (a scenario's effect probe gets one), consistently. */
export async function scanDocuments(documents: DynamoDBDocumentClient, tableName: string | undefined): Promise<Array<Record<string, unknown>>> {
  const items: Array<Record<string, unknown>> = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(new ScanCommand({ TableName: tableName, ConsistentRead: true, ExclusiveStartKey: startKey }));
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

/** The items of the outbox table `tableName` that carry the event `eventId`, as low-level attribute values. */
export async function outboxItemsWithEventId(client: DynamoDBClient, tableName: string, eventId: string): Promise<Array<Record<string, AttributeValue>>> {
  const items: Array<Record<string, AttributeValue>> = [];
  let startKey: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new LowLevelScanCommand({
        TableName: tableName,
        ConsistentRead: true,
        FilterExpression: '#id = :id',
        ExpressionAttributeNames: { '#id': OUTBOX_ITEM.EVENT_ID_ATTRIBUTE },
        ExpressionAttributeValues: { ':id': { S: eventId } },
        ExclusiveStartKey: startKey,
      }),
    );
    items.push(...(page.Items ?? []));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return items;
}

/** The raw item of a message's processing record (lease and multi-step modes), as low-level attribute values. */
export async function rawRecord(client: DynamoDBClient, tableName: string, subscriber: string, eventId: string): Promise<Record<string, AttributeValue> | undefined> {
  const response = await client.send(
    new GetItemCommand({ TableName: tableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: { S: `${subscriber}#${eventId}` } }, ConsistentRead: true }),
  );
  return response.Item;
}

/** The status of a message's processing record (`IN_PROGRESS`, `COMPLETED`, `BLOCKED`), or undefined when it has none. */
export async function recordStatus(client: DynamoDBClient, tableName: string, subscriber: string, eventId: string): Promise<string | undefined> {
  return (await rawRecord(client, tableName, subscriber, eventId))?.status?.S;
}
