/**
 * The relay's catch-up with its table (simulator/run/relay-catch-up.ts) against DynamoDB Local: a round must not begin
 * before the relay has read every record of what its table holds, or the events it has not read reach the queues a
 * round later, at a moment the stream's lag (the machine's load) decides, and a seed no longer replays.
 *
 * The ordered outbox overwrites one head item per aggregate (docs/ORDERED-DELIVERY.md): its table holds fewer items
 * than its stream has records, so "records read >= items" said caught up while the last commit's records were unread.
 */
import { PutItemCommand, ScanCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { _Record } from '@aws-sdk/client-dynamodb-streams';
import { beforeAll, describe, expect, test } from 'vitest';
import { CatchingUpRelay } from '../../../simulator/run/relay-catch-up';
import { createTable, localClient, uniqueTableName } from '../../support/dynamodb-client';

let client: DynamoDBClient;

beforeAll(() => {
  client = localClient();
});

type Item = Record<string, { S: string }>;

/**
 * A relay whose stream lags behind its table: each poll reads the records that have "arrived", `arrivals` at a time
 * (what DynamoDB Local's stream does under load: a record is readable a moment after its commit).
 */
class LaggingRelay {
  public readonly readDenied = false;
  private readonly listeners: ((record: _Record) => void)[] = [];
  private next = 0;
  public polls = 0;

  public constructor(
    private readonly records: readonly _Record[],
    private readonly arrivals: readonly number[],
  ) {}

  public onRecordRead(listener: (record: _Record) => void): void {
    this.listeners.push(listener);
  }

  public poll(): Promise<number> {
    const count = this.arrivals[this.polls] ?? 0;
    this.polls += 1;
    const read = this.records.slice(this.next, this.next + count);
    this.next += read.length;
    for (const record of read) for (const listener of this.listeners) listener(record);
    return Promise.resolve(read.length);
  }
}

/** The stream record of writing `item` (keyed by `pk`): INSERT when new, MODIFY when it overwrote one. */
function recordOf(item: Item, eventName: 'INSERT' | 'MODIFY'): _Record {
  return { eventName, dynamodb: { Keys: { pk: item.pk! }, NewImage: item } };
}

describe('a relay catching up with its table', () => {
  test('an overwritten item: the poll reads on until the stream has the last write of every item', async () => {
    const tableName = uniqueTableName('CatchUp');
    await createTable(client, tableName, { partitionKey: 'pk' });
    // an aggregate's head taken twice, with each event's history item: 3 items, 4 records
    const head1: Item = { pk: { S: 'HEAD#order-1' }, sequence: { S: '1' } };
    const event1: Item = { pk: { S: 'EVENT#order-1#1' }, type: { S: 'OrderPlaced' } };
    const head2: Item = { pk: { S: 'HEAD#order-1' }, sequence: { S: '2' } };
    const event2: Item = { pk: { S: 'EVENT#order-1#2' }, type: { S: 'OrderShipped' } };
    for (const item of [head1, event1, head2, event2]) await client.send(new PutItemCommand({ TableName: tableName, Item: item }));
    const items = await client.send(new ScanCommand({ TableName: tableName, ConsistentRead: true }));
    expect(items.Count).toBe(3);

    // the stream has the first three records now (head 1, event 1, head 2); event 2's arrives by the next poll
    const relay = new LaggingRelay([recordOf(head1, 'INSERT'), recordOf(event1, 'INSERT'), recordOf(head2, 'MODIFY'), recordOf(event2, 'INSERT')], [3, 1]);
    const catchingUp = new CatchingUpRelay(relay, client, tableName);

    expect(await catchingUp.poll()).toBe(4);
    expect(relay.polls).toBe(2);
  });

  test('caught up at once when the stream has every write: one poll, nothing waited for', async () => {
    const tableName = uniqueTableName('CatchUp');
    await createTable(client, tableName, { partitionKey: 'pk' });
    const event1: Item = { pk: { S: 'EVENT#1' }, type: { S: 'OrderPlaced' } };
    await client.send(new PutItemCommand({ TableName: tableName, Item: event1 }));
    const relay = new LaggingRelay([recordOf(event1, 'INSERT')], [1]);
    const catchingUp = new CatchingUpRelay(relay, client, tableName);

    expect(await catchingUp.poll()).toBe(1);
    expect(relay.polls).toBe(1);
  });

  test('a stream that never shows a write (a pipe starting after it): the poll gives up at its limit and says so, each time; one that catches up never does', async () => {
    const tableName = uniqueTableName('CatchUp');
    await createTable(client, tableName, { partitionKey: 'pk' });
    const event1: Item = { pk: { S: 'EVENT#1' }, type: { S: 'OrderPlaced' } };
    const event2: Item = { pk: { S: 'EVENT#2' }, type: { S: 'OrderPlaced' } };
    for (const item of [event1, event2]) await client.send(new PutItemCommand({ TableName: tableName, Item: item }));
    // the stream shows event 2 only: event 1 was written before the pipe's first poll (LATEST)
    let limitsMet = 0;
    const catchingUp = new CatchingUpRelay(new LaggingRelay([recordOf(event2, 'INSERT')], [1]), client, tableName, () => (limitsMet += 1), 50);

    expect(await catchingUp.poll()).toBe(1);
    expect(limitsMet).toBe(1);
    expect(await catchingUp.poll()).toBe(0);
    expect(limitsMet).toBe(2);

    let metOnCaughtUp = 0;
    const caughtUp = new CatchingUpRelay(new LaggingRelay([recordOf(event1, 'INSERT'), recordOf(event2, 'INSERT')], [1, 1]), client, tableName, () => (metOnCaughtUp += 1), 60_000);
    expect(await caughtUp.poll()).toBe(2);
    expect(metOnCaughtUp).toBe(0);
  });
});
