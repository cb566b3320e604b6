/**
 * `replay` on a restored outbox table (review ro15b, RO15B-1): DynamoDB restores no TTL setting, so the table's TTL is
 * off, and its items' expiry attribute (`ttl` on a user's table) is not `expiresAt`: replay refuses unless the operator
 * names the attribute (`--outbox-ttl-attribute`), and then an item past its TTL is not sent. A table whose TTL can not be
 * read is refused too unless the attribute is named (review rx15b, RX15B-1). Against DynamoDB Local (its DescribeTable answered with the restore summary a restored
 * table has) and the simulator's SQS endpoint, the real CLI in-process.
 */
import { UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, test } from 'vitest';
import { localClient } from '../support/dynamodb-client';
import { OUTBOX_TTL_DISAGREES_TEXT, OUTBOX_TTL_UNKNOWN_TEXT } from '../../operator/cli/outbox-ttl-attribute';
import { cli, cliAt, type OperatorServices } from './operator-services';
import { DAY_MS, expiredAndKept, outbox, sentIds, startServices, useReplayOutbox } from './replay-outbox-kit';

// a restored outbox table: DynamoDB restores no TTL setting (RestoreTableToPointInTime: "You must manually set up ... Time to Live (TTL) settings")
useReplayOutbox();

const SOURCE = 'arn:aws:dynamodb:us-east-1:111122223333:table/orders-outbox';

const replayArgs = (s: OperatorServices, ...more: string[]): string[] => [
  'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', 'billing', '--processing-mode', 'transactional',
  '--filter-policy', 'none', '--deduplication-window', '30d', '--event-id', 'evt-old', '--event-id', 'evt-kept', ...more, '--yes', '--json',
];


describe('replay on a restored outbox table (its TTL off) does not guess the TTL attribute (RO15B-1)', () => {
  test('without --outbox-ttl-attribute: refused, exit 3, nothing sent, the restore and the way on named', async () => {
    const s = await startServices('RestoredTtl');
    await expiredAndKept(s);
    const restored = { restoredFrom: (table: string) => (table === outbox.outboxTableName ? SOURCE : undefined) };

    const result = await cliAt(s, restored, ...replayArgs(s));

    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`refused: outbox table '${outbox.outboxTableName}' was restored (from ${SOURCE}) and its TTL is off`);
    expect(result.stderr).toContain('--outbox-ttl-attribute');
    expect(sentIds(s)).toEqual([]);
  });

  test('with --outbox-ttl-attribute ttl: the item past its ttl is named as past the retention and not sent, exit 3', async () => {
    const s = await startServices('RestoredTtlNamed');
    const start = await expiredAndKept(s);
    const restored = { restoredFrom: (table: string) => (table === outbox.outboxTableName ? SOURCE : undefined) };

    const result = await cliAt(s, restored, ...replayArgs(s, '--outbox-ttl-attribute', 'ttl'));

    expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 3 });
    const output = JSON.parse(result.stdout) as { pastRetention: Array<{ eventId: string; expiredAt: string }> };
    expect(output.pastRetention).toEqual([{ eventId: 'evt-old', expiredAt: new Date(start + 7 * DAY_MS).toISOString() }]);
    expect(sentIds(s)).toEqual(['evt-kept']);
  });

  test("--outbox-ttl-attribute that is not the table's TTL attribute (TTL on) is refused, nothing sent", async () => {
    const s = await startServices('TtlDisagrees');
    await localClient().send(new UpdateTimeToLiveCommand({ TableName: outbox.outboxTableName, TimeToLiveSpecification: { AttributeName: 'ttl', Enabled: true } }));
    await expiredAndKept(s);

    const result = await cli(s, ...replayArgs(s, '--outbox-ttl-attribute', 'expiresAt'));

    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`refused: ${OUTBOX_TTL_DISAGREES_TEXT}, 'expiresAt' (--outbox-ttl-attribute, else the Operator output's outboxTimeToLiveAttribute), disagrees with outbox table '${outbox.outboxTableName}', whose TTL reads 'ttl'`);
    expect(sentIds(s)).toEqual([]);
  });

  test('a TTL that can not be read (a role without dynamodb:DescribeTimeToLive): refused unless --outbox-ttl-attribute names it, which reads the table\'s own', async () => {
    const s = await startServices('TtlUnreadable');
    await expiredAndKept(s);
    const denied = { deniedDynamoDbCommands: ['DescribeTimeToLiveCommand'] };

    const dryRun = await cliAt(s, denied, ...replayArgs(s).filter((arg) => arg !== '--yes'));
    expect(dryRun.code).toBe(3);
    expect(dryRun.stderr).toContain(`refused: ${OUTBOX_TTL_UNKNOWN_TEXT} ${outbox.outboxTableName} could not be read (DescribeTimeToLive: AccessDeniedException`);
    expect(dryRun.stderr).toContain('Give --outbox-ttl-attribute');
    expect(sentIds(s)).toEqual([]);

    const named = await cliAt(s, denied, ...replayArgs(s, '--outbox-ttl-attribute', 'ttl'));
    expect(named.code).toBe(3);
    expect(named.stderr).not.toContain(OUTBOX_TTL_UNKNOWN_TEXT);
    expect((JSON.parse(named.stdout) as { pastRetention: Array<{ eventId: string }> }).pastRetention.map((event) => event.eventId)).toEqual(['evt-old']);
    expect(sentIds(s)).toEqual(['evt-kept']);
  });
});
