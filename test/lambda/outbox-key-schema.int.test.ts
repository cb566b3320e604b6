import { ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { rejection } from './helpers';
import { type ProducerConfig } from '../../lambda/config';
import { ENV } from '../../lambda/contract/environment';
import { OutboxKeySchemaError } from '../../lambda/errors';
import { Outbox } from '../../lambda/producer/outbox';
import { createTable, uniqueTableName } from '../support/dynamodb-client';
import type { FaultProxy } from '../support/fault-proxy';
import { createKeyedTable } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';

/**
 * Item 16 of issue 10, the part synth can not know: an outbox table imported by name or ARN whose key schema does not
 * match the producer environment (`IEF_OUTBOX_PARTITION_KEY_NAME`, `IEF_OUTBOX_SORT_KEY_NAME`). DynamoDB refuses the
 * write with a bare ValidationException that names neither the outbox nor the setting; the producer recognises the
 * outbox as the cause and says which attribute to fix. Against DynamoDB Local.
 */

let client: DynamoDBClient;
let proxy: FaultProxy;
let ordersTable: string;

beforeAll(async () => {
  ({ client, proxy } = await startTestbed());
  ordersTable = await createKeyedTable(client, 'orders');
});
afterAll(() => proxy.stop());

/** A new table keyed as given, and the producer config that points at it with `keys`. */
async function outboxOn(
  schema: { partitionKey: string; sortKey?: string; partitionKeyType?: 'S' | 'N' },
  keys: Pick<ProducerConfig, 'partitionKeyName' | 'sortKeyName'>,
): Promise<ProducerConfig> {
  const outboxTableName = uniqueTableName('outbox-schema');
  const attributeType = schema.partitionKeyType ?? 'S';
  await createTable(
    client,
    outboxTableName,
    { partitionKey: schema.partitionKey, sortKey: schema.sortKey },
    attributeType === 'S'
      ? {}
      : {
        AttributeDefinitions: [
          { AttributeName: schema.partitionKey, AttributeType: attributeType },
          ...(schema.sortKey ? [{ AttributeName: schema.sortKey, AttributeType: 'S' as const }] : []),
        ],
      },
  );
  return { outboxTableName, eventRetentionSeconds: 3600, eventSource: 'orders-service', ...keys };
}


async function itemCount(tableName: string): Promise<number> {
  return (await client.send(new ScanCommand({ TableName: tableName, Select: 'COUNT', ConsistentRead: true }))).Count ?? 0;
}

const event = { type: 'OrderPlaced', data: { orderId: 'o-1' } };

describe('Outbox.transactWrite: an outbox table whose key schema is not the configured one', () => {
  test('fails naming IEF_OUTBOX_PARTITION_KEY_NAME when the partition key has another name', async () => {
    // GIVEN
    const config = await outboxOn({ partitionKey: 'PK', sortKey: 'SK' }, { partitionKeyName: 'pk', sortKeyName: 'SK' });
    // WHEN
    const error = await rejection(new Outbox({ client, config }).transactWrite({ events: [event] }));
    // THEN
    expect(error).toBeInstanceOf(OutboxKeySchemaError);
    expect(error.message).toMatch(
      new RegExp(`outbox table '${config.outboxTableName}' refused an outbox item keyed by ${ENV.OUTBOX_PARTITION_KEY_NAME}='pk' and ${ENV.OUTBOX_SORT_KEY_NAME}='SK'`),
    );
    expect(error.message).toMatch(/partitionKeyName and sortKeyName of OutboxTable\.fromTableAttributes/);
    expect((error.cause as Error).name).toBe('ValidationException');
    expect(await itemCount(config.outboxTableName)).toBe(0);
  });

  test('fails naming IEF_OUTBOX_SORT_KEY_NAME as unset when the table has a sort key the config lacks', async () => {
    // GIVEN
    const config = await outboxOn({ partitionKey: 'PK', sortKey: 'SK' }, { partitionKeyName: 'PK' });
    // WHEN
    const error = await rejection(new Outbox({ client, config }).transactWrite({ events: [event] }));
    // THEN
    expect(error).toBeInstanceOf(OutboxKeySchemaError);
    expect(error.message).toMatch(new RegExp(`keyed by ${ENV.OUTBOX_PARTITION_KEY_NAME}='PK' and ${ENV.OUTBOX_SORT_KEY_NAME} unset`));
    expect(await itemCount(config.outboxTableName)).toBe(0);
  });

  test('fails naming the type when the partition key is a NUMBER', async () => {
    // GIVEN
    const config = await outboxOn({ partitionKey: 'PK', partitionKeyType: 'N' }, { partitionKeyName: 'PK' });
    // WHEN
    const error = await rejection(new Outbox({ client, config }).transactWrite({ events: [event] }));
    // THEN
    expect(error).toBeInstanceOf(OutboxKeySchemaError);
    expect(error.message).toMatch(/both of type S \(string\)/);
  });

  test("leaves a business item's ValidationException alone when the outbox keys are right", async () => {
    // GIVEN an outbox that matches, and a business Put without the orders table's key
    const config = await outboxOn({ partitionKey: 'pk', sortKey: 'sk' }, { partitionKeyName: 'pk', sortKeyName: 'sk' });
    const badBusinessItem: TransactWriteItem = { Put: { TableName: ordersTable, Item: { orderId: 'o-1' } } };
    // WHEN
    const error = await rejection(new Outbox({ client, config }).transactWrite({ items: [badBusinessItem], events: [event] }));
    // THEN
    expect(error).not.toBeInstanceOf(OutboxKeySchemaError);
    expect(error.name).toBe('ValidationException');
    expect(await itemCount(config.outboxTableName)).toBe(0);
  });

  test('writes as before when the key schema matches', async () => {
    // GIVEN
    const config = await outboxOn({ partitionKey: 'pk', sortKey: 'sk' }, { partitionKeyName: 'pk', sortKeyName: 'sk' });
    // WHEN
    await new Outbox({ client, config }).transactWrite({ events: [event] });
    // THEN
    expect(await itemCount(config.outboxTableName)).toBe(1);
  });
});
