/**
 * The ordered path's producer (OrderedOutbox) and consumer (createOrderedConsumer) against DynamoDB Local: sequences
 * taken in the producer's transaction, the fence in the consumer's. The model-based search is ordered.model.int.test.ts.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { InvalidEventError, TransactionCancelledError } from '../../../lambda/errors';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { ORDERED_ENVELOPE, ORDERED_OUTBOX_ITEM, orderedGenerationKey, orderedHeadKey, SEQUENCE_FENCE, sequenceFenceKey } from '../../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { inject } from 'vitest';
import { localClient } from '../../support/dynamodb-client';
import { startFaultProxy } from '../../support/fault-proxy';
import { createInbox, createKeyedTable, createOutbox } from '../../support/proof/tables';
import { outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../helpers';
import { rejection } from '../helpers';

const SUBSCRIBER = 'shipping';
let client: DynamoDBClient;
let outboxConfig: ProducerConfig;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;

beforeAll(async () => {
  client = localClient();
  [outboxConfig, inboxConfig, ledgerTable] = await Promise.all([
    createOutbox(client, { eventSource: 'orders', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
    createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }),
    createKeyedTable(client, 'ordered-ledger'),
  ]);
});
afterAll(() => client.destroy());

/** A consumer that appends each applied sequence to its aggregate's ledger item, in the consumer's transaction. */
function orderedConsumer(now: () => Date = () => new Date()) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = createOrderedConsumer<{ step: string }>({
    client,
    config: inboxConfig,
    deadLetter,
    logger,
    now,
    metricsSink: () => undefined,
    handle: (event, tx) => {
      tx.update({
        TableName: ledgerTable,
        Key: { pk: (event as unknown as { subject: string }).subject },
        UpdateExpression: 'SET steps = list_append(if_not_exists(steps, :none), :step)',
        ExpressionAttributeValues: { ':none': [], ':step': [event.data.step] },
      });
    },
  });
  return { handler, lines, deadLetter };
}

async function ledger(aggregateId: string): Promise<string[]> {
  const item = (await DynamoDBDocumentClient.from(client).send(new GetCommand({ TableName: ledgerTable, Key: { pk: aggregateId }, ConsistentRead: true }))).Item;
  return (item?.steps as string[] | undefined) ?? [];
}

function outbox(): OrderedOutbox {
  return new OrderedOutbox({ client, config: outboxConfig });
}

async function emit(aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await outbox().transactWrite({ events: [{ type: 'OrderStep', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

describe('OrderedOutbox', () => {
  test('numbers each aggregate 1, 2, 3 in commit order; the head keeps the last event, the history every event', async () => {
    const a = `order-${Date.now()}-a`;
    const b = `order-${Date.now()}-b`;
    const sequences = [await emit(a, 'placed'), await emit(b, 'placed'), await emit(a, 'paid'), await emit(a, 'shipped')].map((e) => [e.partitionkey, e.sequence]);
    expect(sequences).toEqual([
      [a, '0000000000000001'],
      [b, '0000000000000001'],
      [a, '0000000000000002'],
      [a, '0000000000000003'],
    ]);
    const head = await client.send(new GetItemCommand({ TableName: outboxConfig.outboxTableName, Key: { pk: { S: orderedHeadKey(a) }, sk: { S: orderedHeadKey(a) } } }));
    expect(head.Item?.[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE]).toEqual({ N: '3' });
    expect(head.Item?.[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]).toEqual({ S: ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE });
    expect(head.Item?.[TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]).toBeUndefined(); // a head never expires: its sequence never restarts
    expect(JSON.parse(head.Item?.[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]?.S ?? '{}')).toMatchObject({ partitionkey: a, sequence: '0000000000000003', data: { step: 'shipped' } });
  });

  test('two producers racing for one aggregate each get their own sequence (the head condition fails the slower, which reads again)', async () => {
    const a = `order-${Date.now()}-race`;
    const written = await Promise.all(Array.from({ length: 4 }, (_, index) => emit(a, `step-${index}`)));
    expect(written.map((e) => Number(e.sequence)).sort()).toEqual([1, 2, 3, 4]);
  });

  test('a producer whose head read went stale before its commit takes the next sequence, never the one another producer just took (the head condition is equality)', async () => {
    // GIVEN an aggregate at sequence 1, and a producer whose commit is held until another producer has taken sequence 2
    const a = `order-${Date.now()}-stale-head`;
    await emit(a, 'placed');
    const slow = localClient();
    let held = false;
    let other: OrderedEnvelope | undefined;
    slow.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'TransactWriteItemsCommand' && !held) {
          held = true;
          other = await emit(a, 'paid');
        }
        return next(args);
      },
      { step: 'initialize', name: 'takeTheNextSequenceFirst' },
    );
    try {
      // WHEN the slow producer commits on its stale read of the head (sequence 1)
      const [late] = await new OrderedOutbox({ client: slow, config: outboxConfig }).transactWrite({ events: [{ type: 'OrderStep', aggregateId: a, subject: a, data: { step: 'shipped' } }] });

      // THEN its head condition failed, it read again and took sequence 3: one event per sequence
      expect(other?.sequence).toBe('0000000000000002');
      expect(late?.sequence).toBe('0000000000000003');
    } finally {
      slow.destroy();
    }
  });

  test("a head of an older generation than the table's (carried earlier; a later carry did not know its aggregate) goes on in the table's generation, based at its sequence", async () => {
    // GIVEN an aggregate at sequence 3 whose head is of generation 1, and the table's generation item at 2
    const a = `order-${Date.now()}-older-generation`;
    for (const step of ['placed', 'paid', 'packed']) await emit(a, step);
    const documents = DynamoDBDocumentClient.from(client);
    const keyOf = (key: string) => ({ [outboxConfig.partitionKeyName]: key, ...(outboxConfig.sortKeyName === undefined ? {} : { [outboxConfig.sortKeyName]: key }) });
    await documents.send(
      new UpdateCommand({
        TableName: outboxConfig.outboxTableName,
        Key: keyOf(orderedHeadKey(a)),
        UpdateExpression: 'SET #generation = :one, #base = :zero',
        ExpressionAttributeNames: { '#generation': ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE, '#base': ORDERED_OUTBOX_ITEM.GENERATION_BASE_ATTRIBUTE },
        ExpressionAttributeValues: { ':one': 1, ':zero': 0 },
      }),
    );
    const generationItem = keyOf(orderedGenerationKey());
    const before = (await documents.send(new GetCommand({ TableName: outboxConfig.outboxTableName, Key: generationItem, ConsistentRead: true }))).Item;
    await documents.send(
      new PutCommand({
        TableName: outboxConfig.outboxTableName,
        Item: { ...generationItem, [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: ORDERED_OUTBOX_ITEM.GENERATION_RECORD_TYPE_VALUE, [ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE]: 2 },
      }),
    );
    try {
      // WHEN the producer takes the next sequence
      const next = (await emit(a, 'shipped')) as unknown as Record<string, unknown>;

      // THEN it is #4 of the table's generation 2, based at 3: never generation 1, beside that generation's events in flight
      expect(next.sequence).toBe('0000000000000004');
      expect(Number(next[ORDERED_ENVELOPE.GENERATION_ATTRIBUTE])).toBe(2);
      expect(Number(next[ORDERED_ENVELOPE.GENERATION_BASE_ATTRIBUTE])).toBe(3);
    } finally {
      // the other tests of this table write without a carry: the generation item goes back as it was
      if (before === undefined) await documents.send(new DeleteCommand({ TableName: outboxConfig.outboxTableName, Key: generationItem }));
      else await documents.send(new PutCommand({ TableName: outboxConfig.outboxTableName, Item: before }));
    }
  });

  test('a commit whose response was lost and whose retry met a conflict is recognised as written: its sequence, not an error (found by the model)', async () => {
    const proxy = await startFaultProxy(inject('dynamoDbEndpoint'));
    const proxied = localClient({ endpoint: proxy.endpoint, maxAttempts: 3 });
    try {
      const a = `order-${Date.now()}-lost`;
      proxy.inject({ target: 'DynamoDB_20120810.TransactWriteItems', fault: { kind: 'drop-response' } });
      proxy.inject({ target: 'DynamoDB_20120810.TransactWriteItems', nth: 2, fault: { kind: 'transaction-conflict' } });
      const [written] = await new OrderedOutbox({ client: proxied, config: outboxConfig }).transactWrite({ events: [{ type: 'A', aggregateId: a, data: { n: 1 } }] });
      proxy.clearRules();
      expect(written?.sequence).toBe('0000000000000001');
      expect((await emit(a, 'next')).sequence).toBe('0000000000000002');
    } finally {
      proxied.destroy();
      await proxy.stop();
    }
  });

  test('an event id already written with another payload is refused, naming the id', async () => {
    const a = `order-${Date.now()}-reuse`;
    await outbox().transactWrite({ events: [{ id: `reused-${a}`, type: 'A', aggregateId: a, data: { n: 1 } }] });
    const error = await rejection(outbox().transactWrite({ events: [{ id: `reused-${a}`, type: 'A', aggregateId: a, data: { n: 2 } }] }));
    expect(error).toBeInstanceOf(TransactionCancelledError);
    expect(error.message).toContain(`event 'reused-${a}'`);
  });

  test('a retried command with the same event ids and payloads is answered with the events written before (like transactWriteOnce)', async () => {
    const a = `order-${Date.now()}-retry`;
    const command = { events: [{ id: `placed-${a}`, type: 'A', aggregateId: a, data: { n: 1 } }] };
    const [first] = await outbox().transactWrite(command);
    const [again] = await outbox().transactWrite(command);
    expect(again?.sequence).toBe(first?.sequence);
    expect((await emit(a, 'next')).sequence).toBe('0000000000000002');
  });

  test('refuses two events of one aggregate in one transaction, naming both and the rule', async () => {
    const error = await rejection(
      outbox().transactWrite({
        events: [
          { type: 'A', aggregateId: 'order-1', data: {} },
          { type: 'B', aggregateId: 'order-1', data: {} },
        ],
      }),
    );
    expect(error).toBeInstanceOf(InvalidEventError);
    expect(error.message).toContain("events 0 and 1 both belong to aggregate 'order-1'");
    expect(error.message).toContain('one action per item in a transaction');
  });

  test('refuses an aggregate id that can not be a FIFO message group id', async () => {
    const error = await rejection(outbox().transactWrite({ events: [{ type: 'A', aggregateId: 'naïve', data: {} }] }));
    expect(error.message).toMatch(/aggregateId must be 1 to 100 characters .* but was "naïve"/);
  });

  test('a business condition that fails cancels the event too: no sequence is taken', async () => {
    const a = `order-${Date.now()}-cond`;
    const error = await rejection(
      outbox().transactWrite({
        items: [{ ConditionCheck: { TableName: ledgerTable, Key: { pk: 'absent' }, ConditionExpression: 'attribute_exists(pk)' } }],
        events: [{ type: 'A', aggregateId: a, data: {} }],
      }),
    );
    expect(error).toBeInstanceOf(TransactionCancelledError);
    expect((await emit(a, 'first')).sequence).toBe('0000000000000001');
  });
});

describe('createOrderedConsumer: the sequence fence', () => {
  test('applies in sequence; a later event waits (failed, not applied), a redelivery is a duplicate; once the gap is filled the later one applies', async () => {
    const a = `order-${Date.now()}-fence`;
    const [placed, paid, shipped] = [await emit(a, 'placed'), await emit(a, 'paid'), await emit(a, 'shipped')];
    const { handler, lines } = orderedConsumer();
    const deliver = (envelope: OrderedEnvelope) => handler({ Records: [sqsRecord(JSON.stringify(envelope))] });
    await deliver(placed!);
    const gap = await deliver(shipped!);
    expect(gap.batchItemFailures).toHaveLength(1);
    expect(await ledger(a)).toEqual(['placed']);
    await deliver(paid!);
    await deliver(placed!);
    await deliver(shipped!);
    expect(await ledger(a)).toEqual(['placed', 'paid', 'shipped']);
    expect(outcomesOf(lines)).toEqual(['processed', 'failed', 'processed', 'duplicate', 'processed']);
    expect(JSON.stringify(lines.find((line) => line.outcome === 'failed'))).toContain('SequenceGapError');
    const fence = await DynamoDBDocumentClient.from(client).send(
      new GetCommand({ TableName: inboxConfig.inboxTableName, Key: { pk: sequenceFenceKey(SUBSCRIBER, a) } }),
    );
    expect(fence.Item).toMatchObject({ [SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE]: 3, [SEQUENCE_FENCE.APPLIED_EVENT_ID_ATTRIBUTE]: shipped!.id });
  });

  test('after the inbox record expired, the fence still answers a redelivery of an applied sequence as a duplicate', async () => {
    const a = `order-${Date.now()}-late`;
    const [placed, paid] = [await emit(a, 'placed'), await emit(a, 'paid')];
    const { handler: today } = orderedConsumer();
    await today({ Records: [sqsRecord(JSON.stringify(placed))] });
    await today({ Records: [sqsRecord(JSON.stringify(paid))] });
    const { handler: twoHoursLater, lines } = orderedConsumer(() => new Date(Date.now() + 2 * 3600_000));
    await twoHoursLater({ Records: [sqsRecord(JSON.stringify(placed))] });
    await twoHoursLater({ Records: [sqsRecord(JSON.stringify(paid))] });
    expect(outcomesOf(lines)).toEqual(['duplicate', 'duplicate']);
    expect(await ledger(a)).toEqual(['placed', 'paid']);
  });

  test('a message without an ordered position is dead-lettered with the reason', async () => {
    const { handler, deadLetter } = orderedConsumer();
    const body = JSON.stringify({ specversion: '1.0', id: 'plain-1', source: 's', type: 'T', data: {} });
    await handler({ Records: [sqsRecord(body)] });
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['NotAnOrderedEventError']);
  });
});
