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
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import type { ProducerConfig } from '../../lambda/config';
import { outboxKeyValue } from '../../lambda/producer/outbox-item';
import { AGGREGATE_ITEM, OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { localClient } from '../support/dynamodb-client';
import { createKeyedTable, createOutbox } from '../support/proof/tables';
import { envelopeObject } from '../lambda/helpers';
import { cli, startOperatorServices, type OperatorServices } from './operator-services';

const DAY_MS = 86_400_000;

let aggregates: string;
let outbox: ProducerConfig;
let services: OperatorServices | undefined;

beforeEach(async () => {
  aggregates = await createKeyedTable(localClient(), 'cli-aggregates');
  outbox = await createOutbox(localClient(), { eventSource: 'urn:test:orders' });
});

afterEach(async () => {
  await services?.stop();
  services = undefined;
});

const documents = () => DynamoDBDocumentClient.from(localClient());

/** An outbox item of the runtime, written and dated `atMs`. */
async function outboxEvent(id: string, atMs: number): Promise<void> {
  const key = outboxKeyValue(id);
  await documents().send(
    new PutCommand({
      TableName: outbox.outboxTableName,
      Item: {
        pk: key,
        sk: key,
        [OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE]: OUTBOX_ITEM.RECORD_TYPE_VALUE,
        [OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]: JSON.stringify(envelopeObject({ id, type: 'OrderBilled', time: new Date(atMs).toISOString() })),
        [OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]: id,
        [OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]: 'OrderBilled',
        [OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE]: atMs,
      },
    }),
  );
}

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
    const s = (services = await startOperatorServices('AggregateReplay'));
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
    const s = (services = await startOperatorServices('AggregateReplayEvicted'));
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
    const s = (services = await startOperatorServices('AggregateReplayUnmarked'));
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

  test('without --aggregate-table every event is refused as before, and the reason says how to decide it', async () => {
    const s = (services = await startOperatorServices('AggregateReplayBlind'));
    await outboxEvent('evt-missed', s.clock.now() - DAY_MS);

    const replay = await cli(s, ...replayArgs(s, 'evt-missed'));

    expect(replay.code).toBe(3);
    const [decision] = (JSON.parse(replay.stdout) as { events: Decision[] }).events;
    expect(decision).toEqual(expect.objectContaining({ send: false, why: expect.stringContaining('--aggregate-table') }));
  });
});
