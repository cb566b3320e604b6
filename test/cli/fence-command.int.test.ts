/**
 * `idempotent-event-flow fence`, and `dlq redrive` and `replay` of an ordered subscriber: its fences and the
 * fence-respecting redrive and replay, against the
 * simulator's SQS (FIFO queues behind its endpoint, the real @aws-sdk/client-sqs) and DynamoDB Local. No mocks.
 */
import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { deduplicationWindowKey } from '../../lambda/contract/ordered-wire-format';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { localClient } from '../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../support/proof/tables';
import { ledgerSteps, stepLedgerConsumer } from '../support/step-ledger';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { CLOCK_BUFFER_BYTES, VirtualClock } from '../../simulator/aws/clock';
import { replayNeedsOutputLine } from '../../operator/cli/replay-needs-output';
import { PAST_RETENTION_TEXT } from '../../operator/cli/replay-command';
import { OUTBOX_TTL_UNKNOWN_TEXT } from '../../operator/cli/outbox-ttl-attribute';
import { cli, cliAt, deliverOnce } from './operator-services';

const SUBSCRIBER = 'Ledger';
const client = localClient();
/**
 * The operator commands' clock, frozen an hour past this file's start: the tables are made after it starts, and a fence
 * a command writes (a skip) before its table was made is the sign of a restored, uncarried inbox that `fence list` names
 * (a frozen 2023 clock made every later list of the shared table read as restored).
 */
const clock = frozenClock(Date.now() + 3_600_000);
let endpoint: SqsEndpoint;
let queue: SimulatedQueue;
let deadLetterQueue: SimulatedQueue;
let outboxConfig: ProducerConfig;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;

const byUrl = new Map<string, SimulatedQueue>();
const byArn = new Map<string, SimulatedQueue>();

/** A FIFO queue `<name>.fifo` and its FIFO dead-letter queue (3 receives), on the endpoint. */
function fifoQueues(name: string): { queue: SimulatedQueue; deadLetterQueue: SimulatedQueue } {
  const dlq = makeQueue(queueModel(`${name}Dlq.fifo`, { fifo: true, queueName: `${name}Dlq.fifo` }), { clock, baseUrl: endpoint.endpoint });
  const main = makeQueue(queueModel(`${name}.fifo`, { fifo: true, queueName: `${name}.fifo`, redrive: { deadLetterQueue: `Stack/${name}Dlq.fifo`, maxReceiveCount: 3 } }), {
    clock,
    baseUrl: endpoint.endpoint,
    deadLetterQueue: dlq,
  });
  for (const each of [main, dlq]) {
    byUrl.set(each.address.url, each);
    byArn.set(each.address.arn, each);
  }
  return { queue: main, deadLetterQueue: dlq };
}

beforeAll(async () => {
  endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url), resolveQueueArn: (arn) => byArn.get(arn) });
  ({ queue, deadLetterQueue } = fifoQueues('Ledger'));
  [outboxConfig, inboxConfig, ledgerTable] = await Promise.all([
    createOutbox(client, { eventSource: 'orders' }),
    createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }),
    createKeyedTable(client, 'fence-ledger'),
  ]);
});
afterAll(async () => {
  client.destroy();
  await endpoint.stop();
});

const consumer = () => stepLedgerConsumer(client, inboxConfig, ledgerTable);

const ledger = (aggregateId: string): Promise<string[]> => ledgerSteps(client, ledgerTable, aggregateId);

function deadLetter(envelope: OrderedEnvelope, into: SimulatedQueue = deadLetterQueue): void {
  into.send({ body: JSON.stringify(envelope), messageGroupId: envelope.partitionkey, messageDeduplicationId: `${envelope.id}-dl`, origin: { via: 'sns' } });
}

/** `steps` events of a new aggregate, written by the ordered producer. */
async function produce(aggregate: string, steps: readonly string[]): Promise<OrderedEnvelope[]> {
  const producer = new OrderedOutbox({ client, config: outboxConfig });
  const events: OrderedEnvelope[] = [];
  for (const step of steps) events.push((await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step } }] }))[0]!);
  return events;
}

/** The `<subscriber>/Operator` output an OrderedSubscriber writes, with these queues' and tables' names. */
function orderedOutput(queues: { queue: SimulatedQueue; deadLetterQueue: SimulatedQueue }): string {
  return JSON.stringify({
    format: 1,
    subscriberName: SUBSCRIBER,
    processingMode: 'transactional',
    ordered: true,
    deduplicationWindowSeconds: 3600,
    outboxTable: outboxConfig.outboxTableName,
    inboxTable: inboxConfig.inboxTableName,
    queueUrl: queues.queue.address.url,
    deadLetterQueueUrl: queues.deadLetterQueue.address.url,
  });
}

describe('fence', () => {
  test('redrive sends the dead letters back by sequence, leaves what the fence shows applied, and the consumer applies them in order; show and skip', async () => {
    const aggregate = `order-${Date.now()}`;
    const producer = new OrderedOutbox({ client, config: outboxConfig });
    const events: OrderedEnvelope[] = [];
    for (const step of ['placed', 'paid', 'shipped']) {
      events.push((await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step } }] }))[0]!);
    }
    await consumer()({ Records: [{ messageId: 'm1', body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1' } }] });
    // the dead-letter queue holds the later events out of order, and a copy of the applied one
    deadLetter(events[2]!);
    deadLetter(events[1]!);
    deadLetter(events[0]!);
    const common = ['--table', inboxConfig.inboxTableName, '--dead-letter-queue', deadLetterQueue.address.url, '--queue', queue.address.url];

    const dryRun = await cli({ clock, endpoint }, 'fence', 'redrive', SUBSCRIBER, ...common, '--json');
    expect(dryRun.code).toBe(0);
    const plan = JSON.parse(dryRun.stdout) as { redrive: Array<{ sequence: number }>; alreadyApplied: Array<{ sequence: number }>; gaps: object };
    expect(plan.redrive.map((letter) => letter.sequence)).toEqual([2, 3]);
    expect(plan.alreadyApplied.map((letter) => letter.sequence)).toEqual([1]);
    expect(plan.gaps).toEqual({});

    const done = await cli({ clock, endpoint }, 'fence', 'redrive', SUBSCRIBER, ...common, '--yes');
    expect(done.code).toBe(0);
    expect(done.stdout).toContain('redrove 2');
    while ((await deliverOnce(queue, consumer())) > 0);
    expect(await ledger(aggregate)).toEqual(['placed', 'paid', 'shipped']);

    const shown = await cli({ clock, endpoint }, 'fence', 'show', SUBSCRIBER, aggregate, '--table', inboxConfig.inboxTableName, '--json');
    expect(JSON.parse(shown.stdout)).toMatchObject({ appliedSequence: 3, appliedEventId: events[2]!.id });

    // two more events committed, then lost (say): the skip may pass them, as the outbox committed them
    for (const step of ['refunded', 'closed']) events.push((await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step } }] }))[0]!);
    const skipArgs = ['fence', 'skip', SUBSCRIBER, aggregate, '--table', inboxConfig.inboxTableName, '--outbox-table', outboxConfig.outboxTableName, '--dead-letter-queue', deadLetterQueue.address.url, '--queue', queue.address.url, '--from', '3', '--to', '5', '--reason', 'events 4 and 5 lost past every retention'];
    expect((await cli({ clock, endpoint }, ...skipArgs)).stdout).toContain('dry run');
    const skipped = await cli({ clock, endpoint }, ...skipArgs, '--yes');
    expect(skipped.code).toBe(0);
    expect(skipped.stderr).toContain('"audit":"fence-skip"');
    const again = await cli({ clock, endpoint }, ...skipArgs, '--yes');
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('no longer at 3');
  });

  test('skip (issue 38, item 3): refused past what the outbox committed for the aggregate, names what it drops by event id, refused when the head can not be read', async () => {
    const aggregate = `order-${Date.now()}-skip`;
    const events = await produce(aggregate, ['placed', 'paid', 'shipped', 'delivered']);
    await consumer()({ Records: [{ messageId: 's1', body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1' } }] });
    const skip = (to: string, ...more: string[]) =>
      cli({ clock, endpoint }, 'fence', 'skip', SUBSCRIBER, aggregate, '--table', inboxConfig.inboxTableName, '--outbox-table', outboxConfig.outboxTableName, '--dead-letter-queue', deadLetterQueue.address.url, '--queue', queue.address.url, '--from', '1', '--to', to, '--reason', 'lost', ...more);

    // past the head: events 5.. are not written yet; skipped, they would be answered as duplicates when they are
    const past = await skip('5', '--yes');
    expect(past.code).toBe(3);
    expect(past.stderr).toContain(`refused: --to 5 is past the last sequence the outbox committed for ${aggregate} (4)`);
    expect(JSON.parse((await cli({ clock, endpoint }, 'fence', 'show', SUBSCRIBER, aggregate, '--table', inboxConfig.inboxTableName, '--json')).stdout)).toMatchObject({ appliedSequence: 1 });

    // what the skip drops, by event id (an expired history item is named by its sequence)
    await DynamoDBDocumentClient.from(client).send(new DeleteCommand({ TableName: outboxConfig.outboxTableName, Key: historyKey(events[1]!.id) }));
    const dryRun = await skip('3', '--json');
    expect(dryRun.code).toBe(0);
    expect(JSON.parse(dryRun.stdout)).toEqual({
      dryRun: true, aggregateId: aggregate, from: 1, to: 3, committedSequence: 4,
      drops: [{ sequence: 2 }, { sequence: 3, eventId: events[2]!.id, type: 'Step' }],
    });
    const text = await skip('3');
    expect(text.stdout).toContain(`#2 (no history item: past the outbox's event retention, or never written)`);
    expect(text.stdout).toContain(`#3 ${events[2]!.id} (Step)`);
    const done = await skip('3', '--yes');
    expect(done.code).toBe(0);
    expect(done.stderr).toContain(`"dropped":[{"sequence":2},{"sequence":3,"eventId":"${events[2]!.id}","type":"Step"}]`);
    await consumer()({ Records: [{ messageId: 's4', body: JSON.stringify(events[3]), attributes: { ApproximateReceiveCount: '1' } }] });
    expect(await ledger(aggregate)).toEqual(['placed', 'delivered']);

    // no head to check against: needs the outbox, refuses what it can not read, refuses an aggregate the outbox never had
    const base = ['fence', 'skip', SUBSCRIBER, aggregate, '--table', inboxConfig.inboxTableName, '--dead-letter-queue', deadLetterQueue.address.url, '--queue', queue.address.url, '--from', '4', '--to', '5', '--reason', 'lost', '--yes'];
    expect(await cli({ clock, endpoint }, ...base)).toMatchObject({ code: 2, stderr: expect.stringContaining("'fence skip' needs --outbox-table") });
    expect(await cli({ clock, endpoint }, ...base, '--outbox-table', 'no-such-outbox-table')).toMatchObject({
      code: 3,
      stderr: expect.stringMatching(/refused: could not read the head of .* in outbox table 'no-such-outbox-table' \(ResourceNotFoundException/),
    });
    const never = await cli({ clock, endpoint }, 'fence', 'skip', SUBSCRIBER, `${aggregate}-never`, '--table', inboxConfig.inboxTableName, '--outbox-table', outboxConfig.outboxTableName, '--dead-letter-queue', deadLetterQueue.address.url, '--queue', queue.address.url, '--from', '0', '--to', '1', '--reason', 'lost', '--yes');
    expect(never).toMatchObject({ code: 3, stderr: expect.stringContaining('has no head item in outbox table') });
  });

  test('redrive names a gap no dead letter holds, and refuses (exit code 3) after sending what it may', async () => {
    const aggregate = `order-${Date.now()}-gap`;
    const producer = new OrderedOutbox({ client, config: outboxConfig });
    const events: OrderedEnvelope[] = [];
    for (const step of ['placed', 'paid', 'shipped']) {
      events.push((await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step } }] }))[0]!);
    }
    deadLetter(events[2]!);
    const result = await cli({ clock, endpoint }, 'fence', 'redrive', SUBSCRIBER, '--table', inboxConfig.inboxTableName, '--dead-letter-queue', deadLetterQueue.address.url, '--queue', queue.address.url);
    expect(result.code).toBe(0); // a dry run
    expect(result.stdout).toMatch(new RegExp(`gap +${aggregate}: no dead letter holds 1, 2`));
  });

  test('replay sends the events after the fence from the outbox history, in sequence, and the consumer applies them; a history that misses a sequence is refused', async () => {
    const aggregate = `order-${Date.now()}-replay`;
    const producer = new OrderedOutbox({ client, config: outboxConfig });
    const events: OrderedEnvelope[] = [];
    for (const step of ['placed', 'paid', 'shipped']) {
      events.push((await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step } }] }))[0]!);
    }
    await consumer()({ Records: [{ messageId: 'r1', body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1' } }] });
    const args = ['fence', 'replay', SUBSCRIBER, aggregate, '--table', inboxConfig.inboxTableName, '--outbox-table', outboxConfig.outboxTableName, '--queue', queue.address.url];
    const dryRun = await cli({ clock, endpoint }, ...args, '--json');
    expect(JSON.parse(dryRun.stdout)).toMatchObject({ dryRun: true, fenceAt: 1, sequences: [2, 3] });
    // sending needs the subscriber's Operator output (only it ties the queue to the subscriber)
    const typed = await cli({ clock, endpoint }, ...args, '--yes');
    expect(typed.code).toBe(2);
    expect(typed.stderr).toContain(replayNeedsOutputLine('fence replay'));
    expect(queue.counts().visible).toBe(0);
    const sent = await cli({ clock, endpoint }, 'fence', 'replay', SUBSCRIBER, aggregate, '--subscriber-output', orderedOutput({ queue, deadLetterQueue }), '--yes');
    expect(sent.code).toBe(0);
    while ((await deliverOnce(queue, consumer())) > 0);
    expect(await ledger(aggregate)).toEqual(['placed', 'paid', 'shipped']);
    // an aggregate whose history starts after its fence: the missing sequence is named, nothing is sent
    const other = `order-${Date.now()}-expired`;
    await producer.transactWrite({ events: [{ type: 'Step', aggregateId: other, subject: other, data: { step: 'placed' } }] });
    await producer.transactWrite({ events: [{ type: 'Step', aggregateId: other, subject: other, data: { step: 'paid' } }] });
    await DynamoDBDocumentClient.from(client).send(new DeleteCommand({ TableName: outboxConfig.outboxTableName, Key: historyKey(await firstHistoryId(other)) }));
    // (a fence that applied nothing: only the subscriber's Operator output proves the outbox table its own)
    const refused = await cli({ clock, endpoint }, 'fence', 'replay', SUBSCRIBER, other, '--subscriber-output', orderedOutput({ queue, deadLetterQueue }), '--yes');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('has no sequence 1');
  });

  test('replay (review rx15, RX15-1) does not send history items past their TTL (DynamoDB has not deleted them yet): refused naming them, nothing sent', async () => {
    const aggregate = `order-${Date.now()}-ttl`;
    const events = await produce(aggregate, ['placed', 'paid', 'shipped']);
    await consumer()({ Records: [{ messageId: 't1', body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1' } }] });
    // every history item's TTL has passed (1: in 1970), as the outbox's retention ends
    for (const event of events) {
      await DynamoDBDocumentClient.from(client).send(
        new UpdateCommand({ TableName: outboxConfig.outboxTableName, Key: historyKey(event.id), UpdateExpression: 'SET expiresAt = :past', ExpressionAttributeValues: { ':past': 1 } }),
      );
    }
    const visibleBefore = queue.counts().visible;
    const dryRun = await cli({ clock, endpoint }, 'fence', 'replay', SUBSCRIBER, aggregate, '--subscriber-output', orderedOutput({ queue, deadLetterQueue }), '--json');
    expect(dryRun.code).toBe(3);
    const sent = await cli({ clock, endpoint }, 'fence', 'replay', SUBSCRIBER, aggregate, '--subscriber-output', orderedOutput({ queue, deadLetterQueue }), '--yes');
    expect(sent.code).toBe(3);
    expect(sent.stderr).toContain(PAST_RETENTION_TEXT);
    for (const event of events.slice(1)) expect(sent.stderr).toContain(event.id);
    expect(sent.stderr).not.toContain(events[0]!.id);
    expect(queue.counts().visible).toBe(visibleBefore);
  });

  test('replay (review ro15b, RO15B-1) from a restored outbox table (its TTL off) does not guess the TTL attribute: refused without --outbox-ttl-attribute; with it, items past their ttl are refused by name', async () => {
    const aggregate = `order-${Date.now()}-ttl-restored`;
    const events = await produce(aggregate, ['placed', 'paid', 'shipped']);
    await consumer()({ Records: [{ messageId: 'tr1', body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1' } }] });
    // a user's outbox table whose items expire under `ttl`, restored: DynamoDB restores no TTL setting
    for (const event of events) {
      await DynamoDBDocumentClient.from(client).send(
        new UpdateCommand({ TableName: outboxConfig.outboxTableName, Key: historyKey(event.id), UpdateExpression: 'SET #ttl = :past REMOVE expiresAt', ExpressionAttributeNames: { '#ttl': 'ttl' }, ExpressionAttributeValues: { ':past': 1 } }),
      );
    }
    const source = 'arn:aws:dynamodb:us-east-1:111122223333:table/orders-outbox';
    const restored = { restoredFrom: (table: string) => (table === outboxConfig.outboxTableName ? source : undefined) };
    const visibleBefore = queue.counts().visible;
    const args = ['fence', 'replay', SUBSCRIBER, aggregate, '--subscriber-output', orderedOutput({ queue, deadLetterQueue }), '--yes'];
    const guessed = await cliAt({ clock, endpoint }, restored, ...args);
    expect(guessed.code).toBe(3);
    expect(guessed.stderr).toContain(`refused: outbox table '${outboxConfig.outboxTableName}' was restored (from ${source}) and its TTL is off`);
    expect(queue.counts().visible).toBe(visibleBefore);
    const named = await cliAt({ clock, endpoint }, restored, ...args, '--outbox-ttl-attribute', 'ttl');
    expect(named.code).toBe(3);
    expect(named.stderr).toContain(PAST_RETENTION_TEXT);
    for (const event of events.slice(1)) expect(named.stderr).toContain(event.id);
    expect(queue.counts().visible).toBe(visibleBefore);
  });

  test('replay with DescribeTimeToLive denied and nothing naming the TTL attribute: refused naming the permission and --outbox-ttl-attribute, nothing sent; with the flag, sent', async () => {
    const aggregate = `order-${Date.now()}-ttl-denied`;
    const events = await produce(aggregate, ['placed', 'paid', 'shipped']);
    await consumer()({ Records: [{ messageId: 'td1', body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1' } }] });
    // an operator whose role may read the outbox's items but not its TTL (a role granted before grantOperator gave it)
    const denied = { deniedDynamoDbCommands: ['DescribeTimeToLiveCommand'] };
    const visibleBefore = queue.counts().visible;
    const args = ['fence', 'replay', SUBSCRIBER, aggregate, '--subscriber-output', orderedOutput({ queue, deadLetterQueue }), '--yes'];
    const refused = await cliAt({ clock, endpoint }, denied, ...args);
    expect({ code: refused.code, stdout: refused.stdout }).toEqual({ code: 3, stdout: '' });
    expect(refused.stderr).toContain(`refused: ${OUTBOX_TTL_UNKNOWN_TEXT} ${outboxConfig.outboxTableName} could not be read (DescribeTimeToLive: AccessDeniedException:`);
    expect(refused.stderr).toContain('Give --outbox-ttl-attribute');
    expect(refused.stderr).toContain('grant dynamodb:DescribeTimeToLive on the table');
    expect(refused.stderr).toContain('nothing was sent');
    expect(queue.counts().visible).toBe(visibleBefore);
    // the dry run says the same: it would read the history under an attribute it does not know
    expect((await cliAt({ clock, endpoint }, denied, ...args.filter((arg) => arg !== '--yes'))).code).toBe(3);
    // the way out: the attribute named, the events after the fence are sent and applied
    const named = await cliAt({ clock, endpoint }, denied, ...args, '--outbox-ttl-attribute', 'expiresAt');
    expect(named.code, named.stderr).toBe(0);
    while ((await deliverOnce(queue, consumer())) > 0);
    expect(await ledger(aggregate)).toEqual(['placed', 'paid', 'shipped']);
  });

  test('replay to the ordered subscriber (review rx15, RX15-5) names history items past their TTL apart, as pastRetention with when they expired, not as missing; exit 3, nothing sent', async () => {
    const aggregate = `order-${Date.now()}-ttl-replay`;
    const events = await produce(aggregate, ['placed', 'paid']);
    for (const event of events) {
      await DynamoDBDocumentClient.from(client).send(
        new UpdateCommand({ TableName: outboxConfig.outboxTableName, Key: historyKey(event.id), UpdateExpression: 'SET expiresAt = :past', ExpressionAttributeValues: { ':past': 1 } }),
      );
    }
    const visibleBefore = queue.counts().visible;
    const result = await cli({ clock, endpoint }, 'replay', '--subscriber-output', orderedOutput({ queue, deadLetterQueue }), ...events.flatMap((event) => ['--event-id', event.id]), '--event-id', 'never-written', '--yes', '--json');
    expect(result.code).toBe(3);
    const output = JSON.parse(result.stdout) as { missing: string[]; pastRetention: Array<{ eventId: string; expiredAt: string }> };
    expect(output.missing).toEqual(['never-written']);
    expect(output.pastRetention).toEqual(events.map((event) => ({ eventId: event.id, expiredAt: new Date(1000).toISOString() })));
    expect(queue.counts().visible).toBe(visibleBefore);
    const text = await cli({ clock, endpoint }, 'replay', '--subscriber-output', orderedOutput({ queue, deadLetterQueue }), ...events.flatMap((event) => ['--event-id', event.id]));
    expect(text.code).toBe(3);
    expect(text.stdout).toContain(`${PAST_RETENTION_TEXT}: ${events.map((event) => event.id).join(' ')}`);
  });
});

describe('dlq redrive and replay of an ordered subscriber (issue 33): in sequence, as the fences admit, never past a gap', () => {
  test('dlq redrive sends what the fences admit now in sequence with the aggregate as the group, leaves what waits behind a gap and what is applied, and names the tools', async () => {
    const queues = fifoQueues('LedgerRedrive');
    const ready = `order-${Date.now()}-ready`;
    const blocked = `order-${Date.now()}-blocked`;
    const readyEvents = await produce(ready, ['placed', 'paid', 'shipped']);
    const blockedEvents = await produce(blocked, ['placed', 'paid', 'shipped']);
    await consumer()({ Records: [{ messageId: 'd1', body: JSON.stringify(readyEvents[0]), attributes: { ApproximateReceiveCount: '1' } }] });
    // out of order, with a copy of the applied event; the other aggregate holds only its third event (1 and 2 lost)
    for (const envelope of [readyEvents[2]!, readyEvents[1]!, readyEvents[0]!, blockedEvents[2]!]) deadLetter(envelope, queues.deadLetterQueue);
    const args = ['dlq', 'redrive', '--subscriber-output', orderedOutput(queues)];

    const dryRun = await cli({ clock, endpoint }, ...args, '--json');
    expect(dryRun.stderr).toBe('');
    const plan = JSON.parse(dryRun.stdout) as { dryRun: boolean; ordered: boolean; decisions: Array<{ aggregateId: string; sequence: number; decision: string; why?: string }>; gaps: object };
    expect(plan).toMatchObject({ dryRun: true, ordered: true, gaps: { [blocked]: [1, 2] } });
    expect(plan.decisions.map((item) => `${item.aggregateId === ready ? 'ready' : 'blocked'} #${item.sequence} ${item.decision}`)).toEqual([
      'ready #2 send',
      'ready #3 send',
      'blocked #3 waiting',
      'ready #1 applied',
    ]);
    expect(plan.decisions[2]!.why).toMatch(/waits for sequence 1, 2 of .*'fence replay'.*'fence skip'/);
    expect(queues.deadLetterQueue.counts().visible).toBe(4);

    const done = await cli({ clock, endpoint }, ...args, '--yes');
    expect(done.code).toBe(3); // a dead letter waits behind a gap
    expect(done.stdout).toContain('redrove 2 to');
    expect(done.stdout).toContain(`gap: ${blocked}: no dead letter holds 1, 2`);
    // sent with the aggregate as the message group, in sequence
    const sent = queues.queue.receive(10);
    expect(sent.map((message) => [message.attributes.MessageGroupId, JSON.parse(message.body).sequence])).toEqual([
      [ready, readyEvents[1]!.sequence],
      [ready, readyEvents[2]!.sequence],
    ]);
    for (const message of sent) queues.queue.changeVisibility(message.receiptHandle, 0);
    while ((await deliverOnce(queues.queue, consumer())) > 0);
    expect(await ledger(ready)).toEqual(['placed', 'paid', 'shipped']);
    expect(await ledger(blocked)).toEqual([]);
    // left in the dead-letter queue: the one behind the gap; the applied copy (a proven duplicate) is deleted
    expect(queues.deadLetterQueue.counts().visible).toBe(1);

    // without the output, a FIFO --queue says ordered: the fences' table is required, and the same plan is made
    const flags = ['dlq', 'redrive', '--queue', queues.queue.address.url, '--dead-letter-queue', queues.deadLetterQueue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional', '--deduplication-window', '1h'];
    const noTable = await cli({ clock, endpoint }, ...flags);
    expect(noTable.code).toBe(2);
    expect(noTable.stderr).toContain('needs --table (its inbox table, where its sequence fences are)');
    const byFlags = JSON.parse((await cli({ clock, endpoint }, ...flags, '--table', inboxConfig.inboxTableName, '--json')).stdout) as { decisions: Array<{ decision: string }> };
    expect(byFlags.decisions.map((item) => item.decision)).toEqual(['waiting']);
    const replayFlags = ['replay', '--table', outboxConfig.outboxTableName, '--queue', queues.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional', '--deduplication-window', '1h', '--event-id', readyEvents[0]!.id];
    expect((await cli({ clock, endpoint }, ...replayFlags)).stderr).toContain('needs --inbox-table');
    expect(JSON.parse((await cli({ clock, endpoint }, ...replayFlags, '--inbox-table', inboxConfig.inboxTableName, '--json')).stdout)).toMatchObject({ events: [{ sequence: 1, decision: 'applied' }] });
  });

  test('replay reads the history, says the events at or below the fence are duplicates (not replayed), sends the rest in sequence with group ids, and sends nothing behind a missing sequence', async () => {
    const queues = fifoQueues('LedgerReplay');
    const aggregate = `order-${Date.now()}-replayed`;
    const events = await produce(aggregate, ['placed', 'paid', 'shipped']);
    await consumer()({ Records: [{ messageId: 'p1', body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1' } }] });
    const output = orderedOutput(queues);
    // only the third: the second is not among those replayed, so the third would wait: not sent
    const partial = await cli({ clock, endpoint }, 'replay', '--subscriber-output', output, '--event-id', events[2]!.id, '--yes');
    expect(partial.code).toBe(3);
    expect(partial.stdout).toContain(`gap: ${aggregate}: no replayed event holds 2`);
    expect(partial.stdout).toContain('sent 0 to');
    expect(queues.queue.counts().visible).toBe(0);

    const all = ['replay', '--subscriber-output', output, ...events.flatMap((event) => ['--event-id', event.id])];
    const dryRun = await cli({ clock, endpoint }, ...all, '--json');
    expect(dryRun.code).toBe(0);
    const planned = JSON.parse(dryRun.stdout) as { ordered: boolean; events: Array<{ sequence: number; decision: string }> };
    expect(planned.events.map((event) => `#${event.sequence} ${event.decision}`)).toEqual(['#2 send', '#3 send', '#1 applied']);
    const sent = await cli({ clock, endpoint }, ...all, '--yes');
    expect(sent.code).toBe(0);
    expect(sent.stdout).toContain('sent 2 to');
    expect(sent.stdout).toContain('1 at or below the fence are duplicates by design, not sent');
    const messages = queues.queue.receive(10);
    // the deduplication id: the event id with one of this run (a replay run again within 5 minutes is not dropped)
    expect(messages.map((message) => [message.attributes.MessageGroupId, message.attributes.MessageDeduplicationId])).toEqual([
      [aggregate, expect.stringMatching(new RegExp(`^replayed-[0-9a-f]{32}-${events[1]!.id}$`))],
      [aggregate, expect.stringMatching(new RegExp(`^replayed-[0-9a-f]{32}-${events[2]!.id}$`))],
    ]);
    const runOf = (id: string | undefined): string | undefined => id?.split('-')[1];
    expect(runOf(messages[0]!.attributes.MessageDeduplicationId)).toBe(runOf(messages[1]!.attributes.MessageDeduplicationId));
    for (const message of messages) queues.queue.changeVisibility(message.receiptHandle, 0);
    while ((await deliverOnce(queues.queue, consumer())) > 0);
    expect(await ledger(aggregate)).toEqual(['placed', 'paid', 'shipped']);
  });
});

describe('replay of an ordered subscriber, past the deduplication window (review r8b, R8b-10)', () => {
  test('an event applied longer ago than the window (its inbox record expired) is not called never applied: unproven, refused with why (exit code 3); within the window it is a duplicate', async () => {
    const queues = fifoQueues('LedgerAged');
    const aggregate = `order-${Date.now()}-aged`;
    const events = await produce(aggregate, ['placed', 'paid']);
    for (const [index, event] of events.entries()) await consumer()({ Records: [{ messageId: `a${index}`, body: JSON.stringify(event), attributes: { ApproximateReceiveCount: '1' } }] });
    const output = orderedOutput(queues);
    const args = ['replay', '--subscriber-output', output, ...events.flatMap((event) => ['--event-id', event.id])];
    // the operator's clock: within the window (one minute on), then past it (the window is 3600 s)
    const within = new VirtualClock(new SharedArrayBuffer(CLOCK_BUFFER_BYTES), () => Date.now() + 60_000);
    const past = new VirtualClock(new SharedArrayBuffer(CLOCK_BUFFER_BYTES), () => Date.now() + 4_000_000);
    const young = await cli({ clock: within, endpoint }, ...args, '--json');
    expect(young.code).toBe(0);
    expect((JSON.parse(young.stdout) as { events: Array<{ sequence: number; decision: string }> }).events.map((event) => `#${event.sequence} ${event.decision}`)).toEqual(['#1 applied', '#2 applied']);

    const old = await cli({ clock: past, endpoint }, ...args, '--json');
    expect(old.code).toBe(3);
    const decided = (JSON.parse(old.stdout) as { events: Array<{ sequence: number; decision: string; why?: string }> }).events;
    expect(decided.map((event) => `#${event.sequence} ${event.decision}`)).toEqual(['#2 applied', '#1 unproven']);
    expect(decided[1]!.why).toMatch(/older than the subscriber's deduplication window \(3600 s/);
    expect(decided[1]!.why).toContain('Restoring the outbox table');
    const text = await cli({ clock: past, endpoint }, ...args, '--yes');
    expect(text.code).toBe(3);
    expect(text.stdout).toContain('sent 0 to');
    expect(text.stdout).toContain('1 below the fence without an inbox record and not provably never applied');
    expect(queues.queue.counts().visible).toBe(0);
    expect(await ledger(aggregate)).toEqual(['placed', 'paid']);
  });
});

describe('fence list (issue 33): every aggregate an ordered subscriber is held up in', () => {
  test('names the aggregates whose next event is dead-lettered, missing behind a later dead letter, or committed and not applied, with what to do', async () => {
    const queues = fifoQueues('LedgerList');
    const stamp = Date.now();
    const [deadLettered, gap, behind, done] = ['dead-lettered', 'gap', 'behind', 'done'].map((name) => `order-${stamp}-${name}`) as [string, string, string, string];
    const apply = async (envelope: OrderedEnvelope) => consumer()({ Records: [{ messageId: envelope.id, body: JSON.stringify(envelope), attributes: { ApproximateReceiveCount: '1' } }] });
    const first = await produce(deadLettered, ['placed', 'paid']);
    await apply(first[0]!);
    deadLetter(first[1]!, queues.deadLetterQueue);
    deadLetter((await produce(gap, ['placed', 'paid', 'shipped']))[2]!, queues.deadLetterQueue);
    await produce(behind, ['placed', 'paid']);
    for (const envelope of await produce(done, ['placed'])) await apply(envelope);
    const args = ['fence', 'list', SUBSCRIBER, '--table', inboxConfig.inboxTableName, '--dead-letter-queue', queues.deadLetterQueue.address.url, '--outbox-table', outboxConfig.outboxTableName];

    const listed = await cli({ clock, endpoint }, ...args, '--json');
    expect(listed.code).toBe(0);
    const mine = (JSON.parse(listed.stdout) as Array<{ aggregateId: string }>).filter((each) => each.aggregateId.startsWith(`order-${stamp}-`));
    expect(mine).toEqual([
      { aggregateId: behind, appliedSequence: 0, committedSequence: 2, state: 'behind', deadLetterSequences: [], missing: [], action: expect.stringContaining("'fence replay'") },
      { aggregateId: deadLettered, appliedSequence: 1, committedSequence: 2, state: 'dead-lettered', deadLetterSequences: [2], missing: [], action: expect.stringContaining("'dlq redrive'") },
      { aggregateId: gap, appliedSequence: 0, committedSequence: 3, state: 'gap', deadLetterSequences: [3], missing: [1, 2], action: expect.stringMatching(/sequence 1, 2 .*'fence replay'.*'fence skip'/) },
    ]);
    // read without consuming: the dead letters are visible again
    expect(queues.deadLetterQueue.counts().visible).toBe(2);
    const text = await cli({ clock, endpoint }, 'fence', 'list', SUBSCRIBER, '--table', inboxConfig.inboxTableName, '--dead-letter-queue', queues.deadLetterQueue.address.url);
    expect(text.stdout).toMatch(new RegExp(`${gap} +0 +- +gap +3 `));
    expect(text.stdout).not.toContain(behind); // without the outbox, nothing says it committed more
    expect((await cli({ clock, endpoint }, 'fence', 'list', SUBSCRIBER, '--table', inboxConfig.inboxTableName)).code).toBe(2);
  });
});

describe('inbox forget of an ordered subscriber (issue 38, item 4): never a fence, and the truth about what forgetting does', () => {
  test("refuses the fence's own key and any record that is not a dedup record; with the ordered output refuses an inbox record, naming the fence; without it says an ordered subscriber does not apply it again", async () => {
    const queues = fifoQueues('LedgerForget');
    const aggregate = `order-${Date.now()}-forget`;
    const events = await produce(aggregate, ['placed', 'paid']);
    for (const envelope of events) await consumer()({ Records: [{ messageId: envelope.id, body: JSON.stringify(envelope), attributes: { ApproximateReceiveCount: '1' } }] });
    const table = ['--table', inboxConfig.inboxTableName, '--reason', 'restored from a backup'];
    const fenceAt = async () => (JSON.parse((await cli({ clock, endpoint }, 'fence', 'show', SUBSCRIBER, aggregate, '--table', inboxConfig.inboxTableName, '--json')).stdout) as { appliedSequence: number }).appliedSequence;

    // `<name>@sequence <aggregate>` spells the fence's key: refused, the fence stays
    const fence = await cli({ clock, endpoint }, 'inbox', 'forget', `${SUBSCRIBER}@sequence`, aggregate, ...table, '--yes');
    expect(fence.code).toBe(2);
    expect(fence.stderr).toContain(`'${SUBSCRIBER}@sequence' is not a subscriber name`);
    expect(fence.stderr).toContain("'fence skip'");
    expect(await fenceAt()).toBe(2);
    // nor the deduplication window record the consumer wrote ('<name>@window', no event id: no dedup key spells it)
    const windowKey = { pk: deduplicationWindowKey(SUBSCRIBER) };
    expect((await DynamoDBDocumentClient.from(client).send(new GetCommand({ TableName: inboxConfig.inboxTableName, Key: windowKey }))).Item).toBeDefined();
    const window = await cli({ clock, endpoint }, 'inbox', 'forget', deduplicationWindowKey(SUBSCRIBER), 'x', ...table, '--yes');
    expect(window.code).toBe(2);
    expect(window.stderr).toContain("deduplication window record, which 'inbox forget' never deletes");
    expect((await DynamoDBDocumentClient.from(client).send(new GetCommand({ TableName: inboxConfig.inboxTableName, Key: windowKey }))).Item).toBeDefined();

    // a record under a dedup key that is not a dedup record: refused, named
    await DynamoDBDocumentClient.from(client).send(new PutCommand({ TableName: inboxConfig.inboxTableName, Item: { pk: `${SUBSCRIBER}#not-a-record`, recordType: 'SomethingElse.v1' } }));
    expect(await cli({ clock, endpoint }, 'inbox', 'forget', SUBSCRIBER, 'not-a-record', ...table, '--yes')).toMatchObject({ code: 3, stderr: expect.stringContaining('is not an inbox record or a processing record') });

    // with the ordered output: refused, and it says why (the fence answers the next delivery as a duplicate)
    const ordered = await cli({ clock, endpoint }, 'inbox', 'forget', SUBSCRIBER, events[0]!.id, ...table, '--subscriber-output', orderedOutput(queues), '--yes');
    expect(ordered.code).toBe(3);
    expect(ordered.stderr).toMatch(/ordered subscriber.*fence.*duplicate/);
    expect((await DynamoDBDocumentClient.from(client).send(new GetCommand({ TableName: inboxConfig.inboxTableName, Key: { pk: `${SUBSCRIBER}#${events[0]!.id}` } }))).Item).toBeDefined();

    // without it: refused as well, by the record the ordered consumer wrote (review r38, R38-5; rewritten by f38: it
    // used to forget the record and promise a duplicate, while the next delivery became a SequenceReusedError letter)
    const plain = await cli({ clock, endpoint }, 'inbox', 'forget', SUBSCRIBER, events[0]!.id, ...table, '--yes');
    expect(plain.code).toBe(3);
    expect(plain.stderr).toContain('is an ordered subscriber (its inbox record names aggregate');
    await consumer()({ Records: [{ messageId: 'again', body: JSON.stringify(events[0]), attributes: { ApproximateReceiveCount: '1' } }] });
    expect(await ledger(aggregate)).toEqual(['placed', 'paid']);
    expect(await fenceAt()).toBe(2);
  });
});

/** The outbox key of an event's history item. */
function historyKey(eventId: string): Record<string, string> {
  return { pk: `OUTBOX#${eventId}`, sk: `OUTBOX#${eventId}` };
}

/** The id of an aggregate's sequence-1 event, read from its history. */
async function firstHistoryId(aggregateId: string): Promise<string> {
  const items = (await DynamoDBDocumentClient.from(client).send(new ScanCommand({ TableName: outboxConfig.outboxTableName }))).Items ?? [];
  const first = items.find((item) => item.iefAggregateId === aggregateId && item.iefSequence === 1 && item.iefRecordType === 'OrderedOutboxEvent.v1');
  return String(first?.iefEventId);
}