/**
 * Issue 38, item 10: `replay` on the standard path must not guess an event young. An outbox item that does not say when
 * it was written (`iefWrittenAt` absent: an older runtime, a producer in another language, an item written by hand),
 * or that says it was written in the future, has no provable age: its `time` is its producer's word. Such an event is
 * refused; `--allow-expired` sends it with a warning and one JSON audit line per event. Against DynamoDB Local and the
 * simulator's SQS endpoint, with the real CLI in-process and the real transactional consumer.
 */
import { beforeEach, describe, expect, test } from 'vitest';
import { localClient, uniqueTableName } from '../support/dynamodb-client';
import { putOutboxItem } from '../support/outbox-items';
import { createKeyedTable } from '../support/proof/tables';
import { createInboxTable } from '../lambda/processing/fixtures';
import { cli, countingConsumer, type OperatorServices } from './operator-services';
import { DAY_MS, outbox, startServices, useReplayOutbox } from './replay-outbox-kit';

const SUBSCRIBER = 'billing';

let inboxTable: string;
let effectsTable: string;

useReplayOutbox();
beforeEach(async () => {
  inboxTable = uniqueTableName('cli-age-inbox');
  await createInboxTable(localClient(), inboxTable);
  effectsTable = await createKeyedTable(localClient(), 'cli-age-effects');
});

/** An outbox item written by a producer other than the runtime: dated `timeMs`, saying it was written at `writtenAtMs` (absent: it does not say). */
const foreignItem = (id: string, timeMs: number, writtenAtMs: number | undefined): Promise<string> => putOutboxItem(outbox, { id, timeMs, writtenAtMs });

const replayArgs = (s: OperatorServices, id: string) => [
  'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional',
  '--filter-policy', 'none', '--deduplication-window', '30d', '--event-id', id, '--yes', '--json',
];

describe('replay refuses an event whose age it can not prove (issue 38, item 10)', () => {
  // written (and applied) now, its time says 11 days later: 31 days on, the time says 20 days ago, its inbox record (30 days) is gone
  test.each([
    ['without iefWrittenAt', undefined, /its outbox item does not say when it was written/],
    ['with iefWrittenAt in the future', 40 * DAY_MS, /says it was written at .*, later than now/],
  ])('an item %s, written 31 days ago and dated 20 days ago, is refused and applied once', async (_name, writtenAhead, why) => {
    const s = await startServices('UnprovenAge');
    const consumer = countingConsumer(s, { subscriber: SUBSCRIBER, inboxTable, effectsTable });
    const writtenAt = s.clock.now();
    const body = await foreignItem('evt-old', writtenAt + 11 * DAY_MS, writtenAhead === undefined ? undefined : writtenAt + writtenAhead);
    s.queue.send({ body, origin: { via: 'sns' } });
    await consumer.drain();
    expect(await consumer.applied('evt-old')).toEqual({ 'evt-old': 1 });
    s.clock.advanceBy(31 * DAY_MS);

    const replay = await cli(s, ...replayArgs(s, 'evt-old'));

    expect(replay.code).toBe(3);
    const output = JSON.parse(replay.stdout) as { events: Array<{ eventId: string; send: boolean; why?: string }> };
    expect(output.events).toEqual([expect.objectContaining({ eventId: 'evt-old', send: false, why: expect.stringMatching(why) })]);
    expect(output.events[0]!.why).toContain('--allow-expired');
    expect(s.queue.messages()).toEqual([]);
    await consumer.drain();
    expect(await consumer.applied('evt-old')).toEqual({ 'evt-old': 1 });
  });

  test('--allow-expired sends it, with a warning and a JSON audit line naming the event, the rule passed and who', async () => {
    const s = await startServices('UnprovenAgeOverride');
    await foreignItem('evt-unproven', s.clock.now() - DAY_MS, undefined);

    const replay = await cli(s, ...replayArgs(s, 'evt-unproven'), '--allow-expired');

    expect(replay.code).toBe(0);
    expect(replay.stderr).toContain("warning: event 'evt-unproven'");
    const audits = replay.stderr.split('\n').filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(audits).toEqual([
      expect.objectContaining({ audit: 'replay-override', by: 'alice', override: '--allow-expired', subscriber: SUBSCRIBER, eventId: 'evt-unproven', why: expect.stringContaining('does not say when it was written') }),
    ]);
    expect(s.queue.messages()).toHaveLength(1);
  });

  test('an item of the runtime (iefWrittenAt in the past) is still aged from the earlier of its time and its write', async () => {
    const s = await startServices('ProvenAge');
    await foreignItem('evt-young', s.clock.now() - DAY_MS, s.clock.now() - DAY_MS);
    const replay = await cli(s, ...replayArgs(s, 'evt-young'));
    expect(replay.code).toBe(0);
    expect(s.queue.messages()).toHaveLength(1);
  });
});
