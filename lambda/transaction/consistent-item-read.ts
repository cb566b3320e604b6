/**
 * One item read strongly consistent, with the action the caller's role is granted on the table: `GetItem`, or
 * `BatchGetItem` of one key for a role that has only its batch read (a transactional or ordered consumer on its inbox
 * table, lib/consumer/inbox-table.ts). A key BatchGetItem leaves unprocessed (throttled) throws: retried with the
 * message, never read as an absent item.
 */
import { BatchGetCommand, GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** The read a role is granted on a table: `batch-get` (BatchGetItem) or `get` (GetItem). */
export type ItemRead = 'batch-get' | 'get';

/**
 * The item at `key`, or undefined when there is none.
 * @param what what the item is, for the error of an unprocessed key (e.g. `the sequence fence of aggregate 'a-1'`)
 */
export async function readItemConsistently(
  client: DynamoDBDocumentClient,
  tableName: string,
  key: Record<string, string>,
  read: ItemRead,
  what: string,
): Promise<Record<string, unknown> | undefined> {
  if (read === 'get') return (await client.send(new GetCommand({ TableName: tableName, Key: key, ConsistentRead: true }))).Item;
  const response = await client.send(new BatchGetCommand({ RequestItems: { [tableName]: { Keys: [key], ConsistentRead: true } } }));
  if (Object.keys(response.UnprocessedKeys ?? {}).length > 0) throw new Error(`the read of ${what} was not processed (throttled): retried with the message`);
  return response.Responses?.[tableName]?.[0];
}
