/**
 * `replay` past the outbox's retention (review rx14, RX14-2): DynamoDB deletes an item whose TTL has passed only
 * "typically within a few days", and reads return it until then. The flow's retention (eventRetention) is what the
 * payload bucket's lifecycle counts on, so an item past its TTL is past the retention: replay must not send it, and
 * must say so (never a silent 0). Against DynamoDB Local and the simulator's SQS endpoint, the real CLI in-process.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { orderedHistoryEvents } from '../../operator/cli/ordered-replay';
import { localClient } from '../support/dynamodb-client';
import { PAST_RETENTION_TEXT } from '../../operator/cli/replay-command';
import { cli, type OperatorServices } from './operator-services';
import { DAY_MS, outbox, outboxItem as ttlItem, startServices, useReplayOutbox } from './replay-outbox-kit';

useReplayOutbox();

/** An outbox item as the producer writes it, at `writtenAtMs`, kept `retentionDays` (its TTL under the runtime's attribute). */
const outboxItem = (id: string, writtenAtMs: number, retentionDays: number, recordType?: string): Promise<void> => ttlItem(id, writtenAtMs, retentionDays, TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE, recordType);

const args = (s: OperatorServices, ...selection: string[]) => [
  'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', 'billing', '--processing-mode', 'transactional',
  '--filter-policy', 'none', '--deduplication-window', '30d', ...selection,
];

describe("replay does not send an outbox item past its TTL, and says so (RX14-2)", () => {
  test('by id: the expired item is named as past the retention, not sent, exit 3', async () => {
    const s = await startServices('PastRetentionId');
    const start = s.clock.now();
    await outboxItem('evt-expired', start, 7);
    await outboxItem('evt-kept', start + 3 * DAY_MS, 7);
    s.clock.advanceBy(9 * DAY_MS);

    const result = await cli(s, ...args(s, '--event-id', 'evt-expired', '--event-id', 'evt-kept', '--yes', '--json'));

    expect(result.code).toBe(3);
    const output = JSON.parse(result.stdout) as { events: Array<{ eventId: string; send: boolean }>; pastRetention: Array<{ eventId: string; expiredAt: string }> };
    expect(output.events.map((event) => [event.eventId, event.send])).toEqual([['evt-kept', true]]);
    expect(output.pastRetention).toEqual([{ eventId: 'evt-expired', expiredAt: new Date(start + 7 * DAY_MS).toISOString() }]);
    expect(s.queue.messages().map((message) => (JSON.parse(message.body) as { id: string }).id)).toEqual(['evt-kept']);
  });

  test('by time range: the expired item is named in the text, not sent, exit 3 (never a silent 0)', async () => {
    const s = await startServices('PastRetentionRange');
    const start = s.clock.now();
    await outboxItem('evt-expired', start, 7);
    s.clock.advanceBy(8 * DAY_MS);

    const result = await cli(s, ...args(s, '--since', new Date(start - DAY_MS).toISOString()));

    expect(result.code).toBe(3);
    expect(result.stdout).toContain(`${PAST_RETENTION_TEXT}: evt-expired`);
    expect(result.stdout).toContain('dry run: would send 0');
    expect(s.queue.messages()).toEqual([]);
  });

  test("to an ordered subscriber: a history item past its TTL is taken as not in the history (named as missing), by id and by range", async () => {
    const start = Date.parse('2026-11-01T00:00:00Z');
    await outboxItem('evt-ordered-expired', start, 7, ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE);
    await outboxItem('evt-ordered-kept', start + 3 * DAY_MS, 7, ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE);
    const location = { client: DynamoDBDocumentClient.from(localClient()), tableName: outbox.outboxTableName, sortKeyName: 'sk' };
    const now = start + 9 * DAY_MS;

    const byId = await orderedHistoryEvents({ location, eventIds: ['evt-ordered-expired', 'evt-ordered-kept'] }, now);
    const byRange = await orderedHistoryEvents({ location, eventIds: [], range: { sinceEpochMs: start - DAY_MS, untilEpochMs: now, types: [] } }, now);

    for (const read of [byId, byRange]) {
      expect(read.events.map((event) => event.envelope.id)).toEqual(['evt-ordered-kept']);
      expect(read.missing).toEqual(['evt-ordered-expired']);
    }
  });
});
