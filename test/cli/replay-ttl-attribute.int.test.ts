/**
 * `replay` past the outbox's TTL on a table whose TTL attribute is not `expiresAt` (review rx15, RX15-3): a flow on the
 * user's own outbox table (`OutboxTable.fromTableAttributes({ timeToLiveAttributeName })`) writes its expiry under the
 * user's attribute, and replay reads the table's TTL attribute (DescribeTimeToLive), so an item past it is not sent.
 * Against DynamoDB Local and the simulator's SQS endpoint, the real CLI in-process.
 */
import { describe, expect, test } from 'vitest';
import { cli } from './operator-services';
import { DAY_MS, expiredAndKept, outbox, startServices, useReplayOutbox } from './replay-outbox-kit';

useReplayOutbox({ timeToLiveAttribute: 'ttl' });

describe("replay reads the outbox table's own TTL attribute (RX15-3)", () => {
  test('an item past its TTL under the attribute `ttl` is named as past the retention and not sent, exit 3', async () => {
    const s = await startServices('CustomTtlAttribute');
    const start = await expiredAndKept(s);

    const result = await cli(
      s,
      'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', 'billing', '--processing-mode', 'transactional',
      '--filter-policy', 'none', '--deduplication-window', '30d', '--event-id', 'evt-old', '--event-id', 'evt-kept', '--yes', '--json',
    );

    expect(result.code).toBe(3);
    const output = JSON.parse(result.stdout) as { pastRetention: Array<{ eventId: string; expiredAt: string }> };
    expect(output.pastRetention).toEqual([{ eventId: 'evt-old', expiredAt: new Date(start + 7 * DAY_MS).toISOString() }]);
    expect(s.queue.messages().map((message) => (JSON.parse(message.body) as { id: string }).id)).toEqual(['evt-kept']);
  });
});
