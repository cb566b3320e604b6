/**
 * An ordered subscriber's inbox table restored (into a new table) when the table restored from is gone (review ro15b,
 * RO15B-3): no carry can prove how far the subscriber got, so `fence replay` refused for ever, even once each fence
 * stood where the subscriber's own state shows it applied. The operator accepts the fences with
 * `fence carry --accept-fences-as-applied --reason`, audited, and replays the rest. Against DynamoDB Local and the
 * simulator's SQS, with the real OrderedOutbox, the ordered consumer and the CLI.
 */
import { DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../lambda/config';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { createOrderedConsumer } from '../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../lambda/ordered/ordered-outbox';
import { createLogger } from '../../lambda/logger';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { INBOX_RESTORE_ADVICE } from '../../operator/cli/inbox-restore-check';
import { UNCARRIED_INBOX_ADVICE } from '../../operator/cli/blocked-aggregates';
import { ACCEPTED_REASON_ATTRIBUTE } from '../../operator/cli/fence-accept';
import { fenceCarryKey } from '../../lambda/contract/ordered-wire-format';
import { localClient } from '../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../support/proof/tables';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';
import { sqsRecord } from '../lambda/helpers';
import { cliAt, cli as runCli, deliverOnce } from './operator-services';

const SUBSCRIBER = 'Restored';
const client = localClient();
const documents = DynamoDBDocumentClient.from(client);
const clock = frozenClock();
/** The deliveries before the restore happened a minute ago (the restored table is created after them). */
const aMinuteAgo = () => new Date(Date.now() - 60_000);
let endpoint: SqsEndpoint;
let queue: SimulatedQueue;
let outbox: ProducerConfig;
let ledgerTable: string;

beforeAll(async () => {
  const byUrl = new Map<string, SimulatedQueue>();
  endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url) });
  queue = makeQueue(queueModel('Restored.fifo', { fifo: true, queueName: 'Restored.fifo' }), { clock, baseUrl: endpoint.endpoint });
  byUrl.set(queue.address.url, queue);
  [outbox, ledgerTable] = await Promise.all([
    createOutbox(client, { eventSource: 'accounts', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
    createKeyedTable(client, 'restored-ledger'),
  ]);
});
afterAll(async () => {
  client.destroy();
  await endpoint.stop();
});

const cli = (...args: string[]) => runCli({ clock, endpoint }, ...args);

function consumer(inbox: ConsumerConfig, now?: () => Date) {
  return createOrderedConsumer<{ step: string }>({
    client,
    config: inbox,
    logger: createLogger({ sink: () => undefined }),
    metricsSink: () => undefined,
    ...(now === undefined ? {} : { now }),
    handle: (event, tx) =>
      tx.update({
        TableName: ledgerTable,
        Key: { pk: event.subject as string },
        UpdateExpression: 'SET steps = list_append(if_not_exists(steps, :none), :step)',
        ExpressionAttributeValues: { ':none': [], ':step': [event.data.step] },
      }),
  });
}

async function ledger(aggregateId: string): Promise<string[]> {
  const item = (await documents.send(new GetCommand({ TableName: ledgerTable, Key: { pk: aggregateId }, ConsistentRead: true }))).Item;
  return (item?.steps as string[] | undefined) ?? [];
}

async function emit(aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config: outbox, now: aMinuteAgo }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

async function items(table: string): Promise<Array<Record<string, unknown>>> {
  return (await documents.send(new ScanCommand({ TableName: table, ConsistentRead: true }))).Items ?? [];
}

/** A new inbox table holding `snapshot` (what a point-in-time restore into a new table holds). */
async function restoredInbox(snapshot: ReadonlyArray<Record<string, unknown>>): Promise<ConsumerConfig> {
  const restored = await createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 });
  for (const item of snapshot) await documents.send(new PutCommand({ TableName: restored.inboxTableName, Item: item }));
  return restored;
}

function output(inbox: ConsumerConfig): string {
  return JSON.stringify({
    format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', ordered: true, deduplicationWindowSeconds: 3600,
    outboxTable: outbox.outboxTableName, inboxTable: inbox.inboxTableName, queueUrl: queue.address.url, deadLetterQueueUrl: `${queue.address.url}-dlq`,
  });
}

async function drain(inbox: ConsumerConfig): Promise<void> {
  while ((await deliverOnce(queue, consumer(inbox))) > 0);
}

const id = (name: string): string => `account-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;


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
