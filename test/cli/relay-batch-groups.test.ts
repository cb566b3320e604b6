/** `dlq list` on the relay's dead-letter queue: batches grouped by shard and condition, overlapping replay ranges merged. */
import { describe, expect, test } from 'vitest';
import { groupRelayBatches } from '../../operator/cli/dead-letters/relay-batch-groups';

const batch = (first: string, last = first, overrides: Record<string, unknown> = {}) => ({
  condition: 'RetryAttemptsExhausted',
  shardId: 'shard-1',
  approximateArrivalOfFirstRecord: first,
  approximateArrivalOfLastRecord: last,
  batchSize: 1,
  ...overrides,
});

describe('groupRelayBatches', () => {
  test('16 one-record batches of one shard and condition, a few seconds apart, are one group with their count and records', () => {
    const batches = Array.from({ length: 16 }, (_, index) => batch(`2026-11-27T20:00:${String(10 + index).padStart(2, '0')}.000Z`));

    expect(groupRelayBatches(batches)).toEqual([
      { shardId: 'shard-1', condition: 'RetryAttemptsExhausted', batches: 16, records: 16, first: '2026-11-27T20:00:10.000Z', last: '2026-11-27T20:00:25.000Z', range: { since: '2026-11-27T19:55:10.000Z', until: '2026-11-27T20:05:25.000Z' } },
    ]);
  });

  test('keeps apart other shards, other conditions, ranges that do not overlap and batches whose times are unknown', () => {
    const groups = groupRelayBatches([
      batch('2026-11-27T20:00:00.000Z'),
      batch('2026-11-27T20:00:01.000Z', '2026-11-27T20:00:02.000Z', { shardId: 'shard-2', batchSize: 3 }),
      batch('2026-11-27T20:00:03.000Z', undefined, { condition: 'AccessDenied' }),
      batch('2026-11-27T23:00:00.000Z'),
      { shardId: 'shard-1', condition: 'RetryAttemptsExhausted' },
    ]);

    expect(groups.map((group) => [group.shardId, group.condition, group.batches, group.records, group.first, group.range?.until])).toEqual([
      ['shard-1', 'RetryAttemptsExhausted', 1, 1, '2026-11-27T20:00:00.000Z', '2026-11-27T20:05:00.000Z'],
      ['shard-1', 'RetryAttemptsExhausted', 1, 1, '2026-11-27T23:00:00.000Z', '2026-11-27T23:05:00.000Z'],
      ['shard-1', 'RetryAttemptsExhausted', 1, undefined, undefined, undefined],
      ['shard-2', 'RetryAttemptsExhausted', 1, 3, '2026-11-27T20:00:01.000Z', '2026-11-27T20:05:02.000Z'],
      ['shard-1', 'AccessDenied', 1, 1, '2026-11-27T20:00:03.000Z', '2026-11-27T20:05:03.000Z'],
    ]);
  });
});
