/**
 * `fence replay` and `fence skip` act only on the subscriber's own outbox (review ro12, RO12-2), and follow the history
 * the fence takes when the table holds two generations (RO12-3). Against DynamoDB Local and the simulator's SQS, with
 * the real OrderedOutbox, the ordered consumer, carryOrderedHeads and the CLI.
 */
import { DeleteCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { carryOrderedHeads } from '../../operator/ordered/outbox-heads';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { OUTBOX_PROOF_ADVICE } from '../../operator/cli/fence-outbox-proof';
import { localClient } from '../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../support/proof/tables';
import { ledgerSteps, stepLedgerConsumer } from '../support/step-ledger';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { RecordingDeadLetterPublisher, sqsRecord } from '../lambda/helpers';
import { cli as runCli, deliverOnce } from './operator-services';

const SUBSCRIBER = 'Proof';
const client = localClient();
const documents = DynamoDBDocumentClient.from(client);
const clock = frozenClock();
let endpoint: SqsEndpoint;
let queue: SimulatedQueue;
/** The subscriber's FIFO dead-letter queue (empty: `fence skip` reads it before it moves a fence). */
let deadLetterQueue: SimulatedQueue;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;
let ours: ProducerConfig;
let theirs: ProducerConfig;

const newOutbox = (source = 'orders'): Promise<ProducerConfig> => createOutbox(client, { eventSource: source, timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });

beforeAll(async () => {
  const byUrl = new Map<string, SimulatedQueue>();
  endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url) });
  deadLetterQueue = makeQueue(queueModel('ProofDlq.fifo', { fifo: true, queueName: 'ProofDlq.fifo' }), { clock, baseUrl: endpoint.endpoint });
  queue = makeQueue(queueModel('Proof.fifo', { fifo: true, queueName: 'Proof.fifo', redrive: { deadLetterQueue: 'Stack/ProofDlq.fifo', maxReceiveCount: 3 } }), { clock, baseUrl: endpoint.endpoint, deadLetterQueue });
  for (const each of [queue, deadLetterQueue]) byUrl.set(each.address.url, each);
  [inboxConfig, ledgerTable, ours, theirs] = await Promise.all([
    createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }),
    createKeyedTable(client, 'proof-ledger'),
    newOutbox('orders'),
    newOutbox('returns'),
  ]);
});
afterAll(async () => {
  client.destroy();
  await endpoint.stop();
});

const cli = (...args: string[]) => runCli({ clock, endpoint }, ...args);

function consumer() {
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = stepLedgerConsumer(client, inboxConfig, ledgerTable, { deadLetter });
  return { handler, deadLetter };
}

async function deliver(...envelopes: OrderedEnvelope[]): Promise<void> {
  const { handler } = consumer();
  for (const envelope of envelopes) await handler({ Records: [sqsRecord(JSON.stringify(envelope))] });
}

const ledger = (aggregateId: string): Promise<string[]> => ledgerSteps(client, ledgerTable, aggregateId);

async function emit(config: ProducerConfig, aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

/** Deletes an event's history item, as the outbox's TTL does when its retention passes. */
async function expireHistory(config: ProducerConfig, eventId: string): Promise<void> {
  const key = `${OUTBOX_ITEM.KEY_PREFIX}${eventId}`;
  await documents.send(new DeleteCommand({ TableName: config.outboxTableName, Key: { [config.partitionKeyName]: key, ...(config.sortKeyName === undefined ? {} : { [config.sortKeyName]: key }) } }));
}

/** The subscriber's Operator output, naming `outbox` as its outbox table. */
function output(outbox: ProducerConfig): string {
  return JSON.stringify({
    format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600,
    outboxTable: outbox.outboxTableName, inboxTable: inboxConfig.inboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: deadLetterQueue.address.url,
  });
}

const replayArgs = (aggregateId: string, outbox: ProducerConfig) => ['fence', 'replay', SUBSCRIBER, aggregateId, '--table', inboxConfig.inboxTableName, '--outbox-table', outbox.outboxTableName, '--queue', queue.address.url];
const skipArgs = (aggregateId: string, outbox: ProducerConfig, from: number, to: number) =>
  ['fence', 'skip', SUBSCRIBER, aggregateId, '--table', inboxConfig.inboxTableName, '--outbox-table', outbox.outboxTableName, '--dead-letter-queue', deadLetterQueue.address.url, '--queue', queue.address.url, '--from', String(from), '--to', String(to), '--reason', 'lost'];

async function drain(): Promise<void> {
  const { handler } = consumer();
  while ((await deliverOnce(queue, handler)) > 0);
}

const id = (name: string): string => `order-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

describe('RO12-2: fence replay and fence skip act only on the outbox the subscriber applies', () => {
  test("replay on another flow's outbox holding the same aggregate id is refused, saying why; nothing is sent, nothing applied", async () => {
    const aggregateId = id('replay');
    await deliver(await emit(ours, aggregateId, 'placed'));
    await emit(theirs, aggregateId, 'return-opened');
    await emit(theirs, aggregateId, 'return-refunded');

    const refused = await cli(...replayArgs(aggregateId, theirs));
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`outbox table '${theirs.outboxTableName}' holds event`);
    expect(refused.stderr).toContain('not the outbox this subscriber applies');
    expect(refused.stderr).toContain(OUTBOX_PROOF_ADVICE);
    // with the subscriber's output, which names its own outbox: refused as well
    const named = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(ours), '--outbox-table', theirs.outboxTableName, '--yes');
    expect(named.code).toBe(3);
    expect(named.stderr).toContain(`is not the outbox of subscriber '${SUBSCRIBER}': its Operator output (--subscriber-output) names '${ours.outboxTableName}'`);
    await drain();
    expect(await ledger(aggregateId)).toEqual(['placed']);

    // its own outbox: proven by the event the fence applied; the dry run names each event by id and type
    const paid = await emit(ours, aggregateId, 'paid');
    const dryRun = await cli(...replayArgs(aggregateId, ours));
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toContain(`#2 ${paid.id} (Step)`);
    expect(dryRun.stdout).toContain('its history holds the event the fence applied');
    // sending takes the subscriber's output (only it ties the queue to the subscriber)
    expect((await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(ours), '--yes')).code).toBe(0);
    await drain();
    expect(await ledger(aggregateId)).toEqual(['placed', 'paid']);
  });

  test("replay for a fence that applied nothing is refused without the output (nothing proves the table), and sends with it", async () => {
    const aggregateId = id('fresh');
    await emit(ours, aggregateId, 'placed');
    const refused = await cli(...replayArgs(aggregateId, ours));
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`nothing proves outbox table '${ours.outboxTableName}' is the outbox subscriber '${SUBSCRIBER}' applies: the subscriber applied nothing of ${aggregateId} yet`);
    const sent = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(ours), '--yes');
    expect(sent.code).toBe(0);
    await drain();
    expect(await ledger(aggregateId)).toEqual(['placed']);
  });

  test("skip on another flow's outbox is refused once the history item at --from expired (RO12-2b), and after a skip; with the output on its own outbox it goes", async () => {
    const aggregateId = id('skip');
    const placed = await emit(ours, aggregateId, 'placed');
    await deliver(placed);
    const other = [await emit(theirs, aggregateId, 'a'), await emit(theirs, aggregateId, 'b'), await emit(theirs, aggregateId, 'c')];
    await expireHistory(theirs, other[0]!.id);
    const refused = await cli(...skipArgs(aggregateId, theirs, 1, 3), '--yes');
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain(`nothing proves outbox table '${theirs.outboxTableName}' is the outbox subscriber '${SUBSCRIBER}' applies`);
    expect((await cli('fence', 'show', SUBSCRIBER, aggregateId, '--table', inboxConfig.inboxTableName, '--json')).stdout).toContain('"appliedSequence": 1');

    // its own outbox, the applied event's history item expired too: only the output proves it
    await emit(ours, aggregateId, 'paid');
    await emit(ours, aggregateId, 'shipped');
    await emit(ours, aggregateId, 'delivered');
    await expireHistory(ours, placed.id);
    expect((await cli(...skipArgs(aggregateId, ours, 1, 2), '--yes')).code).toBe(3);
    const skipped = await cli('fence', 'skip', SUBSCRIBER, aggregateId, '--subscriber-output', output(ours), '--from', '1', '--to', '2', '--reason', 'lost', '--yes');
    expect(skipped.code).toBe(0);
    // after a skip the fence names no event: another flow's outbox is still refused; its own is proven by the skip record
    const afterSkip = await cli(...skipArgs(aggregateId, theirs, 2, 3));
    expect(afterSkip.code).toBe(3);
    expect(afterSkip.stderr).toContain("the fence of");
    expect(afterSkip.stderr).toContain("was moved by 'fence skip'");
    const own = await cli(...skipArgs(aggregateId, ours, 2, 3));
    expect(own.code).toBe(0);
    expect(own.stdout).toContain('dry run');
  });
});

describe('RO12-3: a history of two generations: replay and skip follow the fence\'s, never refusing on the right table', () => {
  test("after a carry set the head back, replay sends the new generation's events the fence takes, and skip names them; before, replay names the other history's events", async () => {
    const aggregateId = id('generations');
    const original = await newOutbox();
    const [a1, a2, a3] = [await emit(original, aggregateId, 'a1'), await emit(original, aggregateId, 'a2'), await emit(original, aggregateId, 'a3')];
    await deliver(a1!, a2!);
    // the table is replaced; heads carried from the fences (2, generation G1); the new table hands out 3 and 4
    const replaced = await newOutbox();
    const firstCarry = Date.now();
    await carryOrderedHeads({ client, outbox: replaced, source: { kind: 'fences', subscribers: [{ subscriberName: SUBSCRIBER, inboxTable: inboxConfig.inboxTableName }] }, apply: true, now: () => new Date(firstCarry) });
    const n3 = await emit(replaced, aggregateId, 'n3');
    const n4 = await emit(replaced, aggregateId, 'n4');
    // the old table's in-flight a3 applies (it was next); n3 and n4 are refused: two histories
    const { handler, deadLetter } = consumer();
    for (const envelope of [a3!, n3, n4]) await handler({ Records: [sqsRecord(JSON.stringify(envelope))] });
    expect(await ledger(aggregateId)).toEqual(['a1', 'a2', 'a3']);
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['SequenceReusedError', 'SequenceReusedError']);

    // before a second carry: the history after the fence holds only the other generation's events: named, not "missing"
    const before = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(replaced));
    expect(before.code).toBe(3);
    expect(before.stderr).toContain(`holds at sequence 4 only events it refuses (#4 ${n4.id} (Step, generation`);
    expect(before.stderr).not.toContain('has no sequence');
    expect(before.stderr).not.toContain("'fence skip'");

    // a second carry sets the head back to 3 (generation G2); the runbook's step 5 writes the two again: 4 and 5 of G2
    const { heads } = await carryOrderedHeads({ client, outbox: replaced, source: { kind: 'fences', subscribers: [{ subscriberName: SUBSCRIBER, inboxTable: inboxConfig.inboxTableName }] }, apply: true, now: () => new Date(firstCarry + 60_000) });
    expect(heads.find((head) => head.aggregateId === aggregateId)?.decision).toBe('back');
    const w4 = await emit(replaced, aggregateId, 'w4');
    const w5 = await emit(replaced, aggregateId, 'w5');

    // skip from 3 to 4 on the right table: accepted (dry run), naming the event the fence would take at 4 (w4, not n4)
    const skip = await cli('fence', 'skip', SUBSCRIBER, aggregateId, '--subscriber-output', output(replaced), '--from', '3', '--to', '4', '--reason', 'lost', '--json');
    expect(skip.code).toBe(0);
    expect(JSON.parse(skip.stdout)).toMatchObject({ drops: [{ sequence: 4, eventId: w4.id }], generation: firstCarry + 60_000 });

    // replay: w4 and w5 (the fence's chain), n3 and n4 named as not sent; they apply in order
    const dryRun = await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(replaced), '--json');
    expect(dryRun.code).toBe(0);
    const plan = JSON.parse(dryRun.stdout) as { sequences: number[]; events: Array<{ eventId: string }>; notFollowed: Array<{ eventId: string }> };
    expect(plan.events.map((event) => event.eventId)).toEqual([w4.id, w5.id]);
    expect(plan.notFollowed.map((event) => event.eventId).sort()).toEqual([n4.id].sort());
    expect((await cli('fence', 'replay', SUBSCRIBER, aggregateId, '--subscriber-output', output(replaced), '--yes')).code).toBe(0);
    await drain();
    expect(await ledger(aggregateId)).toEqual(['a1', 'a2', 'a3', 'w4', 'w5']);
  });
});
