/**
 * Issue 38: `outbox heads --from-fences` checks the drain. The fences know only what was applied, so an event the old
 * table committed that is still in flight (its stream, a queue, a dead-letter queue) would have its sequence handed out
 * again by a carry from the fences. The command sees such events in the outbox table and in the table restored from or
 * replaced (`--previous-outbox-table`), refuses while there are any (naming them and what it waits for), and carries
 * with `--allow-undrained` only with a warning naming them. Against DynamoDB Local, with the real consumer.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import type { SqsBatchHandler } from '../../../lambda/consumer/create-consumer';
import { orderedHeadKey, ORDERED_OUTBOX_ITEM } from '../../../lambda/contract/ordered-wire-format';
import { TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { undrainedText } from '../../../simulator/cli/undrained-events';
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
    expect(refused.stderr).toContain(undrainedText(expected, false));
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
    expect(carried.stderr).toContain(undrainedText(expected, true));
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
    expect(refused.stderr).toContain(undrainedText([{ table: old.outboxTableName, aggregateId: unknown, sequence: 1, eventId: placed.id }], false));
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
});
