/**
 * The event's record in a subscriber's inbox table, as a redrive checks it (a blocked message must be resolved first):
 * read consistently by its key `<subscriber>#<event id>`. Shared by `dlq redrive|show` and the simulator's operator.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { recordKey, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import type { RecordLookup } from './redrive-decision';

/** Looks the record up; `not-looked-up` when the table, the subscriber or the event id is unknown. */
export async function lookUpInboxRecord(documents: DynamoDBDocumentClient, table: string | undefined, subscriber: string | undefined, eventId: string | undefined): Promise<RecordLookup> {
  if (table === undefined || subscriber === undefined || eventId === undefined) return { kind: 'not-looked-up' };
  const response = await documents.send(new GetCommand({ TableName: table, Key: { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(subscriber, eventId) }, ConsistentRead: true }));
  return response.Item === undefined ? { kind: 'none' } : { kind: 'found', item: response.Item };
}
