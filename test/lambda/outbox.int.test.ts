import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, type TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { rejection } from './helpers';
import { type ProducerConfig } from '../../lambda/config';
import { ENV } from '../../lambda/contract/environment';
import { parseEnvelope } from '../../lambda/envelope';
import { EventTooLargeError, TransactionCancelledError, TransactionLimitError } from '../../lambda/errors';
import { Outbox } from '../../lambda/producer/outbox';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { createTable, localClient, uniqueTableName } from '../support/dynamodb-client';
import type { FaultProxy } from '../support/fault-proxy';
import { outboxItemsWithEventId } from '../support/proof/table-reads';
import { createKeyedTable, createOutbox } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';

const RETENTION_SECONDS = 7 * 24 * 3600;
const TRANSACT = 'DynamoDB_20120810.TransactWriteItems';

let client: DynamoDBClient;
let proxy: FaultProxy;
let ordersTable: string;
let config: ProducerConfig;

beforeAll(async () => {
  ({ client, proxy } = await startTestbed());
  [ordersTable, config] = await Promise.all([
    createKeyedTable(client, 'orders'),
    createOutbox(client, { eventSource: 'orders-service', eventRetentionSeconds: RETENTION_SECONDS, timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
  ]);
});
afterAll(() => proxy.stop());

const placeOrder = (orderId: string): TransactWriteItem => ({
  Put: { TableName: ordersTable, Item: { pk: orderId, status: 'PLACED' }, ConditionExpression: 'attribute_not_exists(pk)' },
});

async function getOrder(orderId: string) {
  return (await client.send(new GetItemCommand({ TableName: ordersTable, Key: { pk: { S: orderId } }, ConsistentRead: true }))).Item;
}

/** The outbox items (of this file's outbox table, or `table`) that carry event `eventId`. */
const itemsWithEventId = (eventId: string, table = config.outboxTableName) => outboxItemsWithEventId(client, table, eventId);


describe('Outbox.transactWrite', () => {
  test('writes the business item and the outbox item together, in the wire format', async () => {
    const outbox = new Outbox({ client, config });
    const orderId = `order-${crypto.randomUUID()}`;
    const before = Date.now();
    const [envelope] = await outbox.transactWrite({
      items: [placeOrder(orderId)],
      events: [{ type: 'OrderPlaced', subject: orderId, data: { orderId, totalCents: 1250 } }],
    });
    const after = Date.now();

    expect(await getOrder(orderId)).toEqual({ pk: { S: orderId }, status: { S: 'PLACED' } });
    const id = envelope?.id as string;
    const key = { S: `${OUTBOX_ITEM.KEY_PREFIX}${id}` };
    const item = (await client.send(new GetItemCommand({ TableName: config.outboxTableName, Key: { pk: key, sk: key }, ConsistentRead: true }))).Item;
    // exact attribute set and DynamoDB types: the pipe filter and input template read `.S`
    expect(Object.keys(item ?? {}).sort()).toEqual(['expiresAt', 'iefEnvelope', 'iefEventId', 'iefEventType', 'iefRecordType', 'iefWrittenAt', 'pk', 'sk']);
    expect(item?.[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]).toEqual({ S: OUTBOX_ITEM.RECORD_TYPE_VALUE });
    expect(item?.[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]).toEqual({ S: id });
    expect(item?.[OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]).toEqual({ S: 'OrderPlaced' });
    const parsed = parseEnvelope(item?.[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]?.S as string);
    expect(parsed).toEqual(envelope);
    expect(parsed).toMatchObject({ specversion: '1.0', source: 'orders-service', type: 'OrderPlaced', subject: orderId, data: { orderId, totalCents: 1250 } });
    expect(Date.parse(parsed.time ?? "missing")).toBeGreaterThanOrEqual(before);
    expect(Date.parse(parsed.time ?? "missing")).toBeLessThanOrEqual(after);
    // TTL in epoch SECONDS
    const expiresAt = Number(item?.[TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]?.N);
    expect(Number.isInteger(expiresAt)).toBe(true);
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(before / 1000) + RETENTION_SECONDS);
    expect(expiresAt).toBeLessThanOrEqual(Math.floor(after / 1000) + RETENTION_SECONDS);
  });

  test('writes no event when a business condition fails', async () => {
    const outbox = new Outbox({ client, config });
    const orderId = `order-${crypto.randomUUID()}`;
    await outbox.transactWrite({ items: [placeOrder(orderId)], events: [] });
    const eventId = crypto.randomUUID();

    const error = await rejection(outbox.transactWrite({ items: [placeOrder(orderId)], events: [{ type: 'OrderPlaced', id: eventId, data: {} }] }));

    expect(error).toBeInstanceOf(TransactionCancelledError);
    const cancelled = error as TransactionCancelledError;
    expect(cancelled.isDuplicateEvent).toBe(false);
    expect(cancelled.cancellationReasonCodes).toEqual(['ConditionalCheckFailed', 'None']);
    expect(cancelled.failedActions).toEqual([
      expect.objectContaining({ index: 0, kind: 'item', code: 'ConditionalCheckFailed', description: `item Put on table '${ordersTable}'` }),
    ]);
    expect(cancelled.message).toMatch(/nothing was written: action 0 \(item Put on table '.*'\): ConditionalCheckFailed/);
    expect(await itemsWithEventId(eventId)).toHaveLength(0);
  });

  test('a retried producer reusing its event id cannot create a second event', async () => {
    const outbox = new Outbox({ client, config });
    const eventId = `checkout-${crypto.randomUUID()}`;
    const firstOrder = `order-${crypto.randomUUID()}`;
    const retriedOrder = `order-${crypto.randomUUID()}`;
    await outbox.transactWrite({ items: [placeOrder(firstOrder)], events: [{ type: 'OrderPlaced', id: eventId, data: { n: 1 } }] });

    const error = await rejection(
      outbox.transactWrite({ items: [placeOrder(retriedOrder)], events: [{ type: 'OrderPlaced', id: eventId, data: { n: 2 } }] }),
    );

    expect(error).toBeInstanceOf(TransactionCancelledError);
    expect((error as TransactionCancelledError).isDuplicateEvent).toBe(true);
    expect((error as TransactionCancelledError).failedActions).toEqual([
      expect.objectContaining({ index: 1, kind: 'event', eventId, code: 'ConditionalCheckFailed' }),
    ]);
    expect(await getOrder(retriedOrder)).toBeUndefined();
    const items = await itemsWithEventId(eventId);
    expect(items).toHaveLength(1);
    expect(parseEnvelope(items[0]?.[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]?.S as string).data).toEqual({ n: 1 });
  });

  test('a lost response is retried by the SDK with the same ClientRequestToken and writes once', async () => {
    // DynamoDB Local honours ClientRequestToken; the SDK generates one per command and reuses it on retries
    const outbox = new Outbox({ client: localClient({ endpoint: proxy.endpoint, maxAttempts: 2 }), config });
    const eventId = crypto.randomUUID();
    const orderId = `order-${crypto.randomUUID()}`;
    const fired = proxy.inject({ target: TRANSACT, fault: { kind: 'drop-response' } });
    const sentBefore = proxy.requestCount(TRANSACT);

    await outbox.transactWrite({ items: [placeOrder(orderId)], events: [{ type: 'OrderPlaced', id: eventId, data: {} }] });

    expect(fired()).toBe(1);
    expect(proxy.requestCount(TRANSACT) - sentBefore).toBe(2);
    expect(await itemsWithEventId(eventId)).toHaveLength(1);
    expect(await getOrder(orderId)).toBeDefined();
  });

  test('commits several events and several business items atomically', async () => {
    const outbox = new Outbox({ client, config });
    const orders = [`order-${crypto.randomUUID()}`, `order-${crypto.randomUUID()}`];
    const events = ['OrderPlaced', 'PaymentRequested', 'StockReserved'].map((type) => ({ type, id: `${type}-${crypto.randomUUID()}`, data: { orders } }));

    const envelopes = await outbox.transactWrite({ items: orders.map(placeOrder), events });

    expect(envelopes.map((envelope) => envelope.id)).toEqual(events.map((event) => event.id));
    for (const orderId of orders) expect(await getOrder(orderId)).toBeDefined();
    for (const event of events) expect(await itemsWithEventId(event.id)).toHaveLength(1);
  });

  test('writes none of several events when one business condition fails', async () => {
    const outbox = new Outbox({ client, config });
    const existing = `order-${crypto.randomUUID()}`;
    await outbox.transactWrite({ items: [placeOrder(existing)], events: [] });
    const fresh = `order-${crypto.randomUUID()}`;
    const events = ['OrderPlaced', 'PaymentRequested', 'StockReserved'].map((type) => ({ type, id: `${type}-${crypto.randomUUID()}`, data: {} }));

    const error = await rejection(outbox.transactWrite({ items: [placeOrder(fresh), placeOrder(existing)], events }));

    expect(error).toBeInstanceOf(TransactionCancelledError);
    expect((error as TransactionCancelledError).cancellationReasonCodes).toEqual(['None', 'ConditionalCheckFailed', 'None', 'None', 'None']);
    expect(await getOrder(fresh)).toBeUndefined();
    for (const event of events) expect(await itemsWithEventId(event.id)).toHaveLength(0);
  });

  test('accepts a DocumentClient and several events in one transaction', async () => {
    const outbox = new Outbox({ client: DynamoDBDocumentClient.from(client), config });
    const envelopes = await outbox.transactWrite({ events: [{ type: 'A', data: 1 }, { type: 'B', data: 2 }] });
    expect(envelopes.map((envelope) => envelope.type)).toEqual(['A', 'B']);
    for (const envelope of envelopes) expect(await itemsWithEventId(envelope.id)).toHaveLength(1);
  });

  test('writes to a table without sort key or TTL using its own partition key name', async () => {
    const table = uniqueTableName('outbox-plain');
    await createTable(client, table, { partitionKey: 'PK' });
    const outbox = new Outbox({ client, config: { ...config, outboxTableName: table, partitionKeyName: 'PK', sortKeyName: undefined, timeToLiveAttributeName: undefined } });
    const [envelope] = await outbox.transactWrite({ events: [{ type: 'T', data: null }] });
    const [item] = await itemsWithEventId(envelope?.id as string, table);
    expect(Object.keys(item ?? {}).sort()).toEqual(['PK', 'iefEnvelope', 'iefEventId', 'iefEventType', 'iefRecordType', 'iefWrittenAt']);
    expect(item?.PK).toEqual({ S: `OUTBOX#${envelope?.id}` });
  });
});

describe('Outbox limits fail before any request', () => {
  let outbox: Outbox;
  let sentBefore: number;
  beforeAll(() => {
    outbox = new Outbox({ client: localClient({ endpoint: proxy.endpoint }), config });
  });
  const expectNothingSent = () => expect(proxy.requestCount() - sentBefore).toBe(0);

  test('fails on 101 actions', async () => {
    sentBefore = proxy.requestCount();
    const items = Array.from({ length: 100 }, (_, i) => placeOrder(`bulk-${i}`));
    const error = await rejection(outbox.transactWrite({ items, events: [{ type: 'BulkPlaced', data: {} }] }));
    expect(error).toBeInstanceOf(TransactionLimitError);
    expect(error.message).toBe('a transaction may hold at most 100 actions (DynamoDB TransactWriteItems limit), but 101 were given (100 items + 1 events)');
    expectNothingSent();
  });

  test('fails on two actions on one business item', async () => {
    sentBefore = proxy.requestCount();
    const update: TransactWriteItem = {
      Update: { TableName: ordersTable, Key: { pk: 'o-dup' }, UpdateExpression: 'SET #s = :s', ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':s': 'PAID' } },
    };
    const error = await rejection(outbox.transactWrite({ items: [placeOrder('o-dup'), update], events: [{ type: 'OrderPaid', data: {} }] }));
    expect(error).toBeInstanceOf(TransactionLimitError);
    expect(error.message).toMatch(/^actions 0 \(item Put on table '.*'\) and 1 \(item Update on table '.*'\) both target the item with key \{"pk":"o-dup"\}/);
    expectNothingSent();
  });

  test('fails on two events with one id', async () => {
    sentBefore = proxy.requestCount();
    const error = await rejection(outbox.transactWrite({ events: [{ type: 'A', id: 'same', data: 1 }, { type: 'B', id: 'same', data: 2 }] }));
    expect(error).toBeInstanceOf(TransactionLimitError);
    expect(error.message).toMatch(/actions 0 \(event 'same' \(A\) .*\) and 1 \(event 'same' \(B\) .*\) both target the item/);
    expectNothingSent();
  });

  test('fails on an oversized envelope, naming the limit and the size', async () => {
    sentBefore = proxy.requestCount();
    const error = await rejection(outbox.transactWrite({ items: [placeOrder('o-big')], events: [{ type: 'Huge', id: 'huge', data: 'x'.repeat(300_000) }] }));
    expect(error).toBeInstanceOf(EventTooLargeError);
    expect(error.message).toMatch(/event 'huge' \(Huge\) is too large: its envelope is 300,\d{3} bytes .* the SNS\/SQS message limit is 262,144 bytes/);
    expect((error as EventTooLargeError).limitBytes).toBe(262_144);
    expectNothingSent();
  });

  test('fails on an outbox item over the DynamoDB item limit, naming limit and size', async () => {
    sentBefore = proxy.requestCount();
    const error = await rejection(outbox.transactWrite({ events: [{ type: 'T'.repeat(205_000), id: 'long-type', data: {} }] }));
    expect(error).toBeInstanceOf(EventTooLargeError);
    expect(error.message).toMatch(/its outbox item is 410,\d{3} bytes, but the DynamoDB item size limit is 409,600 bytes/);
    expectNothingSent();
  });

  test('fails on business items adding up to more than 4 MB, naming the limit', async () => {
    sentBefore = proxy.requestCount();
    const items = Array.from({ length: 11 }, (_, i): TransactWriteItem => ({ Put: { TableName: ordersTable, Item: { pk: `big-${i}`, blob: 'x'.repeat(390_000) } } }));
    const error = await rejection(outbox.transactWrite({ items, events: [{ type: 'BulkPlaced', data: {} }] }));
    expect(error).toBeInstanceOf(TransactionLimitError);
    expect(error.message).toMatch(/may add up to at most 4,194,304 bytes \(4 MB, DynamoDB TransactWriteItems limit\), but these add up to at least 4,290,\d{3} bytes/);
    expectNothingSent();
  });
});

describe('Outbox.event and Outbox.fromEnvironment', () => {
  test('event() builds a Put the caller can send in its own transaction, with injected clock and ids', async () => {
    const now = new Date('2030-01-01T00:00:00.000Z');
    const outbox = new Outbox({ client, config, now: () => now, newId: () => `fixed-${crypto.randomUUID()}` });
    const put = outbox.event({ type: 'OrderShipped', data: { carrier: 'x' } });
    await DynamoDBDocumentClient.from(client).send(new TransactWriteCommand({ TransactItems: [put] }));
    const eventId = put.Put?.Item?.[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE] as string;
    expect(eventId).toMatch(/^fixed-/);
    const [item] = await itemsWithEventId(eventId);
    expect(item?.expiresAt).toEqual({ N: String(Date.parse('2030-01-01T00:00:00Z') / 1000 + RETENTION_SECONDS) });
    expect(parseEnvelope(item?.iefEnvelope?.S as string).time).toBe('2030-01-01T00:00:00.000Z');
  });

  test('fromEnvironment() writes to the table and with the source the environment names', async () => {
    vi.stubEnv(ENV.OUTBOX_TABLE_NAME, config.outboxTableName);
    vi.stubEnv(ENV.OUTBOX_PARTITION_KEY_NAME, 'pk');
    vi.stubEnv(ENV.OUTBOX_SORT_KEY_NAME, 'sk');
    vi.stubEnv(ENV.OUTBOX_TIME_TO_LIVE_ATTRIBUTE_NAME, 'expiresAt');
    vi.stubEnv(ENV.OUTBOX_EVENT_RETENTION_SECONDS, '60');
    vi.stubEnv(ENV.EVENT_SOURCE, 'env-source');
    try {
      const [envelope] = await Outbox.fromEnvironment(client).transactWrite({ events: [{ type: 'T', data: 1 }] });
      expect(envelope?.source).toBe('env-source');
      expect(await itemsWithEventId(envelope?.id as string)).toHaveLength(1);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  test('fromEnvironment() fails fast when the environment is incomplete', () => {
    vi.stubEnv(ENV.OUTBOX_TABLE_NAME, '');
    try {
      expect(() => Outbox.fromEnvironment(client)).toThrow(/IEF_OUTBOX_TABLE_NAME must be set/);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('Outbox.transactWriteOnce: a retry-safe producer in one call (issue 12, item 6)', () => {
  const order = (orderId: string, totalCents = 1250) => ({
    items: [placeOrder(orderId)],
    events: [{ id: `order-placed-${orderId}`, type: 'OrderPlaced', subject: orderId, data: { orderId, totalCents } }],
  });

  test('writes like transactWrite and says so', async () => {
    const outbox = new Outbox({ client, config });
    const orderId = `order-${crypto.randomUUID()}`;

    const result = await outbox.transactWriteOnce(order(orderId));

    expect(result.written).toBe(true);
    expect(result.events.map((event) => event.id)).toEqual([`order-placed-${orderId}`]);
    expect(await getOrder(orderId)).toBeDefined();
  });

  test("a client's retry after a commit whose response was lost is answered 'already written': no error, no second event", async () => {
    const orderId = `order-${crypto.randomUUID()}`;
    const losing = new Outbox({ client: localClient({ endpoint: proxy.endpoint, maxAttempts: 1 }), config });
    const fired = proxy.inject({ target: TRANSACT, fault: { kind: 'drop-response' } });
    await expect(losing.transactWriteOnce(order(orderId))).rejects.toThrow(); // the caller saw a network error...
    expect(fired()).toBe(1);
    expect(await getOrder(orderId)).toBeDefined(); // ...but it committed

    const retried = await new Outbox({ client, config }).transactWriteOnce(order(orderId));

    expect(retried.written).toBe(false);
    expect(retried.events).toEqual([expect.objectContaining({ id: `order-placed-${orderId}`, type: 'OrderPlaced', data: { orderId, totalCents: 1250 } })]);
    expect(await itemsWithEventId(`order-placed-${orderId}`)).toHaveLength(1);
  });

  test("a retry whose data holds a Date (or any value with toJSON, or an undefined member) is answered 'already written', not refused as a reused id", async () => {
    const orderId = `order-${crypto.randomUUID()}`;
    const outbox = new Outbox({ client, config });
    const input = () => ({
      items: [placeOrder(orderId)],
      events: [{ id: `order-placed-${orderId}`, type: 'OrderPlaced', data: { orderId, placedAt: new Date('2026-11-26T10:00:00.000Z'), note: undefined, lines: [undefined, 1] } }],
    });
    await outbox.transactWriteOnce(input());

    const retried = await outbox.transactWriteOnce(input());

    expect(retried.written).toBe(false);
    expect(retried.events[0]?.data).toEqual({ orderId, placedAt: '2026-11-26T10:00:00.000Z', lines: [null, 1] });
  });

  test('the same event id with another payload is not a retry: TransactionCancelledError, as transactWrite throws', async () => {
    const orderId = `order-${crypto.randomUUID()}`;
    const outbox = new Outbox({ client, config });
    await outbox.transactWriteOnce(order(orderId));

    const error = await rejection(outbox.transactWriteOnce(order(orderId, 999)));

    expect(error).toBeInstanceOf(TransactionCancelledError);
    expect((error as TransactionCancelledError).isDuplicateEvent).toBe(true);
    expect(error.message).toMatch(/event 'order-placed-order-[^']+' .*already in the outbox with another payload/);
  });

  test('a business condition that fails while the events are new is not a retry either', async () => {
    const orderId = `order-${crypto.randomUUID()}`;
    const outbox = new Outbox({ client, config });
    await outbox.transactWriteOnce(order(orderId));

    const error = await rejection(outbox.transactWriteOnce({ ...order(orderId), events: [{ id: `other-${orderId}`, type: 'OrderPlaced', data: {} }] }));

    expect(error).toBeInstanceOf(TransactionCancelledError);
    expect((error as TransactionCancelledError).isDuplicateEvent).toBe(false);
  });

  test('every event needs an id chosen by the caller (derived from the request): a random one could not name a retry', async () => {
    const outbox = new Outbox({ client, config });
    await expect(outbox.transactWriteOnce({ events: [{ type: 'OrderPlaced', data: {} }] })).rejects.toThrow(
      /transactWriteOnce: event 0 \(OrderPlaced\) needs an id chosen by the caller/,
    );
  });
});
