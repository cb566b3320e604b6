/**
 * Issue 38, item 2: when an outbox's heads go back (a point-in-time restore into a new table, a replaced outbox table),
 * the producer hands out sequences the subscribers have passed. Such a new event must never be acknowledged unapplied:
 * the consumer sees that no inbox record of it exists and that it is younger than the deduplication window, so it is
 * dead-lettered (`SequenceReusedError`, naming aggregate, sequence and fence), not taken for a duplicate. And the
 * restore runbook of docs/ORDERED-DELIVERY.md, end to end against DynamoDB Local: a new outbox table (empty, or holding
 * older items), the heads carried over (`carryOrderedHeads`, the engine of `outbox heads`), new events applied, none lost.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { carryOrderedHeads } from '../../../operator/ordered/outbox-heads';
import { ORDERED_OUTBOX_ITEM } from '../../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { UNCHANGED_WOULD_WRITE_TEXT, UNCHANGED_WRITTEN_TEXT } from '../../../operator/cli/outbox-command';
import { localClient } from '../../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../../support/proof/tables';
import { outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../helpers';

const SUBSCRIBER = 'statements';
const WINDOW_SECONDS = 3600;
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;

beforeAll(async () => {
  client = localClient();
  documents = DynamoDBDocumentClient.from(client);
  [inboxConfig, ledgerTable] = await Promise.all([
    createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: WINDOW_SECONDS }),
    createKeyedTable(client, 'ordered-restore-ledger'),
  ]);
});
afterAll(() => client.destroy());

const newOutbox = (): Promise<ProducerConfig> => createOutbox(client, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });

function consumer(now: () => Date = () => new Date()) {
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
  const item = (await documents.send(new GetCommand({ TableName: ledgerTable, Key: { pk: aggregateId }, ConsistentRead: true }))).Item;
  return (item?.steps as string[] | undefined) ?? [];
}

async function emit(config: ProducerConfig, aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config }).transactWrite({ events: [{ type: 'PaymentStep', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

async function deliver(handler: ReturnType<typeof consumer>['handler'], ...envelopes: OrderedEnvelope[]): Promise<void> {
  for (const envelope of envelopes) {
    const response = await handler({ Records: [sqsRecord(JSON.stringify(envelope))] });
    expect(response.batchItemFailures).toEqual([]);
  }
}

const aggregate = (name: string): string => `payment-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

/** `idempotent-event-flow outbox heads --from-fences` on `outbox`, from this file's subscriber's fences, as the on-call user. */
async function outboxHeadsFromFences(outbox: ProducerConfig, ...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(['outbox', 'heads', '--outbox-table', outbox.outboxTableName, '--from-fences', '--subscriber', SUBSCRIBER, '--table', inboxConfig.inboxTableName, ...argv], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    user: 'on-call',
    createClient: () => localClient(),
  });
  return { code, stdout, stderr };
}

/** The aggregate's head item in `config`'s table: its sequence and record type. */
async function head(config: ProducerConfig, aggregateId: string): Promise<{ sequence?: number; recordType?: string }> {
  const key = `${ORDERED_OUTBOX_ITEM.HEAD_KEY_PREFIX}${aggregateId}`;
  const item = (await documents.send(new GetCommand({ TableName: config.outboxTableName, Key: { [config.partitionKeyName]: key, ...(config.sortKeyName === undefined ? {} : { [config.sortKeyName]: key }) }, ConsistentRead: true }))).Item;
  return { sequence: item?.[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE] as number | undefined, recordType: item?.[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE] as string | undefined };
}

describe('a new event below the fence is dead-lettered, never acknowledged unapplied', () => {
  test('a replaced (empty) outbox table starts the aggregate at 1 again: each new event below the fence is a SequenceReusedError dead letter', async () => {
    const id = aggregate('replaced');
    const original = await newOutbox();
    const { handler, lines, deadLetter } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'), await emit(original, id, 'captured'), await emit(original, id, 'settled'));
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'settled']);

    const replaced = await newOutbox();
    const refund = await emit(replaced, id, 'refunded');
    expect(refund.sequence).toBe('0000000000000001');
    await deliver(handler, refund);
    expect(outcomesOf(lines).slice(-1)).toEqual(['dead-lettered']);
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['SequenceReusedError']);
    expect(deadLetter.published[0]!.errorMessage).toMatch(new RegExp(`aggregate '${id}'.*sequence 1.*fence.* 3`));
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'settled']);
  });

  test('a redelivery of an applied event after its inbox record expired (older than the window) is still a duplicate', async () => {
    const id = aggregate('aged');
    const outbox = await newOutbox();
    const first = await emit(outbox, id, 'authorised');
    const second = await emit(outbox, id, 'captured');
    await deliver(consumer().handler, first, second);
    const later = consumer(() => new Date(Date.now() + (WINDOW_SECONDS + 60) * 1000));
    await deliver(later.handler, first);
    expect(outcomesOf(later.lines)).toEqual(['duplicate']);
    expect(later.deadLetter.published).toEqual([]);
  });
});

describe('the restore runbook: carry the heads over to the restored or new outbox table', () => {
  test('a restore into a new table holding older items: from the history the heads go back; from the fences they are carried forward; new events apply, none lost', async () => {
    const id = aggregate('restored');
    const other = aggregate('untouched');
    const original = await newOutbox();
    const { handler, deadLetter } = consumer();
    const events = [await emit(original, id, 'authorised'), await emit(original, id, 'captured')];
    // the restore point: the table as it was here (its items copied into the new table below)
    const snapshot = (await documents.send(new ScanCommand({ TableName: original.outboxTableName, ConsistentRead: true }))).Items ?? [];
    events.push(await emit(original, id, 'settled'));
    await deliver(handler, ...events, await emit(original, other, 'authorised'));

    const restored = await newOutbox();
    for (const item of snapshot) await documents.send(new PutCommand({ TableName: restored.outboxTableName, Item: item }));
    expect((await head(restored, id)).sequence).toBe(2);

    // the history in the restored table says 2 (what it holds): nothing to move
    const fromHistory = await carryOrderedHeads({ client, outbox: restored, source: { kind: 'history' }, apply: true });
    expect(fromHistory.heads.find((entry) => entry.aggregateId === id)).toMatchObject({ current: 2, target: 2, decision: 'unchanged' });

    // the fences of the subscriber say 3: a dry run says what it would set, and sets nothing
    const fences = { kind: 'fences' as const, subscribers: [{ subscriberName: SUBSCRIBER, inboxTable: inboxConfig.inboxTableName }] };
    const dryRun = await carryOrderedHeads({ client, outbox: restored, source: fences, apply: false });
    expect(dryRun.heads.filter((entry) => entry.aggregateId === id || entry.aggregateId === other)).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ aggregateId: id, current: 2, target: 3, decision: 'set' }),
        expect.objectContaining({ aggregateId: other, current: 0, target: 1, decision: 'set' }),
      ]),
    );
    expect((await head(restored, id)).sequence).toBe(2);
    await carryOrderedHeads({ client, outbox: restored, source: fences, apply: true });
    expect(await head(restored, id)).toEqual({ sequence: 3, recordType: ORDERED_OUTBOX_ITEM.CARRIED_HEAD_RECORD_TYPE_VALUE });

    // never backwards: a head ahead of its source (here a second copy of the restore point) stays
    const older = await newOutbox();
    for (const item of snapshot) await documents.send(new PutCommand({ TableName: older.outboxTableName, Item: item }));
    const again = await carryOrderedHeads({ client, outbox: restored, source: { kind: 'history', table: older.outboxTableName }, apply: true });
    expect(again.heads.find((entry) => entry.aggregateId === id)).toMatchObject({ current: 3, target: 2, decision: 'ahead' });
    expect((await head(restored, id)).sequence).toBe(3);

    const refund = await emit(restored, id, 'refunded');
    const next = await emit(restored, other, 'captured');
    expect([refund.sequence, next.sequence]).toEqual(['0000000000000004', '0000000000000002']);
    await deliver(handler, refund, next);
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'settled', 'refunded']);
    expect(await ledger(other)).toEqual(['authorised', 'captured']);
    expect(deadLetter.published).toEqual([]);
  });

  test('a replaced, empty table: the heads come from the fences alone; the next event takes the sequence after them', async () => {
    const id = aggregate('empty');
    const original = await newOutbox();
    const { handler, deadLetter } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'), await emit(original, id, 'captured'));
    const replaced = await newOutbox();
    const result = await carryOrderedHeads({ client, outbox: replaced, source: { kind: 'fences', subscribers: [{ subscriberName: SUBSCRIBER, inboxTable: inboxConfig.inboxTableName }] }, apply: true });
    expect(result.heads.find((entry) => entry.aggregateId === id)).toMatchObject({ current: 0, target: 2, decision: 'set' });
    const refund = await emit(replaced, id, 'refunded');
    expect(refund.sequence).toBe('0000000000000003');
    await deliver(handler, refund);
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'refunded']);
    expect(deadLetter.published).toEqual([]);
  });

  test('`outbox heads --from-fences` (the CLI): a dry run says what it would set and sets nothing; --yes sets it; a second run finds nothing to move', async () => {
    const id = aggregate('cli');
    const original = await newOutbox();
    const { handler, deadLetter } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'), await emit(original, id, 'captured'), await emit(original, id, 'settled'));
    const replaced = await newOutbox();
    const run = (...argv: string[]) => outboxHeadsFromFences(replaced, '--previous-outbox-table', original.outboxTableName, ...argv);
    const dryRun = await run();
    expect(dryRun.code).toBe(EXIT_CODE.OK);
    expect(dryRun.stdout).toMatch(new RegExp(`${id}\\s+0\\s+3\\s+would set`));
    expect(dryRun.stdout).toMatch(/dry run: would set \d+ head\(s\)/);
    expect((await head(replaced, id)).sequence).toBeUndefined();
    const applied = await run('--yes');
    expect(applied.code).toBe(EXIT_CODE.OK);
    expect(applied.stderr).toContain('"audit":"outbox-heads"');
    expect((await head(replaced, id)).sequence).toBe(3);
    const again = await run('--yes', '--json');
    expect(JSON.parse(again.stdout).heads).toEqual(expect.arrayContaining([{ aggregateId: id, current: 3, target: 3, decision: 'unchanged' }]));
    const refund = await emit(replaced, id, 'refunded');
    await deliver(handler, refund);
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'settled', 'refunded']);
    expect(deadLetter.published).toEqual([]);
    expect((await run('--from-history')).code).toBe(EXIT_CODE.USAGE);
  });

  test('review ro12, RO12-11: `outbox heads --yes` on a head already at its source writes it again (a new generation) and says so: counted and audited, not "unchanged"', async () => {
    const id = aggregate('rewritten');
    const original = await newOutbox();
    const { handler } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'), await emit(original, id, 'captured'));
    const replaced = await newOutbox();
    const run = (...argv: string[]) => outboxHeadsFromFences(replaced, '--previous-outbox-table', original.outboxTableName, ...argv);
    expect((await run('--yes')).code).toBe(EXIT_CODE.OK);
    const generationOf = async (): Promise<unknown> => {
      const key = `${ORDERED_OUTBOX_ITEM.HEAD_KEY_PREFIX}${id}`;
      const item = (await documents.send(new GetCommand({ TableName: replaced.outboxTableName, Key: { [replaced.partitionKeyName]: key, ...(replaced.sortKeyName === undefined ? {} : { [replaced.sortKeyName]: key }) }, ConsistentRead: true }))).Item;
      return item?.[ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE];
    };
    const before = await generationOf();
    const dryRun = await run();
    expect(dryRun.stdout).toMatch(new RegExp(`${id}\\s+2\\s+2\\s+${UNCHANGED_WOULD_WRITE_TEXT}`));
    expect(dryRun.stdout).toMatch(/dry run: would set 0 head\(s\) and write \d+ unchanged one\(s\) again/);
    const again = await run('--yes');
    expect(await generationOf()).not.toEqual(before);
    expect(again.stdout).toMatch(new RegExp(`${id}\\s+2\\s+2\\s+${UNCHANGED_WRITTEN_TEXT}`));
    expect(again.stdout).toMatch(/set 0 head\(s\) and wrote \d+ unchanged one\(s\) again/);
    const audit = JSON.parse(again.stderr.split('\n').find((line) => line.includes('"audit":"outbox-heads"'))!) as { set: Array<{ aggregateId: string; from: number; to: number; decision: string }> };
    expect(audit.set).toContainEqual({ aggregateId: id, from: 2, to: 2, decision: 'unchanged' });
  });
});
