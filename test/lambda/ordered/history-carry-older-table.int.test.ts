/**
 * Issue 38, the ordered model's counterexample of seed 308844549, against DynamoDB Local: the outbox table replaced
 * twice (A, then B, then C), the subscriber's fence entered B's generation at #1, and the heads of C carried from A's
 * history, which knows A's #2. A generation of C based at #2 waits forever: the fence stands at #1 of B's generation,
 * no table ever handed out #2 of it, and A's #2 (generation 0) is refused by a fence of a newer generation. With the
 * subscriber named (`source.subscribers`, `--subscriber` beside `--from-history`), the carry sees the fence in a newer
 * generation than A's history holds and takes that aggregate from the fence: C's next event is #2 and applies, A's #2
 * still in flight is dead-lettered (`SequenceReusedError`), to be written again.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { carryOrderedHeads } from '../../../operator/ordered/outbox-heads';
import { TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
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
    createKeyedTable(client, 'history-carry-ledger'),
  ]);
});
afterAll(() => client.destroy());

const newOutbox = (): Promise<ProducerConfig> => createOutbox(client, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });
const subscribers = (): Array<{ subscriberName: string; inboxTable: string }> => [{ subscriberName: SUBSCRIBER, inboxTable: inboxConfig.inboxTableName }];

function consumer() {
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
  return { handler, deadLetter };
}

async function emit(config: ProducerConfig, aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config }).transactWrite({ events: [{ type: 'PaymentStep', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

/** Delivers one envelope; the ids SQS is to retry (a failed record). */
async function deliver(handler: ReturnType<typeof consumer>['handler'], envelope: OrderedEnvelope): Promise<string[]> {
  const response = await handler({ Records: [sqsRecord(JSON.stringify(envelope))] });
  return response.batchItemFailures.map((failure) => failure.itemIdentifier);
}

async function ledger(aggregateId: string): Promise<string[]> {
  const item = (await documents.send(new GetCommand({ TableName: ledgerTable, Key: { pk: aggregateId }, ConsistentRead: true }))).Item;
  return (item?.steps as string[] | undefined) ?? [];
}

/** A: #1, #2 committed, never applied (in flight); B (replaced, carried from the fences: nothing): #1 applied; C replaced. */
async function twiceReplaced(name: string) {
  const id = `payment-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const tableA = await newOutbox();
  const inFlight = [await emit(tableA, id, 'a-authorised'), await emit(tableA, id, 'a-captured')];
  const tableB = await newOutbox();
  await carryOrderedHeads({ client, outbox: tableB, source: { kind: 'fences', subscribers: subscribers() }, apply: true });
  const { handler, deadLetter } = consumer();
  const first = await emit(tableB, id, 'b-authorised');
  expect(first.sequence).toBe('0000000000000001');
  expect(await deliver(handler, first)).toEqual([]);
  const tableC = await newOutbox();
  return { id, tableA, tableC, inFlight, handler, deadLetter };
}

test('a history carry from a table older than the generation the fence applied takes that aggregate from the fence: the next event applies, the old in-flight event is dead-lettered', async () => {
  const { id, tableA, tableC, inFlight, handler, deadLetter } = await twiceReplaced('checked');
  const result = await carryOrderedHeads({ client, outbox: tableC, source: { kind: 'history', table: tableA.outboxTableName, subscribers: subscribers() }, apply: true });
  expect(result.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 0, target: 1, decision: 'set', fromFences: true });
  const next = await emit(tableC, id, 'c-captured');
  expect(next.sequence).toBe('0000000000000002');
  expect(await deliver(handler, next)).toEqual([]);
  expect(await ledger(id)).toEqual(['b-authorised', 'c-captured']);
  // A's events still in flight: never applied on top of C's, dead-lettered at once (to be written again), not held
  for (const envelope of inFlight) expect(await deliver(handler, envelope)).toEqual([]);
  expect(deadLetter.published.map((letter) => [letter.eventId, letter.errorName])).toEqual(inFlight.map((envelope) => [envelope.id, 'SequenceReusedError']));
  expect(await ledger(id)).toEqual(['b-authorised', 'c-captured']);
});

test('without the subscribers named, the history alone bases the generation at #2 of the older table: the next event waits for a #2 no table can hand out', async () => {
  const { id, tableA, tableC, handler } = await twiceReplaced('unchecked');
  const result = await carryOrderedHeads({ client, outbox: tableC, source: { kind: 'history', table: tableA.outboxTableName }, apply: true });
  expect(result.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 0, target: 2, decision: 'set' });
  const next = await emit(tableC, id, 'c-captured');
  expect(next.sequence).toBe('0000000000000003');
  expect(await deliver(handler, next)).toHaveLength(1);
  expect(await ledger(id)).toEqual(['b-authorised']);
});

test('`outbox heads --from-history --history-table <older> --subscriber <name> --table <inbox>`: says the aggregate comes from the fences; without them, says the history was not checked', async () => {
  const { id, tableA, tableC } = await twiceReplaced('cli');
  const run = async (...argv: string[]): Promise<{ code: number; stdout: string }> => {
    let stdout = '';
    const code = await main(['outbox', 'heads', '--outbox-table', tableC.outboxTableName, '--from-history', '--history-table', tableA.outboxTableName, ...argv], {
      stdout: (text) => void (stdout += text),
      stderr: () => undefined,
      user: 'on-call',
      createClient: () => localClient(),
    });
    return { code, stdout };
  };
  const unchecked = await run();
  expect(unchecked.code).toBe(EXIT_CODE.OK);
  expect(unchecked.stdout).toMatch(new RegExp(`${id}\\s+0\\s+2\\s+would set\\n`));
  expect(unchecked.stdout).toContain('note: no subscriber named, so the history was not checked against the fences');
  const checked = await run('--subscriber', SUBSCRIBER, '--table', inboxConfig.inboxTableName);
  expect(checked.code).toBe(EXIT_CODE.OK);
  expect(checked.stdout).toMatch(new RegExp(`${id}\\s+0\\s+1\\s+would set \\(from the fences: the history is older than the generation they applied\\)`));
  expect(checked.stdout).not.toContain('note: no subscriber named');
  expect((await run('--subscriber', SUBSCRIBER)).code).toBe(EXIT_CODE.USAGE);
});

/**
 * Review r8b, R8b-3: after a carry from the fences, the old table's in-flight event applied past the carried base
 * (the fence at #2 of generation 0, the new table's head at #3 of the carry's generation based at #1): every event of
 * the new table is refused as reused, and a history carry of the new table with the subscriber named took the
 * aggregate from the fence (#2) but left the head 'ahead' at #3: the next event (#4, a generation based at #3) waited
 * for a #3 the fence can never apply. The carry sets such a head back to the fence's sequence, in a new generation.
 */
async function headPastTheFence(name: string) {
  const id = `payment-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const { handler, deadLetter } = consumer();
  const tableT0 = await newOutbox();
  const authorised = await emit(tableT0, id, 't0-authorised');
  const inFlight = await emit(tableT0, id, 't0-captured');
  expect(await deliver(handler, authorised)).toEqual([]);
  const tableT1 = await newOutbox();
  await carryOrderedHeads({ client, outbox: tableT1, source: { kind: 'fences', subscribers: subscribers() }, apply: true });
  const written = [await emit(tableT1, id, 't1-captured'), await emit(tableT1, id, 't1-shipped')];
  expect(written.map((envelope) => envelope.sequence)).toEqual(['0000000000000002', '0000000000000003']);
  // the old table's in-flight #2 arrives first and applies (the fence at #2 of generation 0, past the carried base #1)
  expect(await deliver(handler, inFlight)).toEqual([]);
  for (const envelope of written) expect(await deliver(handler, envelope)).toEqual([]);
  expect(deadLetter.published.map((letter) => [letter.eventId, letter.errorName])).toEqual(written.map((envelope) => [envelope.id, 'SequenceReusedError']));
  expect(await ledger(id)).toEqual(['t0-authorised', 't0-captured']);
  return { id, tableT1, authorised, written, handler, deadLetter };
}

test('R8b-3: a history carry that takes an aggregate from the fence sets a head past the fence back to it, in a new generation: the events written again and the next apply', async () => {
  const { id, tableT1, handler, deadLetter } = await headPastTheFence('back');
  const result = await carryOrderedHeads({ client, outbox: tableT1, source: { kind: 'history', subscribers: subscribers() }, apply: true });
  expect(result.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 3, target: 2, decision: 'back', fromFences: true });
  // the runbook's step 5: the dead letters written again as new events, then the producers go on
  const again = [await emit(tableT1, id, 't1-captured-again'), await emit(tableT1, id, 't1-shipped-again'), await emit(tableT1, id, 'refunded')];
  expect(again.map((envelope) => envelope.sequence)).toEqual(['0000000000000003', '0000000000000004', '0000000000000005']);
  for (const envelope of again) expect(await deliver(handler, envelope)).toEqual([]);
  expect(await ledger(id)).toEqual(['t0-authorised', 't0-captured', 't1-captured-again', 't1-shipped-again', 'refunded']);
  expect(deadLetter.published).toHaveLength(2);
});

test('R8b-3: a head past the fence is never set back while a named subscriber can still apply the events past it (its fence in the head\'s generation)', async () => {
  const { id, tableT1, authorised, written } = await headPastTheFence('kept');
  // a second subscriber followed the new table's generation: it applied #2 and can still apply #3
  const other = { subscriberName: `${SUBSCRIBER}-2`, inboxTable: inboxConfig.inboxTableName };
  const second = createOrderedConsumer<{ step: string }>({
    client,
    config: { ...inboxConfig, subscriberName: other.subscriberName },
    deadLetter: new RecordingDeadLetterPublisher(),
    logger: recordingLogger().logger,
    metricsSink: () => undefined,
    handle: () => undefined,
  });
  expect(await deliver(second, authorised)).toEqual([]);
  expect(await deliver(second, written[0]!)).toEqual([]);
  const result = await carryOrderedHeads({ client, outbox: tableT1, source: { kind: 'history', subscribers: [...subscribers(), other] }, apply: true });
  expect(result.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 3, target: 2, decision: 'ahead', fromFences: true });
  const dry = await carryOrderedHeads({ client, outbox: tableT1, source: { kind: 'history', subscribers: subscribers() }, apply: false });
  expect(dry.heads.find((entry) => entry.aggregateId === id)).toEqual({ aggregateId: id, current: 3, target: 2, decision: 'back', fromFences: true });
});
