/**
 * Issue 38: `outbox heads --from-fences` checks the drain. The fences know only what was applied, so an event the old
 * table committed that is still in flight (its stream, a queue, a dead-letter queue) would have its sequence handed out
 * again by a carry from the fences. The command sees such events in the outbox table and in the table restored from or
 * replaced (`--previous-outbox-table`), refuses while there are any (naming them and what it waits for), and carries
 * with `--allow-undrained` only with a warning naming them. Against DynamoDB Local, with the real consumer.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import type { SqsBatchHandler } from '../../../lambda/consumer/create-consumer';
import { orderedHeadKey, ORDERED_OUTBOX_ITEM } from '../../../lambda/contract/ordered-wire-format';
import { TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { PREVIOUS_TABLE_NEEDED, REFUSED_UNDRAINED } from '../../../operator/cli/outbox-command';
import { UNDRAINED_RACE_TEXT, undrainedText } from '../../../operator/cli/undrained-events';
import { localClient } from '../../support/dynamodb-client';
import { createInbox, createOutbox } from '../../support/proof/tables';
import { RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../helpers';

const SUBSCRIBER = 'ledger-drain';
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let inbox: ConsumerConfig;
let handler: SqsBatchHandler;

beforeAll(async () => {
  client = localClient();
  documents = DynamoDBDocumentClient.from(client);
  inbox = await createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 });
  handler = createOrderedConsumer<{ step: string }>({
    client,
    config: inbox,
    deadLetter: new RecordingDeadLetterPublisher(),
    logger: recordingLogger().logger,
    metricsSink: () => undefined,
    handle: () => undefined,
  });
});
afterAll(() => client.destroy());

const newOutbox = (): Promise<ProducerConfig> => createOutbox(client, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });
const aggregate = (name: string): string => `drain-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

async function emit(config: ProducerConfig, aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config }).transactWrite({ events: [{ type: 'PaymentStep', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

async function deliver(...envelopes: OrderedEnvelope[]): Promise<void> {
  for (const envelope of envelopes) expect((await handler({ Records: [sqsRecord(JSON.stringify(envelope))] })).batchItemFailures).toEqual([]);
}

async function headOf(config: ProducerConfig, aggregateId: string): Promise<number | undefined> {
  const key = orderedHeadKey(aggregateId);
  const item = (await documents.send(new GetCommand({ TableName: config.outboxTableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: key, [TABLE_SCHEMA.SORT_KEY]: key }, ConsistentRead: true }))).Item;
  return item?.[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE] as number | undefined;
}

async function heads(outbox: ProducerConfig, ...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(['outbox', 'heads', '--outbox-table', outbox.outboxTableName, '--subscriber', SUBSCRIBER, '--table', inbox.inboxTableName, ...argv], {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    user: 'on-call',
    createClient: () => localClient(),
  });
  return { code, stdout, stderr };
}

describe('outbox heads --from-fences waits for the drain', () => {
  test('refuses while the table restored from holds events no fence applied, names them, and writes nothing; carries once they are applied', async () => {
    const id = aggregate('refused');
    const old = await newOutbox();
    const authorised = await emit(old, id, 'authorised');
    await deliver(authorised);
    // committed, not applied yet: in the old table's stream or the subscriber's queue
    const captured = await emit(old, id, 'captured');
    const settled = await emit(old, id, 'settled');
    const replaced = await newOutbox();

    const refused = await heads(replaced, '--from-fences', '--previous-outbox-table', old.outboxTableName, '--yes');
    expect(refused.code).toBe(EXIT_CODE.REFUSED);
    const expected = [captured, settled].map((event) => ({ table: old.outboxTableName, aggregateId: id, sequence: Number(event.sequence), eventId: event.id }));
    expect(refused.stderr).toContain(undrainedText(expected, false, replaced.outboxTableName));
    expect(refused.stderr).not.toContain('"audit":"outbox-heads"');
    expect(await headOf(replaced, id)).toBeUndefined();

    // the drain: the subscriber applies them; the carry then sets the head past them
    await deliver(captured, settled);
    const carried = await heads(replaced, '--from-fences', '--previous-outbox-table', old.outboxTableName, '--yes', '--json');
    expect(carried.code).toBe(EXIT_CODE.OK);
    expect(carried.stderr).not.toContain('not drained');
    expect(JSON.parse(carried.stdout).undrained).toBeUndefined();
    expect(await headOf(replaced, id)).toBe(3);
  });

  test('--allow-undrained carries anyway, with a warning and the --json list naming the events in flight', async () => {
    const id = aggregate('allowed');
    const old = await newOutbox();
    await deliver(await emit(old, id, 'authorised'));
    const captured = await emit(old, id, 'captured');
    const replaced = await newOutbox();
    const carried = await heads(replaced, '--from-fences', '--previous-outbox-table', old.outboxTableName, '--allow-undrained', '--yes', '--json');
    expect(carried.code).toBe(EXIT_CODE.OK);
    const expected = [{ table: old.outboxTableName, aggregateId: id, sequence: 2, eventId: captured.id }];
    expect(carried.stderr).toContain(undrainedText(expected, true, replaced.outboxTableName));
    expect(JSON.parse(carried.stdout).undrained).toEqual(expected);
    expect(await headOf(replaced, id)).toBe(1);
  });

  test('a head the carry leaves ahead keeps its events\' sequences (not refused); an aggregate no fence knows is checked against the head it keeps', async () => {
    const [applied, unknown] = [aggregate('ahead'), aggregate('unknown')];
    const old = await newOutbox();
    const restored = await newOutbox();
    // the restored table holds #1 (applied) and #2 (in flight): its head stays at #2, past the fence, so #2 keeps its sequence
    await deliver(await emit(restored, applied, 'authorised'));
    await emit(restored, applied, 'captured');
    expect((await heads(restored, '--from-fences', '--previous-outbox-table', old.outboxTableName)).code).toBe(EXIT_CODE.OK);
    // an aggregate only the old table knows, no fence applied any of it: the new table has no head for it, so its #1
    // would be handed out again
    const placed = await emit(old, unknown, 'placed');
    const refused = await heads(restored, '--from-fences', '--previous-outbox-table', old.outboxTableName);
    expect(refused.code).toBe(EXIT_CODE.REFUSED);
    expect(refused.stderr).toContain(undrainedText([{ table: old.outboxTableName, aggregateId: unknown, sequence: 1, eventId: placed.id }], false, restored.outboxTableName));
    expect(refused.stderr).not.toContain(applied);
  });

  test('a --previous-outbox-table that no longer exists is said (its events can not be seen); --allow-undrained goes with --from-fences only', async () => {
    const id = aggregate('gone');
    const replaced = await newOutbox();
    await deliver(await emit(await newOutbox(), id, 'authorised'));
    const carried = await heads(replaced, '--from-fences', '--previous-outbox-table', `gone-${id}`, '--yes');
    expect(carried.code).toBe(EXIT_CODE.OK);
    expect(carried.stderr).toContain(`note: --previous-outbox-table gone-${id} does not exist`);
    expect(await headOf(replaced, id)).toBe(1);
    expect((await heads(replaced, '--from-history', '--allow-undrained')).code).toBe(EXIT_CODE.USAGE);
  });

  test('review ro12b, RO12B-1: the other carry (a head set back) does not wait for the events of the generation it abandons; a dry run shows its plan when refused', async () => {
    const id = aggregate('back');
    const old = await newOutbox();
    const [a1, a2, a3] = [await emit(old, id, 'a1'), await emit(old, id, 'a2'), await emit(old, id, 'a3')];
    await deliver(a1, a2);
    const replaced = await newOutbox();
    // step 2 with a3 in flight, carried anyway: head 2, a new generation; the producers write n3, n4 in it
    expect((await heads(replaced, '--from-fences', '--previous-outbox-table', old.outboxTableName, '--allow-undrained', '--yes')).code).toBe(EXIT_CODE.OK);
    const n3 = await emit(replaced, id, 'n3');
    const n4 = await emit(replaced, id, 'n4');
    // a3 was next and applies (generation 0, past the new generation's base): n3 and n4 can never apply
    await deliver(a3);
    // the known limits' other carry: the dry run shows 'would set back' to the fence (#3), and is not refused for n4
    const dry = await heads(replaced, '--from-fences', '--previous-outbox-table', old.outboxTableName);
    expect(dry.stderr).not.toContain(REFUSED_UNDRAINED);
    expect(dry.stdout).toContain('would set back');
    expect(dry.code).toBe(EXIT_CODE.OK);
    const carried = await heads(replaced, '--from-fences', '--previous-outbox-table', old.outboxTableName, '--yes', '--json');
    expect(carried.code).toBe(EXIT_CODE.OK);
    expect(JSON.parse(carried.stdout).heads).toContainEqual(expect.objectContaining({ aggregateId: id, current: 4, target: 3, decision: 'back' }));
    expect(await headOf(replaced, id)).toBe(3);
    expect(Number(n3.sequence)).toBe(3);
    expect(Number(n4.sequence)).toBe(4);
  });

  test('review ro12b, RO12B-1: a refused dry run still prints its plan (text and --json), naming events of the new table as in this table', async () => {
    const id = aggregate('plan');
    const old = await newOutbox();
    await deliver(await emit(old, id, 'authorised'));
    const replaced = await newOutbox();
    const captured = await emit(old, id, 'captured');
    const dry = await heads(replaced, '--from-fences', '--previous-outbox-table', old.outboxTableName);
    expect(dry.code).toBe(EXIT_CODE.REFUSED);
    expect(dry.stdout).toMatch(new RegExp(`${id} +0 +1 +would set`));
    expect(dry.stdout).toContain(`${REFUSED_UNDRAINED}: nothing written in ${replaced.outboxTableName}`);
    const expected = [{ table: old.outboxTableName, aggregateId: id, sequence: 2, eventId: captured.id }];
    expect(dry.stderr).toContain(undrainedText(expected, false, replaced.outboxTableName));
    expect(dry.stderr).toContain(`in the old table ${old.outboxTableName}`);
    // --yes and --json: the refusal is a JSON document on stdout (nothing written), not an empty one
    const refused = await heads(replaced, '--from-fences', '--previous-outbox-table', old.outboxTableName, '--yes', '--json');
    expect(refused.code).toBe(EXIT_CODE.REFUSED);
    const document = JSON.parse(refused.stdout);
    expect(document).toMatchObject({ dryRun: true, refused: REFUSED_UNDRAINED, outboxTable: replaced.outboxTableName, undrained: expected });
    expect(document.heads).toContainEqual(expect.objectContaining({ aggregateId: id, current: 0, target: 1, decision: 'set' }));
    expect(refused.stderr).not.toContain('"audit":"outbox-heads"');
    expect(await headOf(replaced, id)).toBeUndefined();
    // an event the new table itself holds past its aggregate's head (an item copied in without its head) is named as
    // in this table, not the old one
    await deliver(captured);
    const second = aggregate('plan-this');
    const mine = await emit(replaced, second, 'copied in');
    const key = orderedHeadKey(second);
    await documents.send(new DeleteCommand({ TableName: replaced.outboxTableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: key, [TABLE_SCHEMA.SORT_KEY]: key } }));
    const again = await heads(replaced, '--from-fences', '--previous-outbox-table', old.outboxTableName);
    expect(again.code).toBe(EXIT_CODE.REFUSED);
    expect(again.stderr).toContain(`${second} #1 (${mine.id}) in this table ${replaced.outboxTableName}`);
    expect(again.stderr).not.toContain(`in the old table`);
  });

  test('review ro12b, RO12B-3: --from-fences needs the old table named, or said gone; gone, it says its events can not be seen', async () => {
    const id = aggregate('unnamed');
    const old = await newOutbox();
    await deliver(await emit(old, id, 'authorised'));
    await emit(old, id, 'captured');
    const replaced = await newOutbox();
    const unnamed = await heads(replaced, '--from-fences', '--yes');
    expect(unnamed.code).toBe(EXIT_CODE.USAGE);
    expect(unnamed.stderr).toContain(PREVIOUS_TABLE_NEEDED);
    expect(PREVIOUS_TABLE_NEEDED).toContain('--previous-outbox-table');
    expect(PREVIOUS_TABLE_NEEDED).toContain('--previous-outbox-gone');
    expect((await heads(replaced, '--from-fences', '--previous-outbox-table', old.outboxTableName, '--previous-outbox-gone')).code).toBe(EXIT_CODE.USAGE);
    expect((await heads(replaced, '--from-history', '--previous-outbox-gone')).code).toBe(EXIT_CODE.USAGE);
    expect(await headOf(replaced, id)).toBeUndefined();
    const gone = await heads(replaced, '--from-fences', '--previous-outbox-gone', '--yes');
    expect(gone.code).toBe(EXIT_CODE.OK);
    expect(gone.stderr).toContain("note: --previous-outbox-gone: the old table's events still in flight can not be seen");
    expect(await headOf(replaced, id)).toBe(1);
  });

  test('review ro12b, RO12B-7: the --allow-undrained warning says what the known limits say of two subscribers', () => {
    const warning = undrainedText([{ table: 'old', aggregateId: 'a', sequence: 2 }], true, 'new');
    expect(warning.toLowerCase()).toContain(UNDRAINED_RACE_TEXT.toLowerCase());
    expect(UNDRAINED_RACE_TEXT).toContain('each may apply a different one');
    expect(warning).not.toContain('wins');
  });
});
