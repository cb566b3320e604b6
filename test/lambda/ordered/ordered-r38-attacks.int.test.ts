/**
 * Reviewer r38's findings against issue 38 as built at 443a206 (the generation protocol of review F2's fix, `fence
 * skip` and its skip record, `inbox forget` on an ordered subscriber). Each test states what must hold and FAILS at
 * 443a206 (red on purpose: no library code is changed here). Against DynamoDB Local, with the real OrderedOutbox, the
 * ordered consumer, carryOrderedHeads, planOrderedRedrive and the CLI.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { carryOrderedHeads } from '../../../operator/ordered/outbox-heads';
import { planOrderedRedrive } from '../../../operator/ordered/redrive-plan';
import { OrderedEventRecords } from '../../../operator/ordered/ordered-event-records';
import { SequenceFences } from '../../../operator/ordered/sequence-fences';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { localClient } from '../../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../../support/proof/tables';
import { startEmptyDeadLetterQueue, type EmptyDeadLetterQueue } from '../../support/empty-dead-letter-queue';
import { outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../helpers';

const SUBSCRIBER = 'r38-ledger';
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
    createKeyedTable(client, 'r38-ledger'),
  ]);
});
// `fence skip` reads the subscriber's dead-letter queue first: an empty one here
let deadLetterQueue: EmptyDeadLetterQueue;
beforeAll(async () => {
  deadLetterQueue = await startEmptyDeadLetterQueue('R38Dlq.fifo');
});
afterAll(async () => {
  client.destroy();
  await deadLetterQueue.stop();
});

const newOutbox = (): Promise<ProducerConfig> => createOutbox(client, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });

function consumer() {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = createOrderedConsumer<{ step: string }>({
    client,
    config: inboxConfig,
    deadLetter,
    logger,
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

async function emit(config: ProducerConfig, aggregateId: string, step: string, extra: { time?: Date; id?: string } = {}): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config }).transactWrite({ events: [{ type: 'PaymentStep', aggregateId, subject: aggregateId, data: { step }, ...extra }] });
  return envelope!;
}

/** Delivers each envelope in turn (one receive each); the handler must not fail the batch (a gap would). */
async function deliver(handler: ReturnType<typeof consumer>['handler'], ...envelopes: OrderedEnvelope[]): Promise<void> {
  for (const envelope of envelopes) {
    const response = await handler({ Records: [sqsRecord(JSON.stringify(envelope))] });
    expect(response.batchItemFailures).toEqual([]);
  }
}

/** Runs the CLI; returns its exit code and output. */
async function cli(args: string[], now?: () => Date): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    user: 'on-call',
    createClient: () => localClient(),
    createSqsClient: () => deadLetterQueue.createSqsClient(),
    ...(now === undefined ? {} : { now }),
  });
  return { code, stdout, stderr };
}

/**
 * The subscriber's Operator output naming `outbox` as its outbox table: what proves a table the subscriber's outbox to
 * `fence skip` when its history holds nothing the subscriber applied (a replaced table; review ro12, RO12-2).
 */
function subscriberOutput(outbox: ProducerConfig): string {
  return JSON.stringify({
    format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: WINDOW_SECONDS,
    outboxTable: outbox.outboxTableName, inboxTable: inboxConfig.inboxTableName, queueUrl: 'https://sqs.invalid/000000000000/r38.fifo', deadLetterQueueUrl: deadLetterQueue.url,
  });
}

/** The operator's `fence skip --yes` through the real CLI, with the subscriber's Operator output; it must be accepted. */
async function fenceSkip(outbox: ProducerConfig, aggregateId: string, from: number, to: number): Promise<void> {
  const result = await cli(['fence', 'skip', SUBSCRIBER, aggregateId, '--subscriber-output', subscriberOutput(outbox), '--from', String(from), '--to', String(to), '--reason', 'lost past every retention', '--yes']);
  expect({ code: result.code, stderr: result.code === 0 ? '' : result.stderr }).toEqual({ code: 0, stderr: '' });
}

/** Deletes an event's history item, as the outbox's TTL does when its retention passes. */
async function expireHistory(config: ProducerConfig, eventId: string): Promise<void> {
  const key = `${OUTBOX_ITEM.KEY_PREFIX}${eventId}`;
  await documents.send(new DeleteCommand({ TableName: config.outboxTableName, Key: { [config.partitionKeyName]: key, ...(config.sortKeyName === undefined ? {} : { [config.sortKeyName]: key }) } }));
}

/** A point-in-time copy of `from`'s items into a new table (what a restore into a new table holds). */
async function restoredCopy(items: ReadonlyArray<Record<string, unknown>>): Promise<ProducerConfig> {
  const restored = await newOutbox();
  for (const item of items) await documents.send(new PutCommand({ TableName: restored.outboxTableName, Item: item }));
  return restored;
}

async function snapshot(config: ProducerConfig): Promise<Array<Record<string, unknown>>> {
  return (await documents.send(new ScanCommand({ TableName: config.outboxTableName, ConsistentRead: true }))).Items ?? [];
}

/** `outbox heads --from-fences` of the one ordered subscriber. */
const fencesSource = () => ({ kind: 'fences' as const, subscribers: [{ subscriberName: SUBSCRIBER, inboxTable: inboxConfig.inboxTableName }] });

const aggregate = (name: string): string => `r38-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

describe('r38: the generation protocol (review F2\'s fix)', () => {
  test('R38-1: `fence skip` past a carried generation\'s base leaves the fence in the old generation: every later event of the new generation is dead-lettered, forever', async () => {
    const id = aggregate('skip-across');
    const original = await newOutbox();
    const { handler, deadLetter } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'));
    await emit(original, id, 'captured'); // 2 and 3: lost with the old table (never delivered)
    await emit(original, id, 'settled');

    // the runbook: a new table, heads carried from the old table's history (the safest source): generation G, base 3
    const replaced = await newOutbox();
    await carryOrderedHeads({ client, outbox: replaced, source: { kind: 'history', table: original.outboxTableName }, apply: true });
    await emit(replaced, id, 'chargeback'); // 4 (G): lost too (its dead letter expired, say)
    const refunded = await emit(replaced, id, 'refunded'); // 5 (G)
    const closed = await emit(replaced, id, 'closed'); // 6 (G)
    expect([refunded.sequence, closed.sequence]).toEqual(['0000000000000005', '0000000000000006']);

    // 2..4 are lost for good: the operator passes them in one skip, accepted (the new table's head is 6)
    await fenceSkip(replaced, id, 1, 4);
    await deliver(handler, refunded, closed);
    // the fence now admits 5: it must apply, and 6 after it
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual([]);
    expect(await ledger(id)).toEqual(['authorised', 'refunded', 'closed']);
  });

  test('R38-2: a carry whose source equals the restored head (`unchanged`) starts no generation: a new event then applies on top of the old table\'s in-flight one (two histories)', async () => {
    const id = aggregate('unchanged');
    const original = await newOutbox();
    const { handler } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'), await emit(original, id, 'captured'));
    const atRestorePoint = await snapshot(original); // the restore point: head at 2, what the fences applied
    const refunded = await emit(original, id, 'refunded'); // 3 of the old table: committed after it, still in flight (stream, relay queue)

    // the runbook on the restored table, from the fences: head 2 = fence 2 -> 'unchanged', nothing written
    const restored = await restoredCopy(atRestorePoint);
    const { heads } = await carryOrderedHeads({ client, outbox: restored, source: fencesSource(), apply: true });
    expect(heads.filter((head) => head.aggregateId === id).map((head) => head.decision)).toEqual(['unchanged']);
    const chargeback = await emit(restored, id, 'chargeback'); // 3 of the new history
    const closed = await emit(restored, id, 'closed'); // 4 of the new history

    // the old table's in-flight event arrives first (it is next), then the new table's two
    await deliver(handler, refunded, chargeback, closed);
    // 'closed' follows 'chargeback' in its history, not 'refunded': it must not be applied after 'refunded'
    // (with a generation, as a 'set' carry starts, it is dead-lettered: SequenceReusedError, base passed)
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'refunded']);
  });

  test('R38-2b: an aggregate the source does not know (no fence yet: all its events in flight) gets no carried head: the new table\'s events start at 1 in generation 0 and mix with the old table\'s', async () => {
    const id = aggregate('unknown');
    const known = aggregate('known');
    const original = await newOutbox();
    const { handler } = consumer();
    await deliver(handler, await emit(original, known, 'authorised')); // another aggregate: the fences are not empty
    const authorised = await emit(original, id, 'authorised'); // 1 and 2 of the old table: in flight, no subscriber applied any
    const captured = await emit(original, id, 'captured');

    const replaced = await newOutbox();
    await carryOrderedHeads({ client, outbox: replaced, source: fencesSource(), apply: true });
    const otherAuthorised = await emit(replaced, id, 'authorised again'); // 1 of the new history
    const otherCaptured = await emit(replaced, id, 'captured again'); // 2 of the new history
    const otherRefunded = await emit(replaced, id, 'refunded'); // 3 of the new history

    await deliver(handler, authorised, otherAuthorised, captured, otherCaptured, otherRefunded);
    // 'refunded' (new history, after 'captured again') must not apply after the old history's 'captured'
    expect(await ledger(id)).toEqual(['authorised', 'captured']);
  });

  test('R38-3: a second carry by an operator whose clock is behind the first\'s starts a LOWER generation: every new event is refused forever', async () => {
    const id = aggregate('second-carry');
    const original = await newOutbox();
    const { handler, deadLetter } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'), await emit(original, id, 'captured'));
    const firstCarry = new Date();
    const second = await newOutbox();
    await carryOrderedHeads({ client, outbox: second, source: fencesSource(), apply: true, now: () => firstCarry });
    await deliver(handler, await emit(second, id, 'refunded')); // applied in the first carry's generation

    // the second table is lost too and replaced; another operator's machine runs a minute behind
    const third = await newOutbox();
    const { heads } = await carryOrderedHeads({ client, outbox: third, source: fencesSource(), apply: true, now: () => new Date(firstCarry.getTime() - 60_000) });
    expect(heads.filter((head) => head.aggregateId === id).map((head) => [head.target, head.decision])).toEqual([[3, 'set']]);
    await deliver(handler, await emit(third, id, 'closed'));
    // 'closed' is the next event of the newest history: it must apply
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual([]);
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'refunded', 'closed']);
  });
});

describe('r38: the runbook\'s step 1, "or keep them on the old table"', () => {
  // rewritten by f38 to the corrected runbook: step 1 now stops the producers on the old table before the carry reads
  // (the finding's scenario, a carry racing producers kept on the old table, is what the runbook now forbids); the old
  // table's last event is committed before the carry, which then starts the new generation past it
  test('R38-11: producers stopped on the old table before the carry reads its history (the corrected step 1): the old table\'s last event and the new generation\'s all apply, in order', async () => {
    const id = aggregate('kept-on-old');
    const original = await newOutbox();
    const { handler, deadLetter } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'), await emit(original, id, 'captured'));
    const late = await emit(original, id, 'refunded'); // 3 of the old table: committed before the producers stopped, in flight
    // step 1: the producers stop (on the old table too); step 2/3: the heads carried from the old table's history
    const restored = await newOutbox();
    await carryOrderedHeads({ client, outbox: restored, source: { kind: 'history', table: original.outboxTableName }, apply: true });
    // step 4: the producers move to the new table
    const chargeback = await emit(restored, id, 'chargeback'); // 4 of the new generation (base 3)
    const closed = await emit(restored, id, 'closed');
    await deliver(handler, late, chargeback, closed);
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'refunded', 'chargeback', 'closed']);
    expect(deadLetter.published).toEqual([]);
  });
});

describe('r38: a command retried after a restore', () => {
  test('R38-9: an applied event the restore lost, written again by its retried command (same id) at a new sequence, is a duplicate by its inbox record and never moves the fence: the aggregate is held forever', async () => {
    const id = aggregate('retried');
    const original = await newOutbox();
    const { handler } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'));
    const atRestorePoint = await snapshot(original);
    // the capture command commits (its event id chosen from the command, as the docs advise) and is applied ...
    await deliver(handler, await emit(original, id, 'captured', { id: `capture-${id}` }));
    // ... but the table is restored to a point before it, and the heads carried from the old table's history (base 2)
    const restored = await restoredCopy(atRestorePoint);
    await carryOrderedHeads({ client, outbox: restored, source: { kind: 'history', table: original.outboxTableName }, apply: true });
    // the client, which never saw the answer, retries the command: the same event id, now sequence 3 of the new generation
    const again = await emit(restored, id, 'captured', { id: `capture-${id}` });
    expect(again.sequence).toBe('0000000000000003');
    await deliver(handler, again); // a duplicate by its inbox record: right, it was applied
    // the next fact of the aggregate must apply: nothing is missing from its history
    const refunded = await emit(restored, id, 'refunded');
    const response = await handler({ Records: [sqsRecord(JSON.stringify(refunded))] });
    expect(response.batchItemFailures).toEqual([]);
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'refunded']);
  });

  test('R38-9, in one batch: the batch read (a batch of two reads its inbox records first) knows the event applied at #2, but leaves it at #3 to the fence, which passes it; the next fact in the batch applies', async () => {
    const id = aggregate('retried-batch');
    const original = await newOutbox();
    const { handler } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'));
    const atRestorePoint = await snapshot(original);
    await deliver(handler, await emit(original, id, 'captured', { id: `capture-${id}` }));
    const restored = await restoredCopy(atRestorePoint);
    await carryOrderedHeads({ client, outbox: restored, source: { kind: 'history', table: original.outboxTableName }, apply: true });
    const again = await emit(restored, id, 'captured', { id: `capture-${id}` });
    const refunded = await emit(restored, id, 'refunded');
    // one FIFO group: the batch's two records run one after the other, in its lane
    const grouped = (body: string) => ({ ...sqsRecord(body), attributes: { ApproximateReceiveCount: '1', MessageGroupId: id } });
    const response = await handler({ Records: [grouped(JSON.stringify(again)), grouped(JSON.stringify(refunded))] });
    expect(response.batchItemFailures).toEqual([]);
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'refunded']);
  });
});

describe('review r8b: R38-9 within one batch', () => {
  test('R8b-2: the old table\'s event and its rewrite at a later sequence in one batch: the batch remembers the first at its sequence, so the fence passes the rewrite and the next fact applies', async () => {
    const id = aggregate('retried-one-batch');
    const original = await newOutbox();
    const { handler } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'));
    const atRestorePoint = await snapshot(original);
    // committed on the old table, not delivered yet
    const first = await emit(original, id, 'captured', { id: `capture-${id}` });
    const restored = await restoredCopy(atRestorePoint);
    await carryOrderedHeads({ client, outbox: restored, source: { kind: 'history', table: original.outboxTableName }, apply: true });
    // the retried command writes the same event again, further on, and the aggregate goes on
    const again = await emit(restored, id, 'captured', { id: `capture-${id}` });
    const refunded = await emit(restored, id, 'refunded');
    const grouped = (envelope: unknown) => ({ ...sqsRecord(JSON.stringify(envelope)), attributes: { ApproximateReceiveCount: '1', MessageGroupId: id } });
    const response = await handler({ Records: [grouped(first), grouped(again), grouped(refunded)] });
    expect(response.batchItemFailures).toEqual([]);
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'refunded']);
  });
});

describe('review r8b: an applied event written again ahead of a gap', () => {
  test('R8b-1: the rewrite waits (SequenceGapError, retried) while the fence stands before the gap, and is passed once the old table\'s in-flight event fills it; nothing is acknowledged above the fence', async () => {
    const id = aggregate('rewrite-ahead-of-gap');
    const original = await newOutbox();
    const { handler } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'));
    const atRestorePoint = await snapshot(original);
    await deliver(handler, await emit(original, id, 'captured', { id: `capture-${id}` }));
    // committed on the old table after the restore point, still in flight
    const shipped = await emit(original, id, 'shipped');
    const restored = await restoredCopy(atRestorePoint);
    await carryOrderedHeads({ client, outbox: restored, source: { kind: 'history', table: original.outboxTableName }, apply: true });
    // the retried command writes the applied event again, past the old table's in-flight #3
    const again = await emit(restored, id, 'captured', { id: `capture-${id}` });
    const refunded = await emit(restored, id, 'refunded');
    const first = await handler({ Records: [sqsRecord(JSON.stringify(again))] });
    expect(first.batchItemFailures).toHaveLength(1);
    await deliver(handler, shipped, again, refunded);
    expect(await ledger(id)).toEqual(['authorised', 'captured', 'shipped', 'refunded']);
  });
});

describe('r38: the skip record', () => {
  test('R38-4: a new event under a sequence a skip named only by sequence is matched by its producer-given `time`: a backdated one is acknowledged as skipped (lost)', async () => {
    const id = aggregate('skip-time');
    const original = await newOutbox();
    const { handler, lines, deadLetter } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'));
    const captured = await emit(original, id, 'captured');
    await expireHistory(original, captured.id); // past the outbox's retention: the skip can name it by sequence only
    await fenceSkip(original, id, 1, 2);

    // the heads went back after the skip (a replaced table, not carried): a producer imports a refund that happened an hour ago
    const replaced = await newOutbox();
    await emit(replaced, id, 'placed again');
    const refund = await emit(replaced, id, 'refunded', { time: new Date(Date.now() - 3_600_000) });
    expect(refund.sequence).toBe('0000000000000002');
    await deliver(handler, refund);
    // written after the skip (its iefwrittenat says so): not what the operator dropped, so a SequenceReusedError dead letter
    expect(lines.some((line) => line.level === 'WARN' && line.eventId === refund.id)).toBe(false);
    expect(outcomesOf(lines).slice(-1)).toEqual(['dead-lettered']);
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['SequenceReusedError']);
  });
});

describe('r38: a long skip', () => {
  test('R38-10: `fence skip` of a long range (a subscriber added later, docs: "move its fence with skipGap") names every dropped sequence in ONE skip-record item: past DynamoDB\'s 400 KB item limit the skip can not be made', async () => {
    const id = aggregate('long');
    const outbox = await newOutbox();
    // an aggregate 30,000 events long whose history has expired: its head says 30000 (carried from a subscriber that
    // applied it all; the library's skipGap with no names is how that fence is made quickly here)
    const veteran = 'r38-veteran';
    await new SequenceFences({ client, tableName: inboxConfig.inboxTableName, subscriberName: veteran }).skipGap(id, 0, 30_000, 'applied long ago');
    await carryOrderedHeads({ client, outbox, source: { kind: 'fences', subscribers: [{ subscriberName: veteran, inboxTable: inboxConfig.inboxTableName }] }, apply: true });

    // a subscriber added later starts at 0: the operator passes the history it will never get, up to the head
    const result = await cli(['fence', 'skip', SUBSCRIBER, id, '--subscriber-output', subscriberOutput(outbox), '--from', '0', '--to', '30000', '--reason', 'subscriber added later', '--yes']).catch((error: Error) => ({ code: -1, stdout: '', stderr: `${error.name}: ${error.message}` }));
    expect({ code: result.code, stderr: result.stderr.replace(/\{"audit".*\n/, '') }).toEqual({ code: EXIT_CODE.OK, stderr: '' });
    expect((await new SequenceFences({ client, tableName: inboxConfig.inboxTableName, subscriberName: SUBSCRIBER }).get(id)).appliedSequence).toBe(30_000);
  });
});

describe('r38: `inbox forget` on an ordered subscriber', () => {
  test('R38-5: forgetting the inbox record of an applied event below the fence: its next delivery is NOT the duplicate the CLI promises, but a SequenceReusedError letter the redrive plan calls never applied ("write it again": a double apply)', async () => {
    const id = aggregate('forget');
    const outbox = await newOutbox();
    const { handler, lines, deadLetter } = consumer();
    const authorised = await emit(outbox, id, 'authorised');
    await deliver(handler, authorised, await emit(outbox, id, 'captured'));

    // fixed (f38): the ordered consumer's inbox record names its aggregate and sequence, and 'inbox forget' refuses it
    // without --subscriber-output (the test used to expect OK and the old promise of a duplicate; rewritten)
    const forget = await cli(['inbox', 'forget', SUBSCRIBER, authorised.id, '--table', inboxConfig.inboxTableName, '--reason', 'audit asked', '--yes']);
    expect(forget.code).toBe(EXIT_CODE.REFUSED);
    expect(forget.stderr).toContain('is an ordered subscriber (its inbox record names aggregate');

    await deliver(handler, authorised); // a copy still in the queue, or a redrive
    // what the CLI (and docs/ORDERED-DELIVERY.md) promise: a duplicate, nothing dead-lettered
    expect(outcomesOf(lines).slice(-1)).toEqual(['duplicate']);
    expect(deadLetter.published).toEqual([]);
    // and were it dead-lettered, the plan must not tell the operator it was never applied (step 5: write it again)
    if (deadLetter.published.length > 0) {
      const letter = deadLetter.published[0]!;
      const plan = await planOrderedRedrive([{ id: 'dl-1', body: letter.body, errorName: letter.errorName }], new SequenceFences({ client, tableName: inboxConfig.inboxTableName, subscriberName: SUBSCRIBER }), new OrderedEventRecords({ client, tableName: inboxConfig.inboxTableName, subscriberName: SUBSCRIBER }));
      expect(plan.reused.map((each) => each.id)).toEqual([]);
    }
  });
});

describe('r38: `fence skip` on the wrong outbox table', () => {
  test("R38-6: --outbox-table of another flow (its aggregate of the same id committed further) is accepted, and the skip passes events this aggregate's outbox had not written yet", async () => {
    const id = aggregate('wrong-table');
    const payments = await newOutbox();
    const shipping = await newOutbox(); // another flow's outbox, whose aggregates are the same order ids
    const { handler } = consumer();
    await deliver(handler, await emit(payments, id, 'authorised'));
    await emit(payments, id, 'captured'); // 2: lost for good
    for (const step of ['packed', 'labelled', 'shipped', 'delivered', 'returned']) await emit(shipping, id, step); // shipping's head: 5

    // the operator picks the wrong table: payments' head is 2, so --to 5 must be refused
    const result = await cli(['fence', 'skip', SUBSCRIBER, id, '--table', inboxConfig.inboxTableName, '--outbox-table', shipping.outboxTableName, '--dead-letter-queue', deadLetterQueue.url, '--queue', deadLetterQueue.queueUrl, '--from', '1', '--to', '5', '--reason', 'lost', '--yes']);
    expect(result.code).toBe(EXIT_CODE.REFUSED);
  });
});
