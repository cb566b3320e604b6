import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { causalPath } from '../../bench/support/latency/critical-path';
import { RequestTimeline } from '../../bench/support/latency/request-timeline';
import { localClient } from '../support/dynamodb-client';
import { createKeyedTable } from '../support/proof/tables';

let client: DynamoDBClient;
let table: string;
const put = (pk: string) => client.send(new PutItemCommand({ TableName: table, Item: { pk: { S: pk } } }));

beforeAll(async () => {
  client = localClient();
  table = await createKeyedTable(client, 'timeline');
});
afterAll(() => client.destroy());

describe('RequestTimeline: the requests of a recording, each linked to the response it was sent on from', () => {
  test('a request sent after a response names it; requests sent at once name the same one; none before the first', async () => {
    const timeline = new RequestTimeline(client);
    await put('outside'); // before the recording: not listed, and not a link of the first request
    const { value, requests } = await timeline.record(async () => {
      await put('a');
      await put('b');
      await Promise.all([put('c'), put('d')]);
      await put('e');
      return 'done';
    });
    expect(value).toBe('done');
    expect(requests.map((request) => request.operation)).toEqual(['PutItem', 'PutItem', 'PutItem', 'PutItem', 'PutItem']);
    expect(requests.map((request) => request.after)).toEqual([undefined, 0, 1, 1, expect.any(Number)]);
    expect([2, 3]).toContain(requests[4]?.after); // whichever of c and d answered last
    for (const request of requests) expect(request.endMs).toBeGreaterThanOrEqual(request.startMs);
    expect(causalPath(requests).roundTrips).toBe(4);
    await put('after'); // after the recording: nothing recorded
    expect(timeline.stop()).toEqual([]);
  });

  test('a failed request is recorded too (the response was an error)', async () => {
    const other = localClient(); // one timeline per client
    const timeline = new RequestTimeline(other);
    const { requests } = await timeline.record(async () => {
      await other.send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'x' } }, ConditionExpression: 'attribute_not_exists(pk)' }));
      await expect(other.send(new PutItemCommand({ TableName: table, Item: { pk: { S: 'x' } }, ConditionExpression: 'attribute_not_exists(pk)' }))).rejects.toThrow();
    });
    expect(requests.map((request) => request.after)).toEqual([undefined, 0]);
    other.destroy();
  });
});
