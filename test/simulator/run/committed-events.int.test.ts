/** What the outboxes hold at the end of a run, read from DynamoDB Local through the pipe's filter and input template. */
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, test } from 'vitest';
import { createTables } from '../../../simulator/aws/tables';
import { checkTracked } from '../../../simulator/check/invariants';
import type { FlowModel, RelayModel, TableModel } from '../../../simulator/model/flow-model';
import type { LocalFlow } from '../../../simulator/run/build-flow';
import { readCommittedOutbox } from '../../../simulator/run/committed-events';
import { localClient, uniqueTableName } from '../../support/dynamodb-client';

const TABLE: TableModel = {
  key: 'Stack/Outbox',
  stackName: 'Stack',
  logicalId: 'Outbox',
  keySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
  attributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
  globalSecondaryIndexes: [],
  localSecondaryIndexes: [],
  streamViewType: 'NEW_IMAGE',
};
/** A pipe whose template is one placeholder: the item's `message` attribute, as plain text. */
const RELAY: RelayModel = {
  key: 'Stack/Pipe',
  stackName: 'Stack',
  logicalId: 'Pipe',
  sourceTable: TABLE.key,
  targetTopic: 'Stack/Topic',
  batchSize: 10,
  startingPosition: 'TRIM_HORIZON',
  maximumRetryAttempts: 3,
  maximumRecordAgeSeconds: -1,
  bisectOnFailure: false,
  filterPatterns: [],
  inputTemplate: '<$.dynamodb.NewImage.message.S>',
};

let client: DynamoDBClient;
let model: FlowModel;
let flow: LocalFlow;

beforeAll(async () => {
  client = localClient();
  const tables = await createTables(client, [TABLE], () => uniqueTableName('committed-events'));
  model = { relays: [RELAY], tables: [TABLE] } as unknown as FlowModel;
  flow = { tables } as unknown as LocalFlow;
  const put = (pk: string, message: string) => client.send(new PutItemCommand({ TableName: tables.get(TABLE.key)!.tableName, Item: { pk: { S: pk }, message: { S: message } } }));
  await put('1', JSON.stringify({ id: 'event-1', type: 'OrderPlaced', data: {} }));
  await put('2', 'not an envelope');
  await put('3', JSON.stringify({ id: 'event-3', data: {} }));
});

describe('readCommittedOutbox', () => {
  test('an item the pipe relays as something with no event id cannot be followed: it is untracked, and the check says so', async () => {
    const committed = await readCommittedOutbox(model, flow, client);

    // an id is enough to follow a message through the flow (the topic and the queues key on it), a type or not
    expect([...(committed.eventIdsByRelay.get(RELAY.key) ?? [])].sort()).toEqual(['event-1', 'event-3']);
    expect(committed.untracked).toEqual([{ relay: RELAY.key, item: '{"pk":"2"}' }]);
    expect(checkTracked(committed.untracked)).toEqual([expect.objectContaining({ kind: 'untracked', detail: expect.stringContaining('{"pk":"2"}') })]);
  });
});
