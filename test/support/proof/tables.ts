/**
 * The tables of the integration and proof tests, created on DynamoDB Local the way the constructs create them, each
 * with a new unique name, and the runtime config that points at them. Not a test file.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ConsumerConfig, LeaseConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { PROCESSING_RECORD, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { createTable, uniqueTableName } from '../dynamodb-client';

/** Creates a new table keyed by a string `pk` (a test's business table: a ledger, accounts, orders); returns its name. */
export async function createKeyedTable(client: DynamoDBClient, prefix: string): Promise<string> {
  const tableName = uniqueTableName(prefix);
  await createTable(client, tableName, { partitionKey: 'pk' });
  return tableName;
}

/** What a consumer's config holds besides its inbox table. */
export type InboxSettings<Config extends ConsumerConfig> = Omit<Config, 'inboxTableName'>;

/** Creates a new inbox table of the transactional mode (as the InboxTable construct does) and returns the consumer config for it. */
export async function createInbox(client: DynamoDBClient, settings: InboxSettings<ConsumerConfig>, prefix = 'inbox'): Promise<ConsumerConfig> {
  const inboxTableName = uniqueTableName(prefix);
  await createTable(client, inboxTableName, { partitionKey: TABLE_SCHEMA.PARTITION_KEY });
  return { ...settings, inboxTableName };
}

/** Creates an inbox table with the sparse `BlockedMessages` index, as the InboxTable construct does for lease modes. */
export async function createInboxTable(client: DynamoDBClient, tableName: string): Promise<void> {
  await createTable(
    client,
    tableName,
    { partitionKey: TABLE_SCHEMA.PARTITION_KEY },
    {
      AttributeDefinitions: [
        { AttributeName: TABLE_SCHEMA.PARTITION_KEY, AttributeType: 'S' },
        { AttributeName: PROCESSING_RECORD.BLOCKED_SUBSCRIBER_ATTRIBUTE, AttributeType: 'S' },
        { AttributeName: PROCESSING_RECORD.BLOCKED_AT_ATTRIBUTE, AttributeType: 'S' },
      ],
      GlobalSecondaryIndexes: [
        {
          IndexName: PROCESSING_RECORD.BLOCKED_INDEX_NAME,
          KeySchema: [
            { AttributeName: PROCESSING_RECORD.BLOCKED_SUBSCRIBER_ATTRIBUTE, KeyType: 'HASH' },
            { AttributeName: PROCESSING_RECORD.BLOCKED_AT_ATTRIBUTE, KeyType: 'RANGE' },
          ],
          Projection: { ProjectionType: 'ALL' },
        },
      ],
    },
  );
}

/** Creates a new lease-mode inbox table ({@link createInboxTable}) and returns the lease or multi-step consumer config for it. */
export async function createLeaseInbox(client: DynamoDBClient, settings: InboxSettings<LeaseConsumerConfig>, prefix = 'lease-inbox'): Promise<LeaseConsumerConfig> {
  const inboxTableName = uniqueTableName(prefix);
  await createInboxTable(client, inboxTableName);
  return { ...settings, inboxTableName };
}

/**
 * Creates a new outbox table (`pk` and `sk`, as the OutboxTable construct does) and returns the producer config for it:
 * events kept 1 hour, no TTL attribute, unless `settings` say otherwise.
 */
export async function createOutbox(
  client: DynamoDBClient,
  settings: Pick<ProducerConfig, 'eventSource'> & Partial<ProducerConfig>,
  prefix = 'outbox',
): Promise<ProducerConfig> {
  const outboxTableName = uniqueTableName(prefix);
  await createTable(client, outboxTableName, { partitionKey: TABLE_SCHEMA.PARTITION_KEY, sortKey: TABLE_SCHEMA.SORT_KEY });
  return {
    outboxTableName,
    partitionKeyName: TABLE_SCHEMA.PARTITION_KEY,
    sortKeyName: TABLE_SCHEMA.SORT_KEY,
    eventRetentionSeconds: 3600,
    ...settings,
  };
}
