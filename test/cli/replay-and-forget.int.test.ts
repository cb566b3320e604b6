import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import type { ProducerConfig } from '../../lambda/config';
import { createMultiStepConsumer } from '../../lambda/processing/multi-step-consumer';
import { Outbox } from '../../lambda/producer/outbox';
import { createKeyedTable, createOutbox } from '../support/proof/tables';
import { localClient, uniqueTableName } from '../support/dynamodb-client';
import { recordingLogger } from '../lambda/helpers';
import { createInboxTable } from '../lambda/processing/fixtures';
import { cli, countingConsumer, deliverOnce, startOperatorServices, type OperatorServices } from './operator-services';

const SUBSCRIBER = 'billing';
const DAY_MS = 86_400_000;

let inboxTable: string;
let effectsTable: string;
let outbox: ProducerConfig;
let services: OperatorServices | undefined;

beforeEach(async () => {
  inboxTable = uniqueTableName('cli-replay-inbox');
  await createInboxTable(localClient(), inboxTable);
  effectsTable = await createKeyedTable(localClient(), 'cli-replay-effects');
  outbox = await createOutbox(localClient(), { eventSource: 'urn:test:orders' });
});

afterEach(async () => {
  await services?.stop();
  services = undefined;
});

/** Appends events to the outbox with the runtime's producer, at `daysAgo` before the services' clock. */
async function produce(s: OperatorServices, ids: readonly string[], daysAgo = 0, type = 'OrderPlaced'): Promise<void> {
  const at = new Date(s.clock.now() - daysAgo * DAY_MS);
  await new Outbox({ client: localClient(), config: outbox, now: () => at }).transactWrite({ events: ids.map((id) => ({ id, type, data: { order: id } })) });
}

function consumer(s: OperatorServices) {
  return countingConsumer(s, { subscriber: SUBSCRIBER, inboxTable, effectsTable });
}

const replayArgs = (s: OperatorServices) => ['replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional', '--filter-policy', 'none', '--deduplication-window', '30d'];

describe('idempotent-event-flow replay, from the outbox in DynamoDB Local to the simulator\'s queue', () => {
  test('replays an event the relay gave up on by id, with its original id and body; replaying twice applies once', async () => {
    const s = (services = await startOperatorServices('ReplayById'));
    const { applied, drain } = consumer(s);
    await produce(s, ['evt-lost']);

    const dryRun = await cli(s, ...replayArgs(s), '--event-id', 'evt-lost');
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toContain('dry run: would send 1 and refuse 0');
    expect(s.queue.counts().total).toBe(0);

    for (let round = 0; round < 2; round++) {
      const result = await cli(s, ...replayArgs(s), '--event-id', 'evt-lost', '--yes');
      expect(result).toMatchObject({ code: 0, stdout: expect.stringContaining(`sent 1 to ${s.queue.address.url}`) });
      const [message] = s.queue.messages();
      expect(JSON.parse(message?.body ?? '{}')).toMatchObject({ id: 'evt-lost', type: 'OrderPlaced', source: 'urn:test:orders' });
      await drain();
    }
    expect(await applied('evt-lost')).toEqual({ 'evt-lost': 1 });
  });

  test('replays a time range, filtered by type, oldest first; says which ids the outbox no longer holds (exit 3)', async () => {
    const s = (services = await startOperatorServices('ReplayRange'));
    const { applied, drain } = consumer(s);
    await produce(s, ['evt-before'], 3);
    await produce(s, ['evt-a'], 2);
    await produce(s, ['evt-b'], 1);
    await produce(s, ['evt-other-type'], 1, 'OrderCancelled');
    const since = new Date(s.clock.now() - 2.5 * DAY_MS).toISOString();

    const result = await cli(s, ...replayArgs(s), '--since', since, '--type', 'OrderPlaced', '--yes', '--json');

    expect(result.code).toBe(0);
    expect((JSON.parse(result.stdout) as { events: Array<{ eventId: string }> }).events.map((event) => event.eventId)).toEqual(['evt-a', 'evt-b']);
    await drain();
    expect(await applied('evt-before', 'evt-a', 'evt-b', 'evt-other-type')).toEqual({ 'evt-before': 0, 'evt-a': 1, 'evt-b': 1, 'evt-other-type': 0 });

    const missing = await cli(s, ...replayArgs(s), '--event-id', 'evt-never-written');
    expect(missing.code).toBe(3);
    expect(missing.stdout).toContain('not in the outbox (never written, or past its retention): evt-never-written');
  });

  test('refuses an event older than the deduplication window (exit 3); --allow-expired sends it with a warning', async () => {
    const s = (services = await startOperatorServices('ReplayOld'));
    await produce(s, ['evt-old'], 31);

    const refused = await cli(s, ...replayArgs(s), '--event-id', 'evt-old', '--yes');
    expect(refused.code).toBe(3);
    expect(refused.stdout).toMatch(/evt-old +OrderPlaced +.* +refused +its event is 31 days old .* passes the deduplication window of 30 days/);
    expect(s.queue.counts().total).toBe(0);

    const allowed = await cli(s, ...replayArgs(s), '--event-id', 'evt-old', '--yes', '--allow-expired');
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).toContain("warning: event 'evt-old'");
    expect(s.queue.counts().total).toBe(1);
  });

  test('refuses an event whose replayed copy could still wait in the queue when the window ends: its age plus the queue\'s retention (4 days), with the figures', async () => {
    const s = (services = await startOperatorServices('ReplayCopyWait'));
    await produce(s, ['evt-25-days'], 25);
    await produce(s, ['evt-27-days'], 27);

    const result = await cli(s, ...replayArgs(s), '--event-id', 'evt-25-days', '--event-id', 'evt-27-days', '--json');

    expect(result.code).toBe(3);
    const output = JSON.parse(result.stdout) as { destination: unknown; events: Array<{ eventId: string; send: boolean; why?: string }> };
    expect(output.destination).toEqual({ queueUrl: s.queue.address.url, retentionSeconds: 4 * 86_400, known: true });
    const events = output.events;
    expect(Object.fromEntries(events.map((item) => [item.eventId, item.send]))).toEqual({ 'evt-25-days': true, 'evt-27-days': false });
    expect(events.find((item) => item.eventId === 'evt-27-days')?.why).toMatch(
      /^its event is 27 days old \(from .*\); a replayed copy can wait up to 4 days in .*ReplayCopyWaitQueue before it is consumed \(the queue's MessageRetentionPeriod\), and 27 days \+ 4 days \(\+ 1 hour to spare\) passes the deduplication window of 30 days: .*could apply it twice/,
    );
  });

  test('a dry run of events already applied says so per event, with until when the inbox record is kept, and still replays them (the inbox absorbs the copies)', async () => {
    const s = (services = await startOperatorServices('ReplayApplied'));
    const { applied, drain } = consumer(s);
    await produce(s, ['evt-applied-1', 'evt-applied-2']);
    await cli(s, ...replayArgs(s), '--event-id', 'evt-applied-1', '--event-id', 'evt-applied-2', '--yes');
    await drain();
    await produce(s, ['evt-new']);
    const keptUntil = async (id: string): Promise<string> => {
      const record = (await toDocumentClient(localClient()).send(new GetCommand({ TableName: inboxTable, Key: { pk: `${SUBSCRIBER}#${id}` }, ConsistentRead: true }))).Item;
      return new Date(Number(record?.expiresAt) * 1000).toISOString();
    };
    // the subscriber as its Operator output names it: its inbox table is where the replay looks
    const output = JSON.stringify({
      format: 1, subscriberName: SUBSCRIBER, processingMode: 'transactional', deduplicationWindowSeconds: 30 * 86_400, inboxTable,
      outboxTable: outbox.outboxTableName, queueUrl: s.queue.address.url, deadLetterQueueUrl: s.deadLetterQueue.address.url,
    });
    const [since, until] = [new Date(s.clock.now() - 60_000).toISOString(), new Date(s.clock.now() + 60_000).toISOString()];

    const dryRun = await cli(s, 'replay', '--subscriber-output', output, '--since', since, '--until', until);

    expect(dryRun.code).toBe(0);
    for (const id of ['evt-applied-1', 'evt-applied-2']) {
      expect(dryRun.stdout).toMatch(new RegExp(`${id} +OrderPlaced +\\S+ +replay +already applied by '${SUBSCRIBER}': its inbox record is kept until ${await keptUntil(id)}, so the copy is dropped as a duplicate`));
    }
    expect(dryRun.stdout).toMatch(/evt-new +OrderPlaced +\S+ +replay *\n/);
    expect(dryRun.stdout).toContain(`dry run: would send 3 and refuse 0; 2 of them already applied by '${SUBSCRIBER}' (its inbox drops their copies as duplicates); run again with --yes`);
    const json = JSON.parse((await cli(s, 'replay', '--subscriber-output', output, '--since', since, '--until', until, '--json')).stdout) as { events: Array<{ eventId: string; send: boolean; alreadyApplied?: { keptUntil: string } }> };
    expect(json.events.map(({ eventId, send, alreadyApplied }) => ({ eventId, send, keptUntil: alreadyApplied?.keptUntil }))).toEqual([
      { eventId: 'evt-applied-1', send: true, keptUntil: await keptUntil('evt-applied-1') },
      { eventId: 'evt-applied-2', send: true, keptUntil: await keptUntil('evt-applied-2') },
      { eventId: 'evt-new', send: true, keptUntil: undefined },
    ]);

    // the replay is still allowed: the inbox drops the copies, the new event applies once
    const sent = await cli(s, 'replay', '--subscriber-output', output, '--since', since, '--until', until, '--yes');
    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(new RegExp(`sent 3 to \\S+ for subscriber '${SUBSCRIBER}'; refused 0; 2 of them already applied by '${SUBSCRIBER}'`));
    await drain();
    expect(await applied('evt-applied-1', 'evt-applied-2', 'evt-new')).toEqual({ 'evt-applied-1': 1, 'evt-applied-2': 1, 'evt-new': 1 });
  });

  test('usage errors: both --event-id and --since, a bad time', async () => {
    const s = (services = await startOperatorServices('ReplayUsage'));
    expect(await cli(s, ...replayArgs(s), '--event-id', 'e', '--since', '2024-01-01T00:00:00Z')).toMatchObject({ code: 2, stderr: expect.stringContaining('either --event-id or --since, not both') });
    expect(await cli(s, ...replayArgs(s), '--since', 'yesterday')).toMatchObject({ code: 2, stderr: expect.stringContaining("--since must be an ISO-8601 time such as 2024-05-01T12:00:00Z, but 'yesterday' was given") });
  });
});

describe('idempotent-event-flow inbox forget', () => {
  test('shows the record without --yes; with --yes removes it, logs an audit line, and the next delivery applies the event again', async () => {
    const s = (services = await startOperatorServices('Forget'));
    const { applied, drain } = consumer(s);
    await produce(s, ['evt-1']);
    await cli(s, ...replayArgs(s), '--event-id', 'evt-1', '--yes');
    await drain();
    expect(await applied('evt-1')).toEqual({ 'evt-1': 1 });

    const dryRun = await cli(s, 'inbox', 'forget', SUBSCRIBER, 'evt-1', '--table', inboxTable, '--reason', 'ledger restored from backup');
    expect(dryRun.code).toBe(0);
    expect(dryRun.stdout).toContain(`"pk": "${SUBSCRIBER}#evt-1"`);

    const forgotten = await cli(s, 'inbox', 'forget', SUBSCRIBER, 'evt-1', '--table', inboxTable, '--reason', 'ledger restored from backup', '--yes');
    expect(forgotten.code).toBe(0);
    expect(JSON.parse(forgotten.stderr)).toMatchObject({ audit: 'inbox-forget', by: 'alice', subscriber: SUBSCRIBER, eventId: 'evt-1', reason: 'ledger restored from backup', record: expect.objectContaining({ pk: `${SUBSCRIBER}#evt-1` }) });

    await cli(s, ...replayArgs(s), '--event-id', 'evt-1', '--yes');
    await drain();
    expect(await applied('evt-1')).toEqual({ 'evt-1': 2 });
  });

  test('refuses (exit 3) to forget a processing record that is BLOCKED: that is what blocked resolve is for', async () => {
    const s = (services = await startOperatorServices('ForgetBlocked'));
    const handler = createMultiStepConsumer({
      steps: [{ name: 'email', run: () => { throw new Error('SMTP timeout after DATA'); } }],
      client: localClient(),
      config: { subscriberName: SUBSCRIBER, inboxTableName: inboxTable, deduplicationWindowSeconds: 30 * 86_400, leaseDurationSeconds: 60 },
      deadLetter: s.deadLetterPublisher,
      logger: recordingLogger().logger,
      metricsSink: () => undefined,
      now: () => new Date(s.clock.now()),
    });
    await produce(s, ['evt-blocked']);
    await cli(s, ...replayArgs(s), '--event-id', 'evt-blocked', '--yes');
    await deliverOnce(s.queue, handler);

    const result = await cli(s, 'inbox', 'forget', SUBSCRIBER, 'evt-blocked', '--table', inboxTable, '--reason', 'r', '--yes');

    expect(result).toMatchObject({ code: 3, stderr: expect.stringContaining("has a processing record that is BLOCKED: resolve it with 'blocked resolve'") });
  });

  test('refuses (exit 3: nothing to act on, not a failure) when there is no record, and needs --reason', async () => {
    const s = (services = await startOperatorServices('ForgetNothing'));
    expect(await cli(s, 'inbox', 'forget', SUBSCRIBER, 'evt-none', '--table', inboxTable, '--reason', 'r', '--yes')).toMatchObject({
      code: 3,
      stderr: expect.stringContaining("refused: event 'evt-none' of subscriber 'billing' has no record"),
    });
    expect(await cli(s, 'inbox', 'forget', SUBSCRIBER, 'evt-none', '--table', inboxTable)).toMatchObject({ code: 2, stderr: expect.stringContaining('needs --reason') });
  });
});
