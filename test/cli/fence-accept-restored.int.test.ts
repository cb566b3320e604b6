/**
 * An ordered subscriber's inbox table restored (into a new table) when the table restored from is gone (review ro15b,
 * RO15B-3): no carry can prove how far the subscriber got, so `fence replay` refused for ever, even once each fence
 * stood where the subscriber's own state shows it applied. The operator accepts the fences with
 * `fence carry --accept-fences-as-applied --reason`, audited, and replays the rest. Against DynamoDB Local and the
 * simulator's SQS, with the real OrderedOutbox, the ordered consumer and the CLI.
 */
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import type { ConsumerConfig } from '../../lambda/config';
import type { OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { INBOX_RESTORE_ADVICE } from '../../operator/cli/inbox-restore-check';
import { UNCARRIED_INBOX_ADVICE } from '../../operator/cli/blocked-aggregates';
import { ACCEPTED_REASON_ATTRIBUTE } from '../../operator/cli/fence-accept';
import { fenceCarryKey } from '../../lambda/contract/ordered-wire-format';
import { createInbox } from '../support/proof/tables';
import { sqsRecord } from '../lambda/helpers';
import { cliAt } from './operator-services';
import { aMinuteAgo, cli, client, clock, consumer, documents, drain, emit, endpoint, id, items, ledger, outbox, output, restoredInbox, useInboxRestoreWorld } from './inbox-restore-kit';

const SUBSCRIBER = 'Restored';
useInboxRestoreWorld({ subscriber: SUBSCRIBER });


const REASON = 'old inbox table deleted; ledger checked: opened applied, nothing after';

/** An aggregate with #1 applied in an inbox table since deleted, #2 lost in flight; the restored table holds the fence at 1. */
async function restoredWithSourceGone(name: string): Promise<{ aggregateId: string; restored: ConsumerConfig; events: OrderedEnvelope[]; goneTable: string }> {
  const gone = await createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 });
  const aggregateId = id(name);
  const events = [await emit(aggregateId, 'opened'), await emit(aggregateId, 'credited 100')];
  await consumer(gone, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(events[0]))] });
  const restored = await restoredInbox(await items(gone.inboxTableName));
  await client.send(new DeleteTableCommand({ TableName: gone.inboxTableName }));
  return { aggregateId, restored, events, goneTable: gone.inboxTableName };
}

describe("an inbox restore whose table restored from is gone: 'fence carry --accept-fences-as-applied' (RO15B-3)", () => {
  test('refused until accepted; the dry run writes nothing; accepted (audited, the reason kept), the replay sends #2 and it applies once', async () => {
    const { aggregateId, restored, events } = await restoredWithSourceGone('gone');
    expect(await ledger(aggregateId)).toEqual(['opened']);
    const listed = await cli('fence', 'list', SUBSCRIBER, '--table', restored.inboxTableName, '--outbox-table', outbox.outboxTableName, '--json');
    const row = (JSON.parse(listed.stdout) as Array<{ aggregateId: string; action: string }>).find((each) => each.aggregateId === aggregateId);
    expect(row?.action).toContain(UNCARRIED_INBOX_ADVICE);
    expect(UNCARRIED_INBOX_ADVICE).toContain("'fence carry --accept-fences-as-applied --reason <text>'");
    const before = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(restored), '--yes');
    expect(before.code).toBe(3);
    expect(before.stderr).toContain(INBOX_RESTORE_ADVICE);
    expect(INBOX_RESTORE_ADVICE).toContain('--accept-fences-as-applied');

    const accept = ['fence', 'carry', SUBSCRIBER, '--table', restored.inboxTableName, '--accept-fences-as-applied', '--reason', REASON];
    const dryRun = await cli(...accept, '--json');
    expect(dryRun.code).toBe(0);
    expect(JSON.parse(dryRun.stdout)).toEqual({ dryRun: true, table: restored.inboxTableName, acceptedFencesAsApplied: true, reason: REASON });
    expect((await documents.send(new GetCommand({ TableName: restored.inboxTableName, Key: { pk: fenceCarryKey(SUBSCRIBER) } }))).Item).toBeUndefined();
    expect((await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(restored), '--yes')).code).toBe(3);

    const accepted = await cli(...accept, '--yes');
    expect(accepted.code).toBe(0);
    const audit = JSON.parse(accepted.stderr.trim().split('\n').find((line) => line.startsWith('{"audit"'))!) as Record<string, unknown>;
    expect(audit).toMatchObject({ audit: 'fence-carry-accepted', subscriber: SUBSCRIBER, table: restored.inboxTableName, acceptedFencesAsApplied: true, reason: REASON });
    const record = (await documents.send(new GetCommand({ TableName: restored.inboxTableName, Key: { pk: fenceCarryKey(SUBSCRIBER) }, ConsistentRead: true }))).Item;
    expect(record?.[ACCEPTED_REASON_ATTRIBUTE]).toBe(REASON);
    expect(record?.fromTable).toBeUndefined();

    const replayed = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(restored), '--yes', '--json');
    expect({ code: replayed.code, stderr: replayed.stderr }).toMatchObject({ code: 0 });
    expect((JSON.parse(replayed.stdout) as { events: Array<{ eventId: string }> }).events.map((event) => event.eventId)).toEqual([events[1]!.id]);
    await drain(restored);
    expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100']);
  });

  test('needs --reason; goes without --from-table; refused while the restore summary names a table that still exists', async () => {
    const { restored } = await restoredWithSourceGone('gone-usage');
    const accept = ['fence', 'carry', SUBSCRIBER, '--table', restored.inboxTableName, '--accept-fences-as-applied'];
    expect(await cli(...accept, '--yes')).toMatchObject({ code: 2, stderr: expect.stringContaining("--accept-fences-as-applied needs --reason") });
    expect(await cli(...accept, '--reason', REASON, '--from-table', 'some-table', '--yes')).toMatchObject({ code: 2, stderr: expect.stringContaining('carries from no table') });
    const existing = await createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 });
    const arn = (name: string) => `arn:aws:dynamodb:us-east-1:000000000000:table/${name}`;
    const stillThere = await cliAt({ clock, endpoint }, { restoredFrom: (table) => (table === restored.inboxTableName ? arn(existing.inboxTableName) : undefined) }, ...accept, '--reason', REASON, '--yes');
    expect(stillThere.code).toBe(3);
    expect(stillThere.stderr).toContain(`which still exists: carry the fences from it ('fence carry --from-table ${existing.inboxTableName}')`);
    expect((await documents.send(new GetCommand({ TableName: restored.inboxTableName, Key: { pk: fenceCarryKey(SUBSCRIBER) } }))).Item).toBeUndefined();
    const gone = await cliAt({ clock, endpoint }, { restoredFrom: (table) => (table === restored.inboxTableName ? arn('no-such-inbox-table') : undefined) }, ...accept, '--reason', REASON, '--yes');
    expect(gone.code).toBe(0);
  });
});
