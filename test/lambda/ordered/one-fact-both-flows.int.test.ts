/**
 * Issue 38 item 7: one business fact for both paths. `alsoToStandardFlow` on an `OrderedOutbox` event writes, in ONE
 * TransactWriteItems call, the aggregate's head, the ordered history item and a standard outbox item (`OutboxEvent.v1`,
 * which the standard relay publishes) whose id is derived from the ordered one: a retried call commits neither twice.
 * Against DynamoDB Local, with the fault proxy for a lost response.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import type { ProducerConfig } from '../../../lambda/config';
import { TransactionCancelledError, TransactionLimitError } from '../../../lambda/errors';
import { parseEnvelope } from '../../../lambda/envelope';
import { OrderedOutbox, standardEventIdOf, type OrderedNewEvent } from '../../../lambda/ordered/ordered-outbox';
import { ORDERED_OUTBOX_ITEM } from '../../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { localClient } from '../../support/dynamodb-client';
import { startFaultProxy } from '../../support/fault-proxy';
import { createKeyedTable, createOutbox } from '../../support/proof/tables';
import { scanItems } from '../../support/proof/table-reads';
import { rejection } from '../helpers';

let client: DynamoDBClient;
let config: ProducerConfig;
let paymentsTable: string;

beforeAll(async () => {
  client = localClient();
  [config, paymentsTable] = await Promise.all([
    createOutbox(client, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
    createKeyedTable(client, 'payments'),
  ]);
});
afterAll(() => client.destroy());

const outbox = (options: { client?: DynamoDBClient } = {}) => new OrderedOutbox({ client: options.client ?? client, config });

/** The outbox items of one aggregate's events (head, history, standard), by record type, and their envelopes. */
async function itemsOf(paymentId: string): Promise<{ recordType: string; eventId: string; envelope: Record<string, unknown> }[]> {
  const items = await scanItems(client, config.outboxTableName);
  return items
    .filter((item) => String(item[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]).includes(`"${paymentId}"`))
    .map((item) => ({
      recordType: String(item[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]),
      eventId: String(item[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]),
      envelope: JSON.parse(String(item[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE])) as Record<string, unknown>,
    }))
    .sort((a, b) => a.recordType.localeCompare(b.recordType));
}

function capture(paymentId: string, id = `captured-${paymentId}`): OrderedNewEvent {
  return { id, type: 'PaymentCaptured', aggregateId: paymentId, subject: paymentId, data: { paymentId, amount: 1250 }, alsoToStandardFlow: true };
}

const captureItem = (paymentId: string) => ({
  Put: { TableName: paymentsTable, Item: { pk: paymentId, status: 'CAPTURED' }, ConditionExpression: 'attribute_not_exists(pk)' },
});

describe('one fact for both paths (alsoToStandardFlow)', () => {
  test('one call writes the business item, the ordered event (head and history) and the standard event with the derived id, the same fact', async () => {
    const payment = `pay-${Date.now()}-both`;
    const [ordered] = await outbox().transactWrite({ items: [captureItem(payment)], events: [capture(payment)] });
    expect(ordered).toMatchObject({ id: `captured-${payment}`, partitionkey: payment, sequence: '0000000000000001' });
    expect(standardEventIdOf(ordered!.id)).toBe(`captured-${payment}.standard`);
    const items = await itemsOf(payment);
    expect(items.map(({ recordType, eventId }) => [recordType, eventId])).toEqual([
      [ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE, ordered!.id],
      [ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE, ordered!.id],
      [OUTBOX_ITEM.RECORD_TYPE_VALUE, standardEventIdOf(ordered!.id)],
    ]);
    const standard = parseEnvelope(JSON.stringify(items[2]!.envelope));
    // the same fact, without an ordered position: the standard flow keeps no order
    const { id: _id, partitionkey: _aggregate, sequence: _sequence, iefwrittenat: _writtenAt, ...fact } = ordered!;
    expect(standard).toEqual({ ...fact, id: standardEventIdOf(ordered!.id) });
    expect(items[2]!.envelope).not.toHaveProperty('partitionkey');
    expect(items[2]!.envelope).not.toHaveProperty('iefwrittenat'); // the ordered consumer's age stamp: the standard item has its own iefWrittenAt
  });

  test('a retried call (the same command) commits neither event twice and takes no second sequence; the next fact takes sequence 2', async () => {
    const payment = `pay-${Date.now()}-retry`;
    const [first] = await outbox().transactWrite({ items: [captureItem(payment)], events: [capture(payment)] });
    const [again] = await outbox().transactWrite({ items: [captureItem(payment)], events: [capture(payment)] });
    expect(again).toEqual(first);
    const [refunded] = await outbox().transactWrite({ events: [{ ...capture(payment, `refunded-${payment}`), type: 'PaymentRefunded' }] });
    expect(refunded?.sequence).toBe('0000000000000002');
    const eventIds = (await itemsOf(payment)).filter((item) => item.recordType !== ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE).map((item) => item.eventId);
    expect(eventIds.sort()).toEqual([`captured-${payment}`, `captured-${payment}.standard`, `refunded-${payment}`, `refunded-${payment}.standard`]);
  });

  test("the SDK's own retry after a lost response meets a conflict: recognised as written, each event once", async () => {
    const proxy = await startFaultProxy(inject('dynamoDbEndpoint'));
    const proxied = localClient({ endpoint: proxy.endpoint, maxAttempts: 3 });
    try {
      const payment = `pay-${Date.now()}-lost`;
      proxy.inject({ target: 'DynamoDB_20120810.TransactWriteItems', fault: { kind: 'drop-response' } });
      proxy.inject({ target: 'DynamoDB_20120810.TransactWriteItems', nth: 2, fault: { kind: 'transaction-conflict' } });
      const [written] = await outbox({ client: proxied }).transactWrite({ events: [capture(payment)] });
      proxy.clearRules();
      expect(written?.sequence).toBe('0000000000000001');
      expect((await itemsOf(payment)).map((item) => item.eventId)).toEqual([written!.id, written!.id, `${written!.id}.standard`]);
    } finally {
      proxied.destroy();
      await proxy.stop();
    }
  });

  test('a standard id already taken by another fact cancels the whole transaction, naming it: nothing written, no sequence taken', async () => {
    const payment = `pay-${Date.now()}-taken`;
    await outbox().transactWrite({ events: [{ id: `other-${payment}.standard`, type: 'Other', aggregateId: `${payment}-x`, data: {} }] });
    const error = await rejection(outbox().transactWrite({ events: [capture(payment, `other-${payment}`)] }));
    expect(error).toBeInstanceOf(TransactionCancelledError);
    expect(error.message).toContain(`event 'other-${payment}.standard'`);
    expect(await itemsOf(payment)).toEqual([]);
  });

  test("the transaction's item limit counts three actions per such event: 33 events and one business item commit (100 actions); 34 are refused before sending, naming the count", async () => {
    const run = `pay-${Date.now()}-limit`;
    const events = (count: number, prefix: string) => Array.from({ length: count }, (_, index) => capture(`${run}-${prefix}-${index}`));
    const written = await outbox().transactWrite({ items: [captureItem(`${run}-fits`)], events: events(33, 'fits') });
    expect(written).toHaveLength(33);
    const error = await rejection(outbox().transactWrite({ events: events(34, 'over') }));
    expect(error).toBeInstanceOf(TransactionLimitError);
    expect(error.message).toContain('0 items + 34 events (a head and a history item each) + 34 standard event(s) (alsoToStandardFlow: an outbox item each)');
    expect(await itemsOf(`${run}-over-0`)).toEqual([]);
  });
});
