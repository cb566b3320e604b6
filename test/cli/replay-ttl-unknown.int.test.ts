/**
 * `replay` when the outbox's TTL attribute can not be read from the table (review rx15b, RX15B-1): a role without
 * `dynamodb:DescribeTimeToLive` used to have every item read under `expiresAt`, so on a table whose TTL reads `ttl`
 * an item past it was sent, silently. Now the attribute comes from `--outbox-ttl-attribute` or the Operator output
 * (`outboxTimeToLiveAttribute`), and when neither names it and the table can not say, nothing is sent (exit code 3).
 * Against DynamoDB Local and the simulator's SQS endpoint, the real CLI in-process.
 */
import { describe, expect, test } from 'vitest';
import { SUBSCRIBER_DEPLOYMENT_FORMAT } from '../../lambda/contract/subscriber-deployment';
import { OUTBOX_TTL_UNKNOWN_TEXT } from '../../operator/cli/outbox-ttl-attribute';
import { cliAt } from './operator-services';
import { DAY_MS, expiredAndKept, outbox, sentIds, startServices, useReplayOutbox } from './replay-outbox-kit';

const DENIED = { deniedDynamoDbCommands: ['DescribeTimeToLiveCommand'] };

useReplayOutbox({ timeToLiveAttribute: 'ttl' });

const EVENTS = ['--event-id', 'evt-old', '--event-id', 'evt-kept', '--yes', '--json'];

describe('replay when DescribeTimeToLive is denied (RX15B-1)', () => {
  test('flags only: refused, naming the table, the flag and the permission; nothing sent, exit 3', async () => {
    const s = await startServices('TtlDenied');
    await expiredAndKept(s);
    const result = await cliAt(
      s, DENIED,
      'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', 'billing', '--processing-mode', 'transactional',
      '--filter-policy', 'none', '--deduplication-window', '30d', ...EVENTS,
    );
    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`refused: ${OUTBOX_TTL_UNKNOWN_TEXT} ${outbox.outboxTableName} could not be read (DescribeTimeToLive: AccessDeniedException`);
    expect(result.stderr).toContain('--outbox-ttl-attribute');
    expect(result.stderr).toContain('dynamodb:DescribeTimeToLive');
    expect(sentIds(s)).toEqual([]);
  });

  test('--outbox-ttl-attribute ttl: the item past it is named and not sent, the other is', async () => {
    const s = await startServices('TtlFlag');
    const start = await expiredAndKept(s);
    const result = await cliAt(
      s, DENIED,
      'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', 'billing', '--processing-mode', 'transactional',
      '--filter-policy', 'none', '--deduplication-window', '30d', '--outbox-ttl-attribute', 'ttl', ...EVENTS,
    );
    expect(result.code).toBe(3);
    expect((JSON.parse(result.stdout) as { pastRetention: unknown[] }).pastRetention).toEqual([{ eventId: 'evt-old', expiredAt: new Date(start + 7 * DAY_MS).toISOString() }]);
    expect(sentIds(s)).toEqual(['evt-kept']);
  });

  test("the Operator output's outboxTimeToLiveAttribute is used without asking the table", async () => {
    const s = await startServices('TtlOutput');
    await expiredAndKept(s);
    const output = {
      format: SUBSCRIBER_DEPLOYMENT_FORMAT,
      subscriberName: 'billing',
      processingMode: 'transactional',
      deduplicationWindowSeconds: 30 * 86_400,
      inboxTable: 'billing-inbox-not-read',
      queueUrl: s.queue.address.url,
      deadLetterQueueUrl: s.queue.address.url,
      outboxTable: outbox.outboxTableName,
      outboxTimeToLiveAttribute: 'ttl',
    };
    const result = await cliAt(s, DENIED, 'replay', '--subscriber-output', JSON.stringify(output), ...EVENTS);
    expect(result.code).toBe(3);
    expect((JSON.parse(result.stdout) as { pastRetention: Array<{ eventId: string }> }).pastRetention.map((event) => event.eventId)).toEqual(['evt-old']);
    expect(sentIds(s)).toEqual(['evt-kept']);
  });
});
