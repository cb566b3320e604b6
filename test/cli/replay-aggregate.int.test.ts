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
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
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
    await outboxEvent('evt-applied', s.clock.now() - DAY_MS);
    await outboxEvent('evt-missed', s.clock.now() - DAY_MS);
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
    await outboxEvent('evt-old', s.clock.now() - DAY_MS);
    await outboxEvent('evt-theirs', s.clock.now() - DAY_MS);
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

  test('without --aggregate-table every event is refused as before, and the reason says how to decide it', async () => {
    const s = await startServices('AggregateReplayBlind');
    await outboxEvent('evt-missed', s.clock.now() - DAY_MS);

    const replay = await cli(s, ...replayArgs(s, 'evt-missed'));

    expect(replay.code).toBe(3);
    const [decision] = (JSON.parse(replay.stdout) as { events: Decision[] }).events;
    expect(decision).toEqual(expect.objectContaining({ send: false, why: expect.stringContaining('--aggregate-table') }));
  });
});
