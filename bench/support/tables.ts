/** Verification reads with the unmetered client: item sizes as stored, and item counts. */
import { GetItemCommand, ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { itemSize, type WireItem } from './item-size';

/** The stored item at `key`, read consistently. */
export async function storedItem(admin: DynamoDBClient, table: string, key: WireItem): Promise<WireItem | undefined> {
  return (await admin.send(new GetItemCommand({ TableName: table, Key: key as never, ConsistentRead: true }))).Item as WireItem | undefined;
}

/** The size (AWS item-size rules) of the stored item at `key`; 0 when there is none. */
export async function storedSize(admin: DynamoDBClient, table: string, key: WireItem): Promise<number> {
  return itemSize(await storedItem(admin, table, key));
}

/** Every item of `table`, read consistently, page by page. */
export async function scanAll(admin: DynamoDBClient, table: string): Promise<Array<Record<string, AttributeValue>>> {
  const items: Array<Record<string, AttributeValue>> = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await admin.send(new ScanCommand({ TableName: table, ConsistentRead: true, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return items;
}

/** How many items of `table` satisfy `where` (all by default). */
export async function scanCount(admin: DynamoDBClient, table: string, where: (item: Record<string, AttributeValue>) => boolean = () => true): Promise<number> {
  return (await scanAll(admin, table)).filter(where).length;
}
