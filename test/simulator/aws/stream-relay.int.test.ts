import { PutItemCommand, TransactWriteItemsCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import { SimulatedRelay, type RelayTarget } from '../../../simulator/aws/stream-relay';
import type { PipeStreamEvent } from '../../../simulator/aws/stream-record';
import { createTables } from '../../../simulator/aws/tables';
import { FaultPlan, NO_FAULTS, type FaultKind } from '../../../simulator/faults/fault-plan';
import type { RelayModel, TableModel } from '../../../simulator/model/flow-model';
import type { SimulationObserver } from '../../../simulator/run/observer';
import { LOCAL_CREDENTIALS, localClient, uniqueTableName } from '../../support/dynamodb-client';
import { OUTBOX_RELAY_SETTINGS, OUTBOX_TABLE_SETTINGS } from '../support/example-models';

const REGION = 'eu-west-1';

/** The example app's outbox table (IdempotentEventFlowExample/OrdersOutboxTable), as its template defines it. */
const OUTBOX_TABLE: TableModel = {
  key: 'Example/OrdersOutboxTable',
  stackName: 'Example',
  logicalId: 'OrdersOutboxTable',
  ...OUTBOX_TABLE_SETTINGS,
};

/** The example app's pipe (IdempotentEventFlowExample/OrdersRelay), as its template defines it. */
const RELAY: RelayModel = {
  key: 'Example/OrdersRelay',
  stackName: 'Example',
  logicalId: 'OrdersRelay',
  sourceTable: OUTBOX_TABLE.key,
  targetTopic: 'Example/OrdersEventTopic',
  deadLetterQueue: 'Example/OrdersRelayDeadLetterQueue',
  ...OUTBOX_RELAY_SETTINGS,
};

type Image = Record<string, { S?: string }>;
const imageOf = (event: unknown): Image | undefined => (event as PipeStreamEvent).dynamodb.NewImage as Image | undefined;

/** What the example's filter pattern matches (written out here; the pattern compiler is tested on its own). */
const isOutboxInsert = (event: unknown): boolean => (event as PipeStreamEvent).eventName === 'INSERT' && imageOf(event)?.iefRecordType?.S === 'OutboxEvent.v1';
/** What the example's input template renders: the envelope string. */
const envelopeOf = (event: unknown): string => imageOf(event)?.iefEnvelope?.S ?? 'no envelope';

let client: DynamoDBClient;
let streams: DynamoDBStreamsClient;

beforeAll(() => {
  client = localClient();
  streams = new DynamoDBStreamsClient({ endpoint: inject('dynamoDbEndpoint'), region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
});

/** A topic stand-in that records what it is given. */
class RecordingTarget implements RelayTarget {
  public readonly messages: string[] = [];
  public publish(message: string): { readonly messageId: string } {
    this.messages.push(message);
    return { messageId: `message-${this.messages.length}` };
  }
}

/** An observer that records the relay's reports. */
function recordingObserver() {
  const records: { relay: string; eventId?: string; published: boolean; duplicate: boolean }[] = [];
  const faults: { kind: FaultKind; subject: string }[] = [];
  const observer: SimulationObserver = {
    onStreamRecord: (relay, record) => records.push({ relay, ...record }),
    onFault: (kind, subject) => faults.push({ kind, subject }),
  };
  return { observer, records, faults };
}

interface Setup {
  readonly tableName: string;
  readonly streamArn: string;
  readonly target: RecordingTarget;
  readonly reports: ReturnType<typeof recordingObserver>;
  readonly relay: SimulatedRelay;
}

/** A fresh outbox table (its own stream) and a relay on it. */
async function setUp(options: { duplicateRate?: number; relay?: Partial<RelayModel>; render?: (event: unknown) => string } = {}): Promise<Setup> {
  const tableName = uniqueTableName('Outbox');
  const local = (await createTables(client, [OUTBOX_TABLE], () => tableName)).get(OUTBOX_TABLE.key);
  if (local?.streamArn === undefined) throw new Error('the outbox has no stream');
  const target = new RecordingTarget();
  const reports = recordingObserver();
  const relay = new SimulatedRelay({
    model: { ...RELAY, ...options.relay },
    streamArn: local.streamArn,
    streams,
    target,
    faults: new FaultPlan('relay-test', { ...NO_FAULTS, duplicate: options.duplicateRate ?? 0 }),
    region: REGION,
    observer: reports.observer,
    filters: [isOutboxInsert],
    render: options.render ?? envelopeOf,
  });
  return { tableName, streamArn: local.streamArn, target, reports, relay };
}

/** An outbox item as the runtime writes it: the envelope JSON under iefEnvelope. */
function outboxItem(eventId: string) {
  return {
    pk: { S: `outbox#${eventId}` },
    sk: { S: 'event' },
    iefRecordType: { S: 'OutboxEvent.v1' },
    iefEnvelope: { S: JSON.stringify({ id: eventId, type: 'OrderPlaced', data: { orderId: eventId } }) },
    expiresAt: { N: String(Math.floor(Date.now() / 1000) + 3600) },
  };
}

const putOutboxEvent = (tableName: string, eventId: string) => client.send(new PutItemCommand({ TableName: tableName, Item: outboxItem(eventId) }));
const idsOf = (messages: readonly string[]) => messages.map((message) => (JSON.parse(message) as { id: string }).id);

describe('SimulatedRelay against DynamoDB Local', () => {
  test('publishes only the records that pass the filter, in stream order, and reports every record read', async () => {
    const { tableName, target, reports, relay } = await setUp();
    await putOutboxEvent(tableName, 'e1');
    await client.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'order#1' }, sk: { S: 'state' }, iefRecordType: { S: 'Other' } } }));
    await putOutboxEvent(tableName, 'e2');
    await client.send(new UpdateItemCommand({ TableName: tableName, Key: { pk: { S: 'outbox#e1' }, sk: { S: 'event' } }, UpdateExpression: 'SET touched = :t', ExpressionAttributeValues: { ':t': { S: 'yes' } } }));
    await putOutboxEvent(tableName, 'e3');

    expect(await relay.poll()).toBe(5);

    expect(idsOf(target.messages)).toEqual(['e1', 'e2', 'e3']);
    expect(reports.records).toEqual([
      { relay: RELAY.key, eventId: 'e1', published: true, duplicate: false },
      { relay: RELAY.key, published: false, duplicate: false },
      { relay: RELAY.key, eventId: 'e2', published: true, duplicate: false },
      { relay: RELAY.key, published: false, duplicate: false },
      { relay: RELAY.key, eventId: 'e3', published: true, duplicate: false },
    ]);
    expect(reports.faults).toEqual([]);
  });

  test('a second poll does not republish; records written later are relayed by the next poll', async () => {
    const { tableName, target, relay } = await setUp({ relay: { batchSize: 2 } });
    for (const id of ['a', 'b', 'c', 'd', 'e']) await putOutboxEvent(tableName, id);
    expect(await relay.poll()).toBe(5);
    expect(await relay.poll()).toBe(0);
    expect(idsOf(target.messages)).toEqual(['a', 'b', 'c', 'd', 'e']);

    await putOutboxEvent(tableName, 'f');
    expect(await relay.poll()).toBe(1);
    expect(idsOf(target.messages)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  test('relays the outbox records a TransactWriteItems wrote together with a business item', async () => {
    const { tableName, target, relay } = await setUp();
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: tableName, Item: { pk: { S: 'order#7' }, sk: { S: 'state' }, status: { S: 'PLACED' } }, ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: tableName, Item: outboxItem('t1') } },
          { Put: { TableName: tableName, Item: outboxItem('t2') } },
        ],
      }),
    );
    expect(await relay.poll()).toBe(3);
    expect(idsOf(target.messages).sort()).toEqual(['t1', 't2']);
  });

  test('the event has the shape AWS documents for a DynamoDB stream source, attribute values in DynamoDB JSON', async () => {
    const events: unknown[] = [];
    const { tableName, streamArn, relay } = await setUp({ render: (event) => (events.push(event), envelopeOf(event)) });
    const before = Math.floor(Date.now() / 1000);
    await client.send(new PutItemCommand({ TableName: tableName, Item: { ...outboxItem('shape'), bytes: { B: new Uint8Array([1, 2, 255]) }, count: { N: '42' } } }));
    await relay.poll();

    expect(events).toHaveLength(1);
    const event = events[0] as PipeStreamEvent;
    expect(Object.keys(event)).toEqual(['eventID', 'eventName', 'eventVersion', 'eventSource', 'awsRegion', 'dynamodb', 'eventSourceARN']);
    expect(event).toMatchObject({ eventName: 'INSERT', eventSource: 'aws:dynamodb', awsRegion: REGION, eventSourceARN: streamArn });
    expect(event.eventID).toEqual(expect.any(String));
    expect(Object.keys(event.dynamodb)).toEqual(['ApproximateCreationDateTime', 'Keys', 'NewImage', 'SequenceNumber', 'SizeBytes', 'StreamViewType']);
    expect(event.dynamodb.Keys).toEqual({ pk: { S: 'outbox#shape' }, sk: { S: 'event' } });
    expect(event.dynamodb.NewImage).toMatchObject({ bytes: { B: Buffer.from([1, 2, 255]).toString('base64') }, count: { N: '42' }, iefRecordType: { S: 'OutboxEvent.v1' } });
    expect(event.dynamodb.StreamViewType).toBe('NEW_IMAGE');
    expect(event.dynamodb.SequenceNumber).toMatch(/^\d+$/);
    // epoch seconds (DynamoDB Local rounds down to the minute)
    expect(event.dynamodb.ApproximateCreationDateTime).toBeGreaterThanOrEqual(before - 60);
    expect(event.dynamodb.ApproximateCreationDateTime).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
  });

  test('a duplicate-delivery fault publishes the record twice and is reported', async () => {
    const { tableName, target, reports, relay } = await setUp({ duplicateRate: 1 });
    await putOutboxEvent(tableName, 'd1');
    await putOutboxEvent(tableName, 'd2');
    await relay.poll();
    expect(idsOf(target.messages)).toEqual(['d1', 'd1', 'd2', 'd2']);
    expect(reports.records).toEqual([
      { relay: RELAY.key, eventId: 'd1', published: true, duplicate: true },
      { relay: RELAY.key, eventId: 'd2', published: true, duplicate: true },
    ]);
    expect(reports.faults).toEqual([
      { kind: 'duplicate-delivery', subject: RELAY.key },
      { kind: 'duplicate-delivery', subject: RELAY.key },
    ]);
  });

  test("duplicates follow the fault plan: keyed by the relay, the record's event name and its item key", async () => {
    const events: PipeStreamEvent[] = [];
    const { tableName, target, reports, relay } = await setUp({ duplicateRate: 0.5, render: (event) => (events.push(event as PipeStreamEvent), envelopeOf(event)) });
    for (let index = 0; index < 12; index++) await putOutboxEvent(tableName, `r${index}`);
    await relay.poll();
    const plan = new FaultPlan('relay-test', { ...NO_FAULTS, duplicate: 0.5 });
    const expected = events
      .filter((event) => plan.happens(0.5, 'duplicate-delivery', RELAY.key, event.eventName, JSON.stringify(event.dynamodb.Keys)))
      .map((event) => idsOf([envelopeOf(event)])[0]);
    const duplicated = reports.records.filter((record) => record.duplicate).map((record) => record.eventId);
    expect(duplicated).toEqual(expected);
    expect(duplicated.length).toBeGreaterThan(0);
    expect(duplicated.length).toBeLessThan(12);
    expect(target.messages).toHaveLength(12 + duplicated.length);
  });

  test('when rendering a record fails, the poll rejects naming the relay and the record, and the next poll resumes at that record', async () => {
    let failNext = true;
    const { tableName, target, relay } = await setUp({
      render: (event) => {
        const envelope = envelopeOf(event);
        if (envelope.includes('"id":"x2"') && failNext) {
          failNext = false;
          throw new Error('template failed');
        }
        return envelope;
      },
    });
    for (const id of ['x1', 'x2', 'x3']) await putOutboxEvent(tableName, id);
    await expect(relay.poll()).rejects.toThrow(new RegExp(`^relay ${RELAY.key}: relaying stream record \\S+ \\(sequence number \\d+\\) on stream .* failed: template failed$`));
    expect(idsOf(target.messages)).toEqual(['x1']);
    expect(await relay.poll()).toBe(2);
    expect(idsOf(target.messages)).toEqual(['x1', 'x2', 'x3']);
  });

  test('StartingPosition LATEST: records written before the first poll are not relayed, later ones are', async () => {
    const { tableName, target, relay } = await setUp({ relay: { startingPosition: 'LATEST' } });
    await putOutboxEvent(tableName, 'before');
    expect(await relay.poll()).toBe(0);
    await putOutboxEvent(tableName, 'after');
    expect(await relay.poll()).toBe(1);
    expect(idsOf(target.messages)).toEqual(['after']);
  });

  test('concurrent polls run one after the other and publish each record once', async () => {
    const { tableName, target, relay } = await setUp();
    for (const id of ['p1', 'p2', 'p3']) await putOutboxEvent(tableName, id);
    const counts = await Promise.all([relay.poll(), relay.poll(), relay.poll()]);
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(3);
    expect(idsOf(target.messages)).toEqual(['p1', 'p2', 'p3']);
  });
});
