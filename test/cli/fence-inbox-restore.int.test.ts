/**
 * An ordered subscriber's inbox table restored to a point in time (into a new table) or replaced (review ro12,
 * RO12-4): its fences go back while its business tables keep what it applied since. `fence replay` must not send those
 * events again; `fence carry` brings the fences forward from the table restored from. Against DynamoDB Local and the
 * simulator's SQS, with the real OrderedOutbox, the ordered consumer and the CLI.
 */
import { describe, expect, test } from 'vitest';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { OrderedOutbox } from '../../lambda/ordered/ordered-outbox';
import { INBOX_RESTORE_ADVICE } from '../../operator/cli/inbox-restore-check';
import { UNCARRIED_INBOX_ADVICE } from '../../operator/cli/blocked-aggregates';
import { carrySourceRefusalStart } from '../../operator/cli/fence-carry-proof';
import { carryOutputMismatch } from '../../operator/cli/fence-command';
import { parseSubscriberDeployment } from '../../lambda/contract/subscriber-deployment';
import { createInbox, createOutbox } from '../support/proof/tables';
import { sqsRecord } from '../lambda/helpers';
import { aMinuteAgo, cli, client, consumer, drain, emit, id, items, ledger, original, outbox, output, restoredInbox, threeAppliedRestoredAfterFirst, useInboxRestoreWorld } from './inbox-restore-kit';

const SUBSCRIBER = 'Restored';
useInboxRestoreWorld({ subscriber: SUBSCRIBER });

describe('RO12-4: an inbox table restored or replaced under an ordered subscriber', () => {
  test("restored to a point in time: 'fence replay' refuses (the events after the fence may be applied); 'fence carry' from the table restored from moves the fences forward, and nothing applies twice", async () => {
    const { aggregateId, events, restorePoint } = await threeAppliedRestoredAfterFirst('restored');
    expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100', 'debited 40']);

    // the inbox table restored to after 'opened', into a new table the subscriber now uses
    const restored = await restoredInbox(restorePoint);
    const refused = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(restored), '--yes');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`before inbox table '${restored.inboxTableName}' was created`);
    expect(refused.stderr).toContain(INBOX_RESTORE_ADVICE);
    await drain(restored);
    expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100', 'debited 40']);

    // the runbook: carry the fences (and the live records) from the table restored from
    const dryRun = await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', restored.inboxTableName, '--outbox-table', outbox.outboxTableName, '--json');
    expect(dryRun.code).toBe(0);
    expect(JSON.parse(dryRun.stdout)).toMatchObject({ dryRun: true, fences: expect.arrayContaining([{ aggregateId, from: 3, current: 1, decision: 'moved' }]) });
    const carried = await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', restored.inboxTableName, '--outbox-table', outbox.outboxTableName, '--yes');
    expect(carried.code).toBe(0);
    expect(carried.stderr).toContain('"audit":"fence-carry"');
    const shown = JSON.parse((await cli('fence', 'show', SUBSCRIBER, aggregateId, '--table', restored.inboxTableName, '--json')).stdout) as { appliedSequence: number };
    expect(shown.appliedSequence).toBe(3);
    // replay now has nothing to send; a late copy of an applied event is a duplicate; the next event applies
    const replayed = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(restored), '--yes');
    expect(replayed.code).toBe(0);
    await consumer(restored)({ Records: [sqsRecord(JSON.stringify(events[1]))] });
    await consumer(restored)({ Records: [sqsRecord(JSON.stringify(await emit(aggregateId, 'closed')))] });
    expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100', 'debited 40', 'closed']);
  });

  test("restored and not carried: 'fence list' advises 'fence carry' first, a skip only when the table restored from is gone; once carried, nothing is held", async () => {
    const { aggregateId, restorePoint } = await threeAppliedRestoredAfterFirst('listed');
    const restored = await restoredInbox(restorePoint);
    const listed = await cli('fence', 'list', SUBSCRIBER, '--table', restored.inboxTableName, '--outbox-table', outbox.outboxTableName, '--json');
    expect(listed).toMatchObject({ code: 0, stderr: '' });
    const row = (JSON.parse(listed.stdout) as Array<{ aggregateId: string; action: string }>).find((each) => each.aggregateId === aggregateId);
    expect(row?.action.startsWith(UNCARRIED_INBOX_ADVICE)).toBe(true);
    // a skip only where the carry cannot be made (the table restored from is gone), after the carry it would replace
    const action = row!.action;
    expect(action.indexOf("first 'fence carry --from-table")).toBeGreaterThanOrEqual(0);
    expect(action.indexOf('fence skip')).toBeGreaterThan(action.indexOf("first 'fence carry --from-table"));
    expect(action.slice(0, action.indexOf('fence skip'))).toMatch(/when that table is gone, '$/);
    // carried, the fence stands where the subscriber applied: not held
    expect((await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', restored.inboxTableName, '--outbox-table', outbox.outboxTableName, '--yes')).code).toBe(0);
    const after = await cli('fence', 'list', SUBSCRIBER, '--table', restored.inboxTableName, '--outbox-table', outbox.outboxTableName, '--json');
    expect((JSON.parse(after.stdout) as Array<{ aggregateId: string }>).map((each) => each.aggregateId)).not.toContain(aggregateId);
  });

  test("replaced by an empty table: 'fence replay' refuses events written before it, unless the subscriber was added later", async () => {
    const aggregateId = id('replaced');
    const events = [await emit(aggregateId, 'opened'), await emit(aggregateId, 'credited 100')];
    const before = consumer(original, aMinuteAgo);
    for (const event of events) await before({ Records: [sqsRecord(JSON.stringify(event))] });
    const replaced = await restoredInbox([]);
    const refused = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(replaced));
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`2 of its events were written before the table was created`);
    // a subscriber added after those events says so: the dry run goes on
    const added = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(replaced), '--subscriber-added-later');
    expect(added.code).toBe(0);
    expect(added.stdout).toContain('would send 2 event(s)');
  });
});

describe('fence carry proves the table it carries from is the one the inbox was restored from (review ro13, RO13-5)', () => {
  test("another flow's inbox with a subscriber of this name is refused, nothing carried; the table restored from is carried", async () => {
    const aggregateId = id('shared');
    // this flow: #1 applied, then the inbox table restored (into R) right after it
    const mine = await emit(aggregateId, 'opened');
    await consumer(original, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(mine))] });
    const restored = await restoredInbox(await items(original.inboxTableName));
    // another flow (its own outbox) with a subscriber of the same name and an aggregate of the same id, applied up to #4
    const otherInbox = await createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 });
    const otherOutbox = await createOutbox(client, { eventSource: 'other', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });
    for (let n = 0; n < 4; n++) {
      const [other] = await new OrderedOutbox({ client, config: otherOutbox, now: aMinuteAgo }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: `${aggregateId}-other`, data: { step: `other ${n}` } }] });
      await consumer(otherInbox, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(other))] });
    }
    const refused = await cli('fence', 'carry', SUBSCRIBER, '--from-table', otherInbox.inboxTableName, '--table', restored.inboxTableName, '--yes');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(carrySourceRefusalStart(otherInbox.inboxTableName, restored.inboxTableName));
    const shown = JSON.parse((await cli('fence', 'show', SUBSCRIBER, aggregateId, '--table', restored.inboxTableName, '--json')).stdout) as { appliedSequence: number };
    expect(shown.appliedSequence).toBe(1);
    // this flow's next event applies on the restored table
    await consumer(restored)({ Records: [sqsRecord(JSON.stringify(await emit(aggregateId, 'credited 100')))] });
    expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100']);
    // from the table it was restored from: proven by the records both hold
    const carried = await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', restored.inboxTableName, '--outbox-table', outbox.outboxTableName, '--yes', '--json');
    expect(carried.code).toBe(0);
    expect(JSON.parse(carried.stdout)).toMatchObject({ source: expect.stringContaining('held when it was created, at the same aggregates and sequences') });
  });

  test('a table that holds nothing of the subscriber is carried into only with the Operator output of the deployment that used the table carried from', async () => {
    const aggregateId = id('empty');
    await consumer(original, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(await emit(aggregateId, 'opened')))] });
    const replaced = await restoredInbox([]);
    const refused = await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', replaced.inboxTableName, '--outbox-table', outbox.outboxTableName, '--yes');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(carrySourceRefusalStart(original.inboxTableName, replaced.inboxTableName));
    const wrongOutput = await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', replaced.inboxTableName, '--from-subscriber-output', output(replaced), '--yes');
    expect(wrongOutput.code).toBe(2);
    const carried = await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', replaced.inboxTableName, '--from-subscriber-output', output(original), '--yes');
    expect(carried.code).toBe(3);
    expect(carried.stderr).toContain(carryOutputMismatch(SUBSCRIBER, replaced.inboxTableName, parseSubscriberDeployment(output(original)), undefined));
    const withCurrent = await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', replaced.inboxTableName, '--from-subscriber-output', output(original), '--subscriber-output', output(replaced), '--yes');
    expect(withCurrent.code).toBe(0);
    const shown = JSON.parse((await cli('fence', 'show', SUBSCRIBER, aggregateId, '--table', replaced.inboxTableName, '--json')).stdout) as { appliedSequence: number };
    expect(shown.appliedSequence).toBe(1);
  });
});
