/**
 * `fence carry` from another flow's inbox (a subscriber of the same name in another environment) is refused: its
 * Operator output must be of the flow that uses the restored table (same outbox table, account and Region), and one event
 * both inboxes recorded (replayed into a shadow environment) proves nothing of the rest (review ro14, RO14-2). Against
 * DynamoDB Local and the simulator's SQS, with the real OrderedOutbox, the ordered consumer and the CLI.
 */
import { DescribeTableCommand } from '@aws-sdk/client-dynamodb';
import { describe, expect, test } from 'vitest';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { ORDERED_INBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { carrySourceRefusalStart } from '../../operator/cli/fence-carry-proof';
import { createInbox, createOutbox } from '../support/proof/tables';
import { sqsRecord } from '../lambda/helpers';
import { cliAt } from './operator-services';
import { aMinuteAgo, cli, client, clock, consumer, emit, endpoint, id, items, itemsOf, original, outbox, output, queue, restoredInbox, useInboxRestoreWorld } from './inbox-restore-kit';

const SUBSCRIBER = 'Restored';
useInboxRestoreWorld({ subscriber: SUBSCRIBER });
describe('fence carry from a wrong table', () => {
  test("another environment's Operator output (same subscriber name, naming its own inbox) proves carrying its fences into this flow's replaced table", async () => {
    const aggregateId = id('env');
    await consumer(original, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(await emit(aggregateId, 'opened')))] });
    const replaced = await restoredInbox([]);
    // staging: its own outbox and inbox, a subscriber of the same name, the same aggregate id applied up to #4
    const stagingInbox = await createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 });
    const stagingOutbox = await createOutbox(client, { eventSource: 'staging', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });
    for (let n = 0; n < 4; n++) {
      const [other] = await new OrderedOutbox({ client, config: stagingOutbox, now: aMinuteAgo }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: `${aggregateId}-staging`, data: { step: `staging ${n}` } }] });
      await consumer(stagingInbox, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(other))] });
    }
    const stagingOutput = JSON.stringify({
      format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600,
      outboxTable: stagingOutbox.outboxTableName, inboxTable: stagingInbox.inboxTableName, queueUrl: `${queue.address.url}-staging`, deadLetterQueueUrl: `${queue.address.url}-staging-dlq`,
    });
    const carried = await cli('fence', 'carry', SUBSCRIBER, '--from-table', stagingInbox.inboxTableName, '--table', replaced.inboxTableName, '--from-subscriber-output', stagingOutput, '--subscriber-output', output(replaced), '--yes', '--json');
    const shown = JSON.parse((await cli('fence', 'show', SUBSCRIBER, aggregateId, '--table', replaced.inboxTableName, '--json')).stdout) as { appliedSequence: number };
    // refused (exit 3): staging's output names another outbox table; nothing of staging's fences carried
    expect(carried.code).toBe(3);
    expect(carried.stderr).toContain('--from-subscriber-output is of another flow than --subscriber-output');
    expect(shown.appliedSequence).toBe(0);
  });

  test('one event recorded in both inboxes (replayed into the other flow) proves carrying all of the other flow\'s fences', async () => {
    const aggregateId = id('shared-event');
    const mine = await emit(aggregateId, 'opened');
    await consumer(original, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(mine))] });
    // the restored table holds this aggregate's items only (its fence and the record of E): E is all it has in common
    const restored = await restoredInbox(await itemsOf(original.inboxTableName, aggregateId, mine.id));
    expect((await items(restored.inboxTableName)).length).toBeGreaterThanOrEqual(2);
    const otherInbox = await createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 });
    const otherOutbox = await createOutbox(client, { eventSource: 'other', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });
    // the other flow got a copy of this flow's event once (a replay into a shadow environment) on another aggregate
    const copy = { ...mine, partitionkey: `${aggregateId}-shadow` };
    await consumer(otherInbox, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(copy))] });
    for (let n = 0; n < 4; n++) {
      const [other] = await new OrderedOutbox({ client, config: otherOutbox, now: aMinuteAgo }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: `${aggregateId}-other`, data: { step: `other ${n}` } }] });
      await consumer(otherInbox, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(other))] });
    }
    const carried = await cli('fence', 'carry', SUBSCRIBER, '--from-table', otherInbox.inboxTableName, '--table', restored.inboxTableName, '--yes', '--json');
    const shown = JSON.parse((await cli('fence', 'show', SUBSCRIBER, aggregateId, '--table', restored.inboxTableName, '--json')).stdout) as { appliedSequence: number };
    expect(carried.code).toBe(3);
    expect(carried.stderr).toContain(carrySourceRefusalStart(otherInbox.inboxTableName, restored.inboxTableName));
    expect(shown.appliedSequence).toBe(1);
  });

  test('a shadow environment that recorded the one replayed event at the same aggregate and sequence, when the restored table holds only that record, proves nothing of the fences it would carry forward', async () => {
    const aggregateId = id('shadow');
    const mine = await emit(aggregateId, 'opened');
    await consumer(original, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(mine))] });
    // this flow commits more of the aggregate (its head passes what the shadow applied)
    for (const step of ['credited', 'debited', 'credited again', 'closed']) await emit(aggregateId, step);
    // the restored table holds this aggregate's items only: the fence at 1 and the record of E
    const restored = await restoredInbox(await itemsOf(original.inboxTableName, aggregateId, mine.id));
    // the shadow: E replayed into it at the same aggregate and sequence, then its own #2..#4 of the aggregate applied
    const shadowInbox = await createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 });
    const shadowOutbox = await createOutbox(client, { eventSource: 'shadow', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });
    const shadowEvents: OrderedEnvelope[] = [];
    for (let n = 0; n < 4; n++) {
      const [other] = await new OrderedOutbox({ client, config: shadowOutbox, now: aMinuteAgo }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: `${aggregateId}-shadow`, data: { step: `shadow ${n}` } }] });
      shadowEvents.push(other!);
    }
    await consumer(shadowInbox, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(mine))] });
    for (const other of shadowEvents.slice(1)) await consumer(shadowInbox, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(other))] });
    expect(JSON.parse((await cli('fence', 'show', SUBSCRIBER, aggregateId, '--table', shadowInbox.inboxTableName, '--json')).stdout)).toMatchObject({ appliedSequence: 4 });

    const carried = await cli('fence', 'carry', SUBSCRIBER, '--from-table', shadowInbox.inboxTableName, '--table', restored.inboxTableName, '--subscriber-output', output(restored), '--yes', '--json');
    const shown = JSON.parse((await cli('fence', 'show', SUBSCRIBER, aggregateId, '--table', restored.inboxTableName, '--json')).stdout) as { appliedSequence: number };
    expect(carried.code).toBe(3);
    expect(carried.stderr).toContain(carrySourceRefusalStart(shadowInbox.inboxTableName, restored.inboxTableName));
    expect(carried.stderr).toContain(`the fence of ${aggregateId} there stands at 4 on event ${shadowEvents[3]!.id}, which outbox table '${outbox.outboxTableName}' does not hold at that sequence`);
    expect(shown.appliedSequence).toBe(1);
  });

  test('with no fence further to carry, the records still prove the table: every one held there at the same aggregate and sequence', async () => {
    const aggregateId = id('records-only');
    const mine = await emit(aggregateId, 'opened');
    await consumer(original, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(mine))] });
    const restored = await restoredInbox(await itemsOf(original.inboxTableName, aggregateId, mine.id));
    const record = (await items(original.inboxTableName)).find((item) => String(item[TABLE_SCHEMA.PARTITION_KEY]).endsWith(mine.id))!;
    // other tables without a fence: one lacks the record, one holds it at another aggregate and sequence
    const lacking = await restoredInbox([]);
    const elsewhere = await restoredInbox([{ ...record, [ORDERED_INBOX_ITEM.AGGREGATE_ATTRIBUTE]: `${aggregateId}-elsewhere`, [ORDERED_INBOX_ITEM.SEQUENCE_ATTRIBUTE]: 7 }]);
    for (const other of [lacking, elsewhere]) {
      const carried = await cli('fence', 'carry', SUBSCRIBER, '--from-table', other.inboxTableName, '--table', restored.inboxTableName, '--outbox-table', outbox.outboxTableName, '--json');
      expect(carried.code).toBe(3);
      expect(carried.stderr).toContain(`event ${mine.id}, recorded by this subscriber in '${restored.inboxTableName}', is not recorded there at the same aggregate and sequence`);
    }
  });

  test("RO14-5: DynamoDB's restore summary proves the table carried from by its whole ARN, not by its name (a same-named table of another Region or account)", async () => {
    const aggregateId = id('summary');
    await consumer(original, aMinuteAgo)({ Records: [sqsRecord(JSON.stringify(await emit(aggregateId, 'opened')))] });
    const restored = await restoredInbox([]);
    const localArn = (await client.send(new DescribeTableCommand({ TableName: original.inboxTableName }))).Table!.TableArn!;
    const elsewhere = `arn:aws:dynamodb:eu-west-1:111111111111:table/${original.inboxTableName}`;
    const carry = (sourceArn: string) =>
      cliAt({ clock, endpoint }, { restoredFrom: (table) => (table === restored.inboxTableName ? sourceArn : undefined) }, 'fence', 'carry', SUBSCRIBER, '--from-table', original.inboxTableName, '--table', restored.inboxTableName, '--json');
    // restored from the table of that name in another Region and account: this one proves nothing
    const refused = await carry(elsewhere);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`was restored from ${elsewhere} (DynamoDB's restore summary), not from '${original.inboxTableName}' (${localArn})`);
    // restored from this very table
    const proven = await carry(localArn);
    expect(proven.code).toBe(0);
    expect(JSON.parse(proven.stdout)).toMatchObject({ dryRun: true, source: `DynamoDB says '${restored.inboxTableName}' was restored from it (${localArn})` });
  });
});
