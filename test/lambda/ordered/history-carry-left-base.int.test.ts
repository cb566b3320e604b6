/**
 * Issue 38, the ordered model's counterexample of seed 3 (CI run 48's failure), against DynamoDB Local: table A hands
 * out #1 and #2 (generation 0, in flight); A is replaced by B and the heads carried from the fences of nothing (B's
 * generation based at 0), B hands out #1-#3; B is replaced by C and the heads carried from B's history (C's generation
 * based at #3). A's #1 and #2 apply first: B's events are refused (two histories), and C's generation can be entered
 * only with the fence at #3, which its generation 0 never reaches (A ended at #2). The runbook's other carry (from B's
 * history, the subscriber named) takes the aggregate from the fence (#2): it must set C's head back to #2, in a new
 * generation, not leave it 'ahead' at #3, where the events written again would wait forever.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { carryOrderedHeads } from '../../../operator/ordered/outbox-heads';
import { TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { orderedHeadKey } from '../../../lambda/contract/ordered-wire-format';
import { localClient } from '../../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../../support/proof/tables';
import { RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../helpers';

const SUBSCRIBER = 'ledger';
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;

beforeAll(async () => {
  client = localClient();
  documents = DynamoDBDocumentClient.from(client);
  [inboxConfig, ledgerTable] = await Promise.all([
    createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }),
    createKeyedTable(client, 'history-carry-left-ledger'),
  ]);
});
afterAll(() => client.destroy());

const newOutbox = (): Promise<ProducerConfig> => createOutbox(client, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });
const subscribers = (): Array<{ subscriberName: string; inboxTable: string }> => [{ subscriberName: SUBSCRIBER, inboxTable: inboxConfig.inboxTableName }];

async function emit(config: ProducerConfig, aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config }).transactWrite({ events: [{ type: 'PaymentStep', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

async function ledger(aggregateId: string): Promise<string[]> {
  const item = (await documents.send(new GetCommand({ TableName: ledgerTable, Key: { pk: aggregateId }, ConsistentRead: true }))).Item;
  return (item?.steps as string[] | undefined) ?? [];
}

/** The model's seven commands, up to the old table's events applied and B's dead-lettered; C's head stands at #3. */
async function headOnLeftHistory() {
  const id = `payment-left-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = createOrderedConsumer<{ step: string }>({
    client,
    config: inboxConfig,
    deadLetter,
    logger: recordingLogger().logger,
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
  const deliver = async (envelope: OrderedEnvelope): Promise<string[]> => (await handler({ Records: [sqsRecord(JSON.stringify(envelope))] })).batchItemFailures.map((failure) => failure.itemIdentifier);
  const tableA = await newOutbox();
  const inFlight = [await emit(tableA, id, 'a-authorised'), await emit(tableA, id, 'a-captured')];
  const tableB = await newOutbox();
  await carryOrderedHeads({ client, outbox: tableB, source: { kind: 'fences', subscribers: subscribers() }, apply: true });
  const fromB = [await emit(tableB, id, 'b-authorised'), await emit(tableB, id, 'b-captured'), await emit(tableB, id, 'b-shipped')];
  expect(fromB.map((envelope) => envelope.sequence)).toEqual(['0000000000000001', '0000000000000002', '0000000000000003']);
  const tableC = await newOutbox();
  // no fence yet: the history carry bases C's generation at B's #3
  const first = await carryOrderedHeads({ client, outbox: tableC, source: { kind: 'history', table: tableB.outboxTableName, subscribers: subscribers() }, apply: true });
  expect(first.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 0, target: 3, decision: 'set' });
  // A's events arrive first and apply (the fence at #2 of generation 0); B's are refused as another history
  for (const envelope of inFlight) expect(await deliver(envelope)).toEqual([]);
  for (const envelope of fromB) expect(await deliver(envelope)).toEqual([]);
  expect(deadLetter.published.map((letter) => [letter.eventId, letter.errorName])).toEqual(fromB.map((envelope) => [envelope.id, 'SequenceReusedError']));
  expect(await ledger(id)).toEqual(['a-authorised', 'a-captured']);
  return { id, tableB, tableC, deliver, deadLetter };
}

test('a history carry sets a head based on a history the fence has left back to the fence: the events written again and the next apply', async () => {
  const { id, tableB, tableC, deliver, deadLetter } = await headOnLeftHistory();
  const dry = await carryOrderedHeads({ client, outbox: tableC, source: { kind: 'history', table: tableB.outboxTableName, subscribers: subscribers() }, apply: false });
  expect(dry.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 3, target: 2, decision: 'back', fromFences: true });
  const result = await carryOrderedHeads({ client, outbox: tableC, source: { kind: 'history', table: tableB.outboxTableName, subscribers: subscribers() }, apply: true });
  expect(result.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 3, target: 2, decision: 'back', fromFences: true });
  // the runbook's step 5: B's dead letters written again as new events, then the producers go on
  const again = [await emit(tableC, id, 'b-authorised-again'), await emit(tableC, id, 'b-captured-again'), await emit(tableC, id, 'b-shipped-again'), await emit(tableC, id, 'refunded')];
  expect(again.map((envelope) => envelope.sequence)).toEqual(['0000000000000003', '0000000000000004', '0000000000000005', '0000000000000006']);
  for (const envelope of again) expect(await deliver(envelope)).toEqual([]);
  expect(await ledger(id)).toEqual(['a-authorised', 'a-captured', 'b-authorised-again', 'b-captured-again', 'b-shipped-again', 'refunded']);
  expect(deadLetter.published).toHaveLength(3);
});

test('until that carry, C\'s next event (based at #3) is held: the fence at #2 of generation 0 never reaches #3', async () => {
  // what the carry must not leave as it is: C's own next event waits behind a gap no event fills
  const { id, tableC, deliver } = await headOnLeftHistory();
  const next = await emit(tableC, id, 'refunded');
  expect(next.sequence).toBe('0000000000000004');
  expect(await deliver(next)).toHaveLength(1);
  expect(await ledger(id)).toEqual(['a-authorised', 'a-captured']);
});

/**
 * The ordered model, seed 1001, run 37: the same with a history OLDER than the fence's generation. A hands out #1 and
 * #2 (generation 0, in flight); B (carried from the fences of nothing) hands out #1; C is carried from A's history
 * before anything applied (a generation based at A's #2). B's #1 applies first (the fence in B's generation at #1), A's
 * events are refused. The other carry from A's history takes the aggregate from the fence (it followed a newer
 * generation than A's history holds): C's head, based at #2 (a sequence of A's line, which B's line never reaches), must
 * be set back to #1, not left 'ahead'.
 */
test('a history carry sets a head based on a history older than the fence\'s generation back to the fence: A\'s events written again apply', async () => {
  const id = `payment-older-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = createOrderedConsumer<{ step: string }>({
    client,
    config: inboxConfig,
    deadLetter,
    logger: recordingLogger().logger,
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
  const deliver = async (envelope: OrderedEnvelope): Promise<string[]> => (await handler({ Records: [sqsRecord(JSON.stringify(envelope))] })).batchItemFailures.map((failure) => failure.itemIdentifier);
  const tableA = await newOutbox();
  const fromA = [await emit(tableA, id, 'a-authorised'), await emit(tableA, id, 'a-captured')];
  const tableB = await newOutbox();
  await carryOrderedHeads({ client, outbox: tableB, source: { kind: 'fences', subscribers: subscribers() }, apply: true });
  const fromB = await emit(tableB, id, 'b-authorised');
  const tableC = await newOutbox();
  const history = { kind: 'history' as const, table: tableA.outboxTableName, subscribers: subscribers() };
  const first = await carryOrderedHeads({ client, outbox: tableC, source: history, apply: true });
  expect(first.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 0, target: 2, decision: 'set' });
  expect(await deliver(fromB)).toEqual([]);
  for (const envelope of fromA) expect(await deliver(envelope)).toEqual([]);
  expect(deadLetter.published.map((letter) => [letter.eventId, letter.errorName])).toEqual(fromA.map((envelope) => [envelope.id, 'SequenceReusedError']));
  const result = await carryOrderedHeads({ client, outbox: tableC, source: history, apply: true });
  expect(result.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 2, target: 1, decision: 'back', fromFences: true });
  const again = [await emit(tableC, id, 'a-authorised-again'), await emit(tableC, id, 'a-captured-again')];
  expect(again.map((envelope) => envelope.sequence)).toEqual(['0000000000000002', '0000000000000003']);
  for (const envelope of again) expect(await deliver(envelope)).toEqual([]);
  expect(await ledger(id)).toEqual(['b-authorised', 'a-authorised-again', 'a-captured-again']);
});

/**
 * The ordered model, seed 4004, run 0 (issue 38, tenth session): the fence in an older generation BELOW the base of
 * the history's newest generation, where the history never saw the fence's generation. A hands out #1 and #2
 * (generation 0); B (carried from the fences of nothing: G1, based at 0) hands out #1; B's head is carried from A's
 * history (G2, based at A's #2) and B hands out #3. B's #1 applies first (the fence in G1 at #1); A's events are
 * refused, B's #3 is held (G2's base, #2, not reached). G1 handed out nothing past #1, so nothing in flight can
 * bring the fence to #2: B's history, read by the next carry, holds G2 (based at #2) and the fence's G1 only at #1,
 * but it cannot tell (a history never lists what another table's line still has in flight). With the runbook's
 * precondition (the subscribers' queues and dead-letter queues drained), no event of an older generation is left to
 * move the fence; so a history carry with the subscriber named takes such an aggregate from the fences (`fromFences`):
 * C's generation is based at #1, where the fence can enter it, not at B's #3, where it would wait forever.
 */
const headKey = (config: ProducerConfig, aggregateId: string): Record<string, string> => ({
  [config.partitionKeyName]: orderedHeadKey(aggregateId),
  ...(config.sortKeyName === undefined ? {} : { [config.sortKeyName]: orderedHeadKey(aggregateId) }),
});

async function fenceBelowNewerBase() {
  const id = `payment-below-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = createOrderedConsumer<{ step: string }>({
    client,
    config: inboxConfig,
    deadLetter,
    logger: recordingLogger().logger,
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
  const deliver = async (envelope: OrderedEnvelope): Promise<string[]> => (await handler({ Records: [sqsRecord(JSON.stringify(envelope))] })).batchItemFailures.map((failure) => failure.itemIdentifier);
  const tableA = await newOutbox();
  const fromA = [await emit(tableA, id, 'a-authorised'), await emit(tableA, id, 'a-captured')];
  const tableB = await newOutbox();
  await carryOrderedHeads({ client, outbox: tableB, source: { kind: 'fences', subscribers: subscribers() }, apply: true });
  const firstOfB = await emit(tableB, id, 'b-authorised');
  const carried = await carryOrderedHeads({ client, outbox: tableB, source: { kind: 'history', table: tableA.outboxTableName, subscribers: subscribers() }, apply: true });
  expect(carried.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 1, target: 2, decision: 'set' });
  const thirdOfB = await emit(tableB, id, 'b-shipped');
  expect(thirdOfB.sequence).toBe('0000000000000003');
  expect(await deliver(firstOfB)).toEqual([]);
  for (const envelope of fromA) expect(await deliver(envelope)).toEqual([]);
  expect(deadLetter.published.map((letter) => [letter.eventId, letter.errorName])).toEqual(fromA.map((envelope) => [envelope.id, 'SequenceReusedError']));
  // held: G2's base (#2) is not reached; after maxReceiveCount SQS moves it to the dead-letter queue
  expect(await deliver(thirdOfB)).toHaveLength(1);
  expect(await ledger(id)).toEqual(['b-authorised']);
  const tableC = await newOutbox();
  return { id, tableB, tableC, deliver, deadLetter, fromA, thirdOfB };
}

test('a history carry takes from the fence an aggregate whose fence is in an older generation below the base of the history\'s newest: the events written again apply', async () => {
  const { id, tableB, tableC, deliver, deadLetter } = await fenceBelowNewerBase();
  const history = { kind: 'history' as const, table: tableB.outboxTableName, subscribers: subscribers() };
  const result = await carryOrderedHeads({ client, outbox: tableC, source: history, apply: true });
  expect(result.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 0, target: 1, decision: 'set', fromFences: true });
  // the runbook's step 5: A's two dead letters and B's held #3 (moved to the dead-letter queue, `reused` once the
  // fence passes its sequence) written again, then the producers go on
  const again = [await emit(tableC, id, 'a-authorised-again'), await emit(tableC, id, 'a-captured-again'), await emit(tableC, id, 'b-shipped-again')];
  expect(again.map((envelope) => envelope.sequence)).toEqual(['0000000000000002', '0000000000000003', '0000000000000004']);
  for (const envelope of again) expect(await deliver(envelope)).toEqual([]);
  expect(await ledger(id)).toEqual(['b-authorised', 'a-authorised-again', 'a-captured-again', 'b-shipped-again']);
  expect(deadLetter.published).toHaveLength(2);
});

test('a head already carried to such a history\'s sequence (the seed-4004 restore) is set back to the fence, not left unchanged', async () => {
  const { id, tableB, tableC, deliver, thirdOfB, deadLetter } = await fenceBelowNewerBase();
  const history = { kind: 'history' as const, table: tableB.outboxTableName, subscribers: subscribers() };
  // a restore of B (its head #3 in G2) into C, as the model's restoreOutbox: C's head stands at the history's #3
  await documents.send(new PutCommand({ TableName: tableC.outboxTableName, Item: (await documents.send(new GetCommand({ TableName: tableB.outboxTableName, Key: headKey(tableB, id), ConsistentRead: true }))).Item! }));
  const result = await carryOrderedHeads({ client, outbox: tableC, source: history, apply: true });
  expect(result.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 3, target: 1, decision: 'back', fromFences: true });
  const again = await emit(tableC, id, 'b-shipped-again');
  expect(again.sequence).toBe('0000000000000002');
  expect(await deliver(again)).toEqual([]);
  // B's #3, redriven from the dead-letter queue, is refused now (an older generation than the fence's): written again, not applied twice
  expect(await deliver(thirdOfB)).toEqual([]);
  expect(deadLetter.published.at(-1)).toMatchObject({ eventId: thirdOfB.id, errorName: 'SequenceReusedError' });
  expect(await ledger(id)).toEqual(['b-authorised', 'b-shipped-again']);
});
