/**
 * Issue 41 (found by nu7, finding 7): `replay` to a subscriber in aggregate mode refused every event, so the role the
 * flow's account grants another account's aggregate subscriber bought a dry run that refuses everything. An aggregate
 * subscriber keeps no inbox, only the ids of the last events applied to each aggregate (`processedMessages`, with
 * `aggregateVersion` counting every application). Given its aggregate tables (`--aggregate-table`, read with the
 * operator's own credentials: they are the subscriber's), `replay` decides each event from them: found in an
 * aggregate's list, it was applied and is not sent; found nowhere while no aggregate of those tables ever forgot an id
 * (every version equals its list's length), it was never applied and is sent; found nowhere while some aggregate
 * forgot ids, it may have been applied, and is refused as before (`--allow-reapply` sends it). Against DynamoDB Local
 * and the simulator's SQS endpoint, with the real CLI in-process.
 */
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, test } from 'vitest';
import { AGGREGATE_ITEM } from '../../lambda/contract/wire-format';
import { localClient } from '../support/dynamodb-client';
import { putOutboxItem } from '../support/outbox-items';
import { createKeyedTable } from '../support/proof/tables';
import { createAggregateConsumer } from '../../lambda/aggregate/aggregate-consumer';
import { outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../lambda/helpers';
import { cli, type OperatorServices } from './operator-services';
import { DAY_MS, outbox, startServices, useReplayOutbox } from './replay-outbox-kit';
import { notAggregateTable } from '../../operator/cli/aggregate-applications';
import { MAY_BE_QUEUED_TEXT } from '../../operator/cli/queued-copy';
import { REPLAY_AUDIT } from '../../operator/cli/replay-command';

let aggregates: string;

useReplayOutbox();
beforeEach(async () => {
  aggregates = await createKeyedTable(localClient(), 'cli-aggregates');
});

const documents = () => DynamoDBDocumentClient.from(localClient());

/** An outbox item of the runtime, written and dated `atMs` (an `OrderBilled` without data unless told); returns its body. */
const outboxEvent = (id: string, atMs: number, event: { type: string; data: unknown } = { type: 'OrderBilled', data: undefined }): Promise<string> =>
  putOutboxItem(outbox, { id, timeMs: atMs, writtenAtMs: atMs, type: event.type, data: event.data });

/** An aggregate of `subscriber` (the runtime's mark; none: an item written before the runtime marked items) that applied `applied` (newest last) out of `version` applications. */
async function aggregate(pk: string, version: number, applied: readonly string[], subscriber: string | null = 'Invoicing'): Promise<void> {
  const mark = subscriber === null ? {} : { [AGGREGATE_ITEM.SUBSCRIBER_ATTRIBUTE]: subscriber };
  await documents().send(
    new PutCommand({ TableName: aggregates, Item: { pk, points: version, ...mark, [AGGREGATE_ITEM.VERSION_ATTRIBUTE]: version, [AGGREGATE_ITEM.PROCESSED_MESSAGES_ATTRIBUTE]: applied.map((id) => `${id} 0123456789abcdef`) } }),
  );
}

/**
 * How old an event is that these tests send: older than the relay's copy can still be on the queue (the relay's 24
 * hours, the queue's 4 days of retention, an hour to spare), so the replayed copy is the only one.
 */
const PAST_QUEUE_MS = 6 * DAY_MS;

const replayArgs = (s: OperatorServices, ...ids: string[]) => [
  'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', 'Invoicing', '--processing-mode', 'aggregate',
  '--filter-policy', 'none', ...ids.flatMap((id) => ['--event-id', id]), '--yes', '--json',
];

interface Decision {
  eventId: string;
  send: boolean;
  applied?: boolean;
  why?: string;
}

describe('replay to a subscriber in aggregate mode, given its aggregate tables', () => {
  test('sends an event no aggregate applied while none forgot an id, and not one an aggregate applied', async () => {
    const s = await startServices('AggregateReplay');
    await outboxEvent('evt-applied', s.clock.now() - PAST_QUEUE_MS);
    await outboxEvent('evt-missed', s.clock.now() - PAST_QUEUE_MS);
    await aggregate('order-1', 2, ['evt-earlier', 'evt-applied']);

    const replay = await cli(s, ...replayArgs(s, 'evt-applied', 'evt-missed'), '--aggregate-table', aggregates);

    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    const output = JSON.parse(replay.stdout) as { events: Decision[] };
    expect(output.events).toEqual([
      expect.objectContaining({ eventId: 'evt-applied', send: false, applied: true, why: expect.stringContaining(`order-1`) }),
      expect.objectContaining({ eventId: 'evt-missed', send: true }),
    ]);
    expect(output.events[1]!.why).toBeUndefined();
    expect(s.queue.messages().map((message) => (JSON.parse(message.body) as { id: string }).id)).toEqual(['evt-missed']);
  });

  test('refuses an event found nowhere when an aggregate forgot ids, naming it; --allow-reapply still sends it', async () => {
    const s = await startServices('AggregateReplayEvicted');
    await outboxEvent('evt-missed', s.clock.now() - DAY_MS);
    await aggregate('order-1', 1, ['evt-other']);
    await aggregate('order-2', 7, ['evt-x', 'evt-y']);

    const replay = await cli(s, ...replayArgs(s, 'evt-missed'), '--aggregate-table', aggregates);

    expect(replay.code).toBe(3);
    const [decision] = (JSON.parse(replay.stdout) as { events: Decision[] }).events;
    expect(decision).toEqual(expect.objectContaining({ eventId: 'evt-missed', send: false, why: expect.stringMatching(/order-2.*forgot 5/) }));
    expect(s.queue.messages()).toEqual([]);

    const forced = await cli(s, ...replayArgs(s, 'evt-missed'), '--aggregate-table', aggregates, '--allow-reapply');
    expect(forced.code).toBe(0);
    expect(s.queue.messages()).toHaveLength(1);
  });

  test('A-1: an id only an item naming no subscriber remembers is refused (not applied); another subscriber\'s items are left out, forgetful or not', async () => {
    const s = await startServices('AggregateReplayUnmarked');
    await outboxEvent('evt-old', s.clock.now() - PAST_QUEUE_MS);
    await outboxEvent('evt-theirs', s.clock.now() - PAST_QUEUE_MS);
    await aggregate('order-unmarked', 1, ['evt-old'], null); // written before the runtime marked items
    await aggregate('customer#c-1', 9, ['evt-theirs'], 'Loyalty'); // Loyalty's, and it forgot 8 ids

    const replay = await cli(s, ...replayArgs(s, 'evt-old', 'evt-theirs'), '--aggregate-table', aggregates);

    expect(replay.code, replay.stdout + replay.stderr).toBe(3);
    const decisions = (JSON.parse(replay.stdout) as { events: Decision[] }).events;
    expect(decisions).toEqual([
      expect.objectContaining({ eventId: 'evt-old', send: false, why: expect.stringMatching(/order-unmarked.*names no subscriber.*--allow-reapply/) }),
      // Loyalty's aggregate neither proves Invoicing applied it nor (forgetting ids) that Invoicing may have
      expect.objectContaining({ eventId: 'evt-theirs', send: true }),
    ]);
    expect(decisions[0]).not.toHaveProperty('applied');
    expect(s.queue.messages()).toHaveLength(1);

    const forced = await cli(s, ...replayArgs(s, 'evt-old'), '--aggregate-table', aggregates, '--allow-reapply');
    expect(forced.code).toBe(0);
    expect(s.queue.messages()).toHaveLength(2);
  });

  /**
   * Review rv9, A-1, with the real runtime: two aggregate subscribers keep their aggregates in one single table. Loyalty
   * applied OrderPlaced (the aggregate consumer wrote `customer#c-1`); Invoicing's copy dead-lettered. The replay to
   * Invoicing given that table once said "applied" on the word of Loyalty's item, sent nothing and exited 0: a lost event.
   */
  test("A-1: an event another aggregate subscriber applied in a shared table is not taken as applied by the subscriber replayed to", async () => {
    const s = await startServices('AggregateShared');
    const body = await outboxEvent('evt-order-1', s.clock.now() - DAY_MS, { type: 'OrderPlaced', data: { orderId: 'order-1', customer: 'c-1' } });
    // GIVEN Loyalty (aggregate mode, the same table) applied it with the real runtime
    const logged = recordingLogger();
    const loyalty = createAggregateConsumer<{ customer: string }, { points: number }>({
      locate: (event) => ({ tableName: aggregates, key: { pk: `customer#${event.data.customer}` } }),
      apply: (current) => ({ state: { points: (current?.points ?? 0) + 10 } }),
      client: localClient(),
      config: { subscriberName: 'Loyalty' },
      deadLetter: new RecordingDeadLetterPublisher(),
      logger: logged.logger,
      metricsSink: () => undefined,
    });
    const answered = (await loyalty({ Records: [sqsRecord(body, { messageId: 'm-1' })] } as never, {} as never)) as { batchItemFailures: unknown[] };
    expect(answered.batchItemFailures).toEqual([]);
    expect(outcomesOf(logged.lines)).toEqual(['processed']);

    // WHEN the operator replays it to Invoicing, giving the shared table
    const replay = await cli(s, ...replayArgs(s, 'evt-order-1'), '--aggregate-table', aggregates);

    // THEN Invoicing's event is not declared applied on the word of Loyalty's aggregate: the table, holding Loyalty's
    // aggregate only, is refused as not Invoicing's, and nothing is sent
    expect(replay.code, replay.stdout + replay.stderr).toBe(1);
    expect(replay.stdout).not.toContain('"applied": true');
    expect(replay.stderr).toContain(notAggregateTable(aggregates, 'Invoicing', 1, ['Loyalty']));
    expect(s.queue.messages()).toEqual([]);
  });

  /**
   * An existing table that is not the subscriber's aggregate table (the outbox, a table of other subscribers' aggregates
   * only, an empty one) once passed: every event found in no aggregate of it was "never applied" and sent, though the
   * subscriber may have applied it. The items are what can prove a table is the subscriber's: a table none of whose
   * items is an aggregate the runtime wrote for it is refused, naming the table and why, and nothing is sent.
   */
  test("an existing table holding no aggregate of the subscriber is refused, naming it and why; nothing is sent", async () => {
    const s = await startServices('AggregateWrongTable');
    await outboxEvent('evt-applied', s.clock.now() - DAY_MS);
    await aggregate('customer#c-1', 1, ['evt-applied'], 'Loyalty');
    const empty = await createKeyedTable(localClient(), 'cli-aggregates-empty');

    const outboxGiven = await cli(s, ...replayArgs(s, 'evt-applied'), '--aggregate-table', outbox.outboxTableName);
    expect(outboxGiven.code, outboxGiven.stdout + outboxGiven.stderr).toBe(1);
    expect(outboxGiven.stderr).toContain(`--aggregate-table ${outbox.outboxTableName}: not an aggregate table of subscriber 'Invoicing'`);
    expect(outboxGiven.stderr).toMatch(/none of its \d+ item\(s\) is an aggregate/);

    const othersOnly = await cli(s, ...replayArgs(s, 'evt-applied'), '--aggregate-table', aggregates);
    expect(othersOnly.code, othersOnly.stdout + othersOnly.stderr).toBe(1);
    expect(othersOnly.stderr).toContain(`--aggregate-table ${aggregates}: not an aggregate table of subscriber 'Invoicing'`);
    expect(othersOnly.stderr).toContain("its aggregates name other subscribers only ('Loyalty'");

    const emptyGiven = await cli(s, ...replayArgs(s, 'evt-applied'), '--aggregate-table', empty);
    expect(emptyGiven.code).toBe(1);
    expect(emptyGiven.stderr).toContain(`--aggregate-table ${empty}: not an aggregate table of subscriber 'Invoicing': it is empty`);

    // a table also holding one of the subscriber's aggregates is its (shared with Loyalty): decided from it
    await aggregate('order-1', 1, ['evt-applied']);
    const shared = await cli(s, ...replayArgs(s, 'evt-applied'), '--aggregate-table', aggregates);
    expect(shared.code, shared.stdout + shared.stderr).toBe(0);
    expect(s.queue.messages()).toEqual([]);
  });

  /**
   * The model of an event's whole life (seed -996432299, maxProcessedMessages 1): two events the relay had just put on
   * the queue, which no aggregate had applied yet, were replayed over a range; both copies of each arrived, and with one
   * id remembered the second copy of each was applied again. A copy the relay published is on the queue until the
   * relay's 24 hours plus the queue's retention have passed since the item's write: until then the event is refused,
   * saying until when (--allow-reapply sends it, with a warning and an audit line); after, it is the only copy and sent.
   */
  test("refuses an event no aggregate applied while the relay's copy may still be on the queue; with the real consumer that copy and the replayed one both apply", async () => {
    const s = await startServices('AggregateReplayQueued');
    const writtenAt = s.clock.now() - 3_600_000;
    const body = await outboxEvent('evt-queued', writtenAt, { type: 'OrderPlaced', data: { orderId: 'order-1', customer: 'c-1' } });
    const later = await outboxEvent('evt-later', writtenAt, { type: 'OrderPlaced', data: { orderId: 'order-2', customer: 'c-1' } });
    s.queue.send({ body, origin: { via: 'sns' } }); // the relay's copy, not yet received
    await aggregate('customer#c-1', 1, ['evt-earlier']); // applied one event, forgot none

    const replay = await cli(s, ...replayArgs(s, 'evt-queued'), '--aggregate-table', aggregates);

    expect(replay.code, replay.stdout + replay.stderr).toBe(3);
    const [decision] = (JSON.parse(replay.stdout) as { events: Decision[] }).events;
    const goneAt = new Date(writtenAt + (86_400 + 4 * 86_400 + 3600) * 1000).toISOString();
    expect(decision).toEqual(expect.objectContaining({ eventId: 'evt-queued', send: false }));
    expect(decision!.why!.startsWith(`${MAY_BE_QUEUED_TEXT} ${s.queue.address.url} `), decision!.why).toBe(true);
    expect(decision!.why).toContain(`may be delivered until ${goneAt}`);
    // review r19b (R19B-7): --json says when as a field, not only inside the text
    expect((decision as Decision & { replayableAfter?: string }).replayableAfter).toBe(goneAt);
    expect(decision!.why).toContain('--allow-reapply');
    expect(decision).not.toHaveProperty('applied');
    expect(s.queue.messages()).toHaveLength(1);

    // the risk the refusal names, with the real runtime (maxProcessedMessages 1): the override sends a second copy,
    // a newer event of the same customer is applied between the two, and the second copy is applied again
    const forced = await cli(s, ...replayArgs(s, 'evt-queued'), '--aggregate-table', aggregates, '--allow-reapply');
    expect(forced.code, forced.stdout + forced.stderr).toBe(0);
    expect(forced.stderr).toContain(`warning: event 'evt-queued': ${MAY_BE_QUEUED_TEXT}`);
    expect(forced.stderr).toContain('"audit":"replay-override"');
    const copies = s.queue.messages().map((message) => message.body);
    expect(copies).toEqual([body, body]);
    const consumer = createAggregateConsumer<{ customer: string }, { points: number }>({
      locate: (event) => ({ tableName: aggregates, key: { pk: `customer#${event.data.customer}` } }),
      apply: (current) => ({ state: { points: (current?.points ?? 0) + 10 } }),
      client: localClient(),
      config: { subscriberName: 'Invoicing' },
      maxProcessedMessages: 1,
      deadLetter: new RecordingDeadLetterPublisher(),
      logger: recordingLogger().logger,
      metricsSink: () => undefined,
    });
    for (const each of [copies[0]!, later, copies[1]!]) await consumer({ Records: [sqsRecord(each)] } as never, {} as never);
    const item = (await documents().send(new GetCommand({ TableName: aggregates, Key: { pk: 'customer#c-1' }, ConsistentRead: true }))).Item;
    expect(item?.points).toBe(1 + 3 * 10); // evt-queued twice and evt-later once (the fixture's 1 before): what the refusal prevents

    // once the relay's copy can no longer be on the queue (SQS deleted it at its retention), the event is sent
    s.clock.advanceBy(Date.parse(goneAt) - s.clock.now());
    await aggregate('customer#c-1', 1, ['evt-earlier']);
    const afterwards = await cli(s, ...replayArgs(s, 'evt-queued'), '--aggregate-table', aggregates);
    expect(afterwards.code, afterwards.stdout + afterwards.stderr).toBe(0);
    expect((JSON.parse(afterwards.stdout) as { events: Decision[] }).events).toEqual([expect.objectContaining({ eventId: 'evt-queued', send: true })]);
  });

  test('replayed twice before its consumer took the first copy, an event is refused the second time: the queue holds messages, and a copy an earlier replay sent may be one', async () => {
    const s = await startServices('AggregateReplayTwice');
    await outboxEvent('evt-missed', s.clock.now() - PAST_QUEUE_MS);
    await aggregate('order-1', 1, ['evt-earlier']);

    const first = await cli(s, ...replayArgs(s, 'evt-missed'), '--aggregate-table', aggregates);
    expect(first.code, first.stdout + first.stderr).toBe(0);
    const second = await cli(s, ...replayArgs(s, 'evt-missed'), '--aggregate-table', aggregates);

    expect(second.code, second.stdout + second.stderr).toBe(3);
    const [decision] = (JSON.parse(second.stdout) as { events: Decision[] }).events;
    expect(decision).toEqual(expect.objectContaining({ eventId: 'evt-missed', send: false }));
    expect(decision!.why).toContain(`${MAY_BE_QUEUED_TEXT} ${s.queue.address.url}: the relay's copy can no longer be on the queue, but`);
    expect(decision!.why).toContain('the queue holds 1 message(s) (ApproximateNumberOfMessages 1,');
    // on a queue that never empties, the audit lines of earlier sends are what shows whether one sent this event
    expect(decision!.why).toContain(`on a queue that is never empty this does not clear: when no replay audit line ("audit":"${REPLAY_AUDIT}"`);
    expect(first.stderr).toContain(`"audit":"${REPLAY_AUDIT}"`);
    expect(decision).not.toHaveProperty('replayableAfter'); // no time clears a queue that holds messages
    expect(s.queue.messages()).toHaveLength(1);
  });

  test("refuses an event no aggregate applied whose outbox item does not say when it was written: when its queue's copy is gone can not be proven", async () => {
    const s = await startServices('AggregateReplayUndated');
    await putOutboxItem(outbox, { id: 'evt-undated', timeMs: s.clock.now() - PAST_QUEUE_MS, writtenAtMs: undefined });
    await aggregate('order-1', 1, ['evt-earlier']);

    const replay = await cli(s, ...replayArgs(s, 'evt-undated'), '--aggregate-table', aggregates);

    expect(replay.code, replay.stdout + replay.stderr).toBe(3);
    const [decision] = (JSON.parse(replay.stdout) as { events: Decision[] }).events;
    expect(decision).toEqual(expect.objectContaining({ eventId: 'evt-undated', send: false, why: expect.stringContaining(`${MAY_BE_QUEUED_TEXT} ${s.queue.address.url}: its outbox item does not say when it was written`) }));
    expect(s.queue.messages()).toEqual([]);
  });

  /**
   * Review r19b (R19B-1): the same --event-id given twice read the event twice and sent two copies in one run (the
   * queue's counts are read once, before sending). A repeated id is taken once, as dlq redrive's --event-id filter takes it.
   */
  test('the same --event-id given twice is replayed once', async () => {
    const s = await startServices('AggregateReplayDupId');
    await outboxEvent('evt-missed', s.clock.now() - PAST_QUEUE_MS);
    await aggregate('order-1', 1, ['evt-earlier']);

    const replay = await cli(s, ...replayArgs(s, 'evt-missed', 'evt-missed'), '--aggregate-table', aggregates);

    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    const output = JSON.parse(replay.stdout) as { events: Decision[]; sent: unknown[] };
    expect(output.events.map((decision) => decision.eventId)).toEqual(['evt-missed']);
    expect(output.sent).toHaveLength(1);
    expect(s.queue.messages()).toHaveLength(1);
  });

  /**
   * Review r19b (R19B-3): a copy on the subscriber's dead-letter queue (kept 14 days from the dead-lettering) or its
   * subscription's was not counted, and the refusal said the relay's copy was "gone". An aggregate subscriber's redrive
   * is `dlq redrive --allow-reapply`, so a replay now and a redrive later brought two copies. The dead-letter queues
   * the Operator output names are read too: an event is refused while either holds a message, naming it and how many.
   */
  test.each(['deadLetterQueue', 'subscriptionDeadLetterQueue'] as const)('refuses an event no aggregate applied while the %s the Operator output names holds messages', async (which) => {
    const s = await startServices(`AggregateReplayDlq${which.length}`);
    const body = await outboxEvent('evt-missed', s.clock.now() - PAST_QUEUE_MS);
    await aggregate('order-1', 1, ['evt-earlier']);
    s[which].send({ body, origin: which === 'deadLetterQueue' ? { via: 'send-message' } : { via: 'sns-dead-letter' } });
    const output = JSON.stringify({
      format: 1, subscriberName: 'Invoicing', processingMode: 'aggregate', queueUrl: s.queue.address.url, outboxTable: outbox.outboxTableName,
      deadLetterQueueUrl: s.deadLetterQueue.address.url, subscriptionDeadLetterQueueUrl: s.subscriptionDeadLetterQueue.address.url,
    });
    const args = ['replay', '--subscriber-output', output, '--event-id', 'evt-missed', '--aggregate-table', aggregates, '--yes', '--json'];

    const replay = await cli(s, ...args);

    expect(replay.code, replay.stdout + replay.stderr).toBe(3);
    const [decision] = (JSON.parse(replay.stdout) as { events: Decision[] }).events;
    expect(decision).toEqual(expect.objectContaining({ eventId: 'evt-missed', send: false }));
    const kind = which === 'deadLetterQueue' ? 'dead-letter queue' : 'subscription dead-letter queue';
    expect(decision!.why).toContain(`${MAY_BE_QUEUED_TEXT} ${s.queue.address.url}: the relay's copy can no longer be on the queue`);
    expect(decision!.why).toContain(`its ${kind} ${s[which].address.url} holds 1 message(s)`);
    expect(decision!.why).toContain("'dlq redrive'");
    expect(decision!.why).not.toContain('gone');
    expect(s.queue.messages()).toEqual([]);

    // once it is empty (redriven, or deleted), the replayed copy is the only one
    for (const message of s[which].receive(10)) s[which].delete(message.receiptHandle);
    expect(s[which].messages()).toEqual([]);
    const afterwards = await cli(s, ...args);
    expect(afterwards.code, afterwards.stdout + afterwards.stderr).toBe(0);
    expect(s.queue.messages()).toHaveLength(1);
  });

  /**
   * Review r19b (R19B-4): only a send past a rule (--allow-reapply) was audited, so the log could not show whether an
   * earlier replay sent an event to an aggregate subscriber, which is what an operator must know before overriding a
   * queue that is never empty. Every send to an aggregate subscriber writes one audit line, naming the event and its message.
   */
  test('every event sent to a subscriber in aggregate mode is audited, not only an override', async () => {
    const s = await startServices('AggregateReplayAudited');
    await outboxEvent('evt-missed', s.clock.now() - PAST_QUEUE_MS);
    await aggregate('order-1', 1, ['evt-earlier']);

    const replay = await cli(s, ...replayArgs(s, 'evt-missed'), '--aggregate-table', aggregates);

    expect(replay.code, replay.stdout + replay.stderr).toBe(0);
    const [sent] = (JSON.parse(replay.stdout) as { sent: Array<{ eventId: string; messageId: string }> }).sent;
    const audits = replay.stderr.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(audits).toEqual([
      expect.objectContaining({ audit: REPLAY_AUDIT, subscriber: 'Invoicing', queue: s.queue.address.url, eventId: 'evt-missed', messageId: sent!.messageId, at: expect.any(String) }),
    ]);
    expect(replay.stderr).not.toContain('warning:');
  });

  test('without --aggregate-table every event is refused as before, and the reason says how to decide it', async () => {
    const s = await startServices('AggregateReplayBlind');
    await outboxEvent('evt-missed', s.clock.now() - DAY_MS);

    const replay = await cli(s, ...replayArgs(s, 'evt-missed'));

    expect(replay.code).toBe(3);
    const [decision] = (JSON.parse(replay.stdout) as { events: Decision[] }).events;
    expect(decision).toEqual(expect.objectContaining({ send: false, why: expect.stringContaining('--aggregate-table') }));
  });
});
