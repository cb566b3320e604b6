/**
 * An ordered subscriber's inbox table restored (into a new table) without `fence carry` (review ro13, RO13-10): its
 * fences went back while its business tables keep what it applied since. `dlq redrive --yes` and `fence redrive --yes`
 * refuse to send the letters of such an aggregate, as `fence replay` refuses its events, until the fences are carried.
 * Against DynamoDB Local and the simulator's SQS, with the real OrderedOutbox, the ordered consumer and the CLI.
 */
import { expect, test } from 'vitest';
import { sqsRecord } from '../lambda/helpers';
import { aMinuteAgo, cli, consumer, dlq, drain, emit, id, items, ledger, original, outbox, output, restoredInbox, threeAppliedRestoredAfterFirst, useInboxRestoreWorld } from './inbox-restore-kit';

const SUBSCRIBER = 'Ro13Redrive';
useInboxRestoreWorld({ subscriber: SUBSCRIBER, deadLetterQueue: true });

for (const command of ['dlq redrive', 'fence redrive'] as const) {
  test(`after an inbox restore without a carry, ${command} --yes leaves an applied event's letter above the restored fence (exit 3) until the fences are carried`, async () => {
    const aggregateId = id(command.replace(' ', '-'));
    const events = [await emit(aggregateId, 'opened'), await emit(aggregateId, 'credited 100')];
    const before = consumer(original, aMinuteAgo);
    await before({ Records: [sqsRecord(JSON.stringify(events[0]))] });
    const restorePoint = await items(original.inboxTableName);
    await before({ Records: [sqsRecord(JSON.stringify(events[1]))] });
    // a copy of #2 (applied) in the DLQ: an invocation that committed it and died before its ack, maxReceiveCount times
    dlq!.send({ body: JSON.stringify(events[1]), messageAttributes: {}, messageGroupId: aggregateId, messageDeduplicationId: `copy-2-${aggregateId}`, origin: { via: 'send-message' } });
    const restored = await restoredInbox(restorePoint);
    const args = command === 'dlq redrive' ? ['dlq', 'redrive', '--subscriber-output', output(restored), '--yes'] : ['fence', 'redrive', SUBSCRIBER, '--subscriber-output', output(restored), '--yes'];
    const moved = await cli(...args);
    expect(moved.code).toBe(3);
    expect(moved.stdout).toContain(`before inbox table '${restored.inboxTableName}' was created`);
    expect(moved.stdout).toContain('fence carry --from-table');
    await drain(restored);
    expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100']);
    expect(dlq!.counts().total).toBe(1);
    // once the fences are carried from the table restored from, the letter is an applied copy, not sent
    const carried = await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', restored.inboxTableName, '--outbox-table', outbox.outboxTableName, '--yes');
    expect(carried.code).toBe(0);
    const after = await cli(...args);
    expect(after.code).toBe(0);
    await drain(restored);
    expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100']);
    expect(dlq!.counts().total).toBe(0);
  });
}

test('a carry record copied by a second restore is not trusted: fence replay refuses until the fences are carried into the new table', async () => {
  const { aggregateId, restorePoint: firstPoint } = await threeAppliedRestoredAfterFirst('twice');
  // first restore, done by the runbook: T2, fences carried from T1
  const t2 = await restoredInbox(firstPoint);
  expect((await cli('fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', t2.inboxTableName, '--outbox-table', outbox.outboxTableName, '--yes')).code).toBe(0);
  // T2 is now the subscriber's table; a restore point after the carry (it holds the carry record), then #4 applied in T2
  const secondPoint = await items(t2.inboxTableName);
  const closed = await emit(aggregateId, 'closed');
  await consumer(t2, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(closed))] });
  expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100', 'debited 40', 'closed']);
  // second incident: T2 restored to the point after the carry, into T3, no carry this time
  const t3 = await restoredInbox(secondPoint);
  const replayed = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(t3), '--yes');
  expect(replayed.code).toBe(3);
  expect(replayed.stderr).toContain(`before inbox table '${t3.inboxTableName}' was created`);
  await drain(t3);
  expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100', 'debited 40', 'closed']);
  // carried from T2 into T3, the fence stands at #4: nothing to send
  expect((await cli('fence', 'carry', SUBSCRIBER, '--from-table', t2.inboxTableName, '--table', t3.inboxTableName, '--outbox-table', outbox.outboxTableName, '--yes')).code).toBe(0);
  const after = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(t3), '--yes');
  expect(after.code).toBe(0);
  await drain(t3);
  expect(await ledger(aggregateId)).toEqual(['opened', 'credited 100', 'debited 40', 'closed']);
});
