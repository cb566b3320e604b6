/**
 * Issue 28's findings on an event's whole life, each reproduced against DynamoDB Local and the simulator's SQS endpoint
 * with the real operator commands (in-process) and the real runtime: a blocked message whose only copy is its record
 * (finding 1), replay's age of an event dated in the future (finding 2), and dead letters that arrive while a redrive
 * runs (finding 5).
 */
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, test } from 'vitest';
import { createAggregateConsumer } from '../../lambda/aggregate/aggregate-consumer';
import type { ProducerConfig } from '../../lambda/config';
import type { DeadLetter, DeadLetterPublisher } from '../../lambda/consumer/dead-letter';
import { createLeaseConsumer } from '../../lambda/processing/lease-consumer';
import { Outbox } from '../../lambda/producer/outbox';
import { outboxKeyValue } from '../../lambda/producer/outbox-item';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { localClient, uniqueTableName } from '../support/dynamodb-client';
import { createKeyedTable, createOutbox } from '../support/proof/tables';
import { putOutboxItem } from '../support/outbox-items';
import { envelopeObject, recordingLogger } from '../lambda/helpers';
import { createInboxTable } from '../lambda/processing/fixtures';
import { cli, cliAt, countingConsumer, deliverOnce, type OperatorServices } from './operator-services';
import { DAY_MS, startServices, useServicesPerTest } from './replay-outbox-kit';

const SUBSCRIBER = 'billing';

let inboxTable: string;
let effectsTable: string;

beforeEach(async () => {
  inboxTable = uniqueTableName('cli-life-inbox');
  await createInboxTable(localClient(), inboxTable);
  effectsTable = await createKeyedTable(localClient(), 'cli-life-effects');
});
useServicesPerTest();

const documents = () => DynamoDBDocumentClient.from(localClient());

/** The billing subscriber's counting consumer (operator-services.ts). */
function countingBilling(s: OperatorServices) {
  return countingConsumer(s, { subscriber: SUBSCRIBER, inboxTable, effectsTable });
}

describe('finding 1: a blocked message whose body is kept on its record, and whose dead-letter send failed', () => {
  /** A lease consumer that keeps blocked bodies; its effect's first call has an unknown outcome (nothing sent), and its first dead-letter send fails. */
  function leaseConsumer(s: OperatorServices) {
    const effects: string[] = [];
    let effectFails = true;
    let deadLetterFails = true;
    const deadLetter: DeadLetterPublisher = {
      publish: async (letter: DeadLetter) => {
        if (deadLetterFails) {
          deadLetterFails = false;
          throw new Error('SQS SendMessage: ServiceUnavailable');
        }
        await s.deadLetterPublisher.publish(letter);
      },
    };
    const handler = createLeaseConsumer({
      client: localClient(),
      config: { subscriberName: SUBSCRIBER, inboxTableName: inboxTable, deduplicationWindowSeconds: 30 * 86_400, leaseDurationSeconds: 60, keepBlockedMessageBody: true },
      deadLetter,
      logger: recordingLogger().logger,
      metricsSink: () => undefined,
      now: () => new Date(s.clock.now()),
      handle: async (envelope) => {
        if (effectFails) {
          effectFails = false;
          throw new Error('socket timeout, nothing was sent');
        }
        effects.push(envelope.id);
      },
    });
    return { handler, effects };
  }

  /** The message blocked, its dead-letter send failed, the next copy acknowledged as already blocked: the record is its only copy. */
  async function onlyCopyOnTheRecord(s: OperatorServices, id: string) {
    const consumer = leaseConsumer(s);
    s.queue.send({ body: JSON.stringify(envelopeObject({ id, type: 'OrderPlaced', time: new Date(s.clock.now()).toISOString() })), origin: { via: 'sns' } });
    await deliverOnce(s.queue, consumer.handler);
    s.clock.advanceBy(31_000);
    await deliverOnce(s.queue, consumer.handler);
    expect(s.queue.messages()).toEqual([]);
    expect(s.deadLetterQueue.messages()).toEqual([]);
    return consumer;
  }

  const resolveArgs = (id: string) => ['blocked', 'resolve', '--table', inboxTable, '--subscriber', SUBSCRIBER, '--event-id', id, '--step', 'effect', '--status', 'TRY_AGAIN'];

  test('resolve TRY_AGAIN sends the kept body back to the subscriber queue, and the effect runs once', async () => {
    const s = await startServices('KeptBody');
    const consumer = await onlyCopyOnTheRecord(s, 'evt-kept');

    const resolved = await cli(s, ...resolveArgs('evt-kept'), '--queue', s.queue.address.url);

    expect(resolved.code).toBe(0);
    expect(resolved.stdout).toContain(`sent the message kept on the record to ${s.queue.address.url}`);
    expect(s.queue.messages()).toHaveLength(1);
    while ((await deliverOnce(s.queue, consumer.handler)) > 0);
    expect(consumer.effects).toEqual(['evt-kept']);
    // the completing delivery removed the body: its job is done
    const shown = JSON.parse((await cli(s, 'blocked', 'show', '--table', inboxTable, '--subscriber', SUBSCRIBER, '--event-id', 'evt-kept', '--json')).stdout);
    expect(shown.status).toBe('COMPLETED');
    expect(shown).not.toHaveProperty('keptMessageBody');
  });

  test('blocked requeue sends the body a resolved record keeps again (a send that failed, say); the second copy is a duplicate', async () => {
    const s = await startServices('Requeue');
    const consumer = await onlyCopyOnTheRecord(s, 'evt-requeue');
    expect((await cli(s, ...resolveArgs('evt-requeue'), '--queue', s.queue.address.url)).code).toBe(0);

    const requeued = await cli(s, 'blocked', 'requeue', '--table', inboxTable, '--subscriber', SUBSCRIBER, '--event-id', 'evt-requeue', '--queue', s.queue.address.url);

    expect(requeued.code).toBe(0);
    expect(s.queue.messages()).toHaveLength(2);
    while ((await deliverOnce(s.queue, consumer.handler)) > 0);
    expect(consumer.effects).toEqual(['evt-requeue']);
    const again = await cli(s, 'blocked', 'requeue', '--table', inboxTable, '--subscriber', SUBSCRIBER, '--event-id', 'evt-requeue', '--queue', s.queue.address.url);
    expect(again.code).toBe(3);
    expect(again.stderr).toContain('is COMPLETED and keeps no message body');
  });

  test('resolve TRY_AGAIN of a record that keeps the only copy refuses (exit 3) without --queue, and changes nothing', async () => {
    const s = await startServices('KeptBodyNoQueue');
    await onlyCopyOnTheRecord(s, 'evt-kept-2');

    const refused = await cli(s, ...resolveArgs('evt-kept-2'));

    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain('keeps the message body');
    expect(refused.stderr).toContain('--queue');
    const shown = await cli(s, 'blocked', 'show', '--table', inboxTable, '--subscriber', SUBSCRIBER, '--event-id', 'evt-kept-2', '--json');
    expect(JSON.parse(shown.stdout)).toMatchObject({ status: 'BLOCKED', blocked: { body: expect.stringContaining('evt-kept-2') } });
  });
});

describe('finding 2: replay measures an event\'s age from when its outbox item was written, not from the time its producer gave it', () => {
  let outbox: ProducerConfig;
  beforeEach(async () => {
    outbox = await createOutbox(localClient(), { eventSource: 'urn:test:orders' });
  });

  /** An outbox item as the relay reads it, dated `timeMs`, written at `writtenAtMs` (absent: as an older runtime wrote it). */
  const outboxItem = (id: string, timeMs: number, writtenAtMs: number | undefined): Promise<string> => putOutboxItem(outbox, { id, timeMs, writtenAtMs });

  const replayArgs = (s: OperatorServices, id: string) => ['replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional', '--filter-policy', 'none', '--deduplication-window', '30d', '--event-id', id, '--yes'];

  test('an event applied when written but dated 45 days later is refused 31 days on (its inbox record is gone), and applied once', async () => {
    const s = await startServices('FutureDated');
    const consumer = countingBilling(s);
    const writtenAt = s.clock.now();
    const body = await outboxItem('evt-future', writtenAt + 45 * DAY_MS, writtenAt);
    s.queue.send({ body, origin: { via: 'sns' } });
    await consumer.drain();
    expect(await consumer.applied('evt-future')).toEqual({ 'evt-future': 1 });
    s.clock.advanceBy(31 * DAY_MS);

    const replay = await cli(s, ...replayArgs(s, 'evt-future'));

    expect(replay.code).toBe(3);
    expect(replay.stdout).toMatch(/evt-future +OrderPlaced +\S+ +refused +its event is 31 days old \(from .*, when its outbox item was written\)/);
    await consumer.drain();
    expect(await consumer.applied('evt-future')).toEqual({ 'evt-future': 1 });
  });

  test('an outbox item that does not say when it was written (an older runtime) and is dated in the future is refused', async () => {
    const s = await startServices('FutureUnknown');
    await outboxItem('evt-future-old', s.clock.now() + 45 * DAY_MS, undefined);

    const replay = await cli(s, ...replayArgs(s, 'evt-future-old'));

    expect(replay.code).toBe(3);
    expect(replay.stdout).toContain('its outbox item does not say when it was written');
    expect(s.queue.messages()).toEqual([]);
  });
});

describe('finding 5: a redrive moves only the dead letters it checked', () => {
  test('a dead letter 27 days old that arrives between the check and the move stays in the dead-letter queue', async () => {
    const s = await startServices('ArrivesMeanwhile');
    const consumer = countingBilling(s);
    const young = JSON.stringify(envelopeObject({ id: 'evt-young', type: 'OrderPlaced', time: new Date(s.clock.now()).toISOString() }));
    s.deadLetterQueue.send({ body: young, origin: { via: 'send-message' } });
    const old = JSON.stringify(envelopeObject({ id: 'evt-old', type: 'OrderPlaced', time: new Date(s.clock.now() - 27 * DAY_MS).toISOString() }));
    let arrived = false;
    let receives = 0;

    const redrive = await cliAt(
      s,
      {
        afterSqsRequest: (name) => {
          // the consumer dead-letters another event once the redrive has read the queue to its end (the second receive
          // brought nothing new) and decides
          if (name === 'ReceiveMessageCommand' && (receives += 1) === 2) {
            arrived = true;
            s.deadLetterQueue.send({ body: old, origin: { via: 'send-message' } });
          }
        },
      },
      'dlq', 'redrive', '--dead-letter-queue', s.deadLetterQueue.address.url, '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional',
      '--table', inboxTable, '--deduplication-window', '30d', '--yes',
    );

    expect(redrive.code).toBe(0);
    expect(arrived).toBe(true);
    s.clock.advanceBy(1000); // a message move task, had one started, would have moved everything by now (500 a second)
    await consumer.drain();
    expect(await consumer.applied('evt-young')).toEqual({ 'evt-young': 1 });
    expect(await consumer.applied('evt-old')).toEqual({ 'evt-old': 0 });
    expect(s.deadLetterQueue.messages().map((message) => JSON.parse(message.body).id)).toEqual(['evt-old']);
  });
});

describe('finding 8: the commands resolve the subscriber from what was deployed (its Operator output), and refuse flags that disagree', () => {
  /** The subscriber's `<subscriber>/Operator` output as the constructs write it, on the services' queues. */
  function operatorOutput(s: OperatorServices, overrides: Record<string, unknown> = {}): string {
    return JSON.stringify({
      format: 1,
      subscriberName: SUBSCRIBER,
      processingMode: 'transactional',
      deduplicationWindowSeconds: 20 * 86_400,
      keepBlockedMessageBody: false,
      inboxTable,
      queueUrl: s.queue.address.url,
      deadLetterQueueUrl: s.deadLetterQueue.address.url,
      subscriptionDeadLetterQueueUrl: s.subscriptionDeadLetterQueue.address.url,
      ...overrides,
    });
  }

  /** A dead letter of an event `daysAgo` old, as the runtime sends it. */
  async function deadLetter(s: OperatorServices, id: string, daysAgo: number): Promise<void> {
    const body = JSON.stringify(envelopeObject({ id, type: 'OrderPlaced', time: new Date(s.clock.now() - daysAgo * DAY_MS).toISOString() }));
    await s.deadLetterPublisher.publish({ body, errorName: 'PermanentError', errorMessage: 'fixed since', subscriber: SUBSCRIBER, sourceMessageId: `m-${id}`, eventId: id });
  }

  test("a redrive measures against the deployed window (20 days), not one typed, and takes every name from the output", async () => {
    const s = await startServices('DeployedWindow');
    await deadLetter(s, 'evt-10-days', 10);
    await deadLetter(s, 'evt-17-days', 17);

    const result = await cli(s, 'dlq', 'redrive', '--subscriber-output', operatorOutput(s), '--json');

    expect(result.code).toBe(3);
    const decisions = (JSON.parse(result.stdout) as { decisions: Array<{ eventId: string; redrive: boolean }> }).decisions;
    // 17 days + 4 days (the queue's retention) + 1 hour passes 20 days; 10 + 4 does not
    expect(Object.fromEntries(decisions.map((decision) => [decision.eventId, decision.redrive]))).toEqual({ 'evt-10-days': true, 'evt-17-days': false });
  });

  test('a typed flag that disagrees with the output is refused (exit 2), naming both values', async () => {
    const s = await startServices('Disagrees');
    const output = operatorOutput(s);

    const window = await cli(s, 'dlq', 'redrive', '--subscriber-output', output, '--deduplication-window', '30d');
    expect(window.code).toBe(2);
    expect(window.stderr).toContain("--deduplication-window 30d disagrees with the deployed subscriber 'billing' (--subscriber-output says 20d); leave the flag out");
    const queue = await cli(s, 'replay', '--subscriber-output', output, '--queue', s.relayDeadLetterQueue.address.url, '--table', 'Outbox', '--event-id', 'e');
    expect(queue.code).toBe(2);
    expect(queue.stderr).toContain(`--queue ${s.relayDeadLetterQueue.address.url} disagrees with the deployed subscriber 'billing'`);
    const source = await cli(s, 'dlq', 'redrive', '--subscriber-output', output, '--dead-letter-queue', s.relayDeadLetterQueue.address.url);
    expect(source.code).toBe(2);
    expect(source.stderr).toContain(`--dead-letter-queue ${s.relayDeadLetterQueue.address.url} disagrees with the deployed subscriber 'billing'`);
    const notAnOutput = await cli(s, 'dlq', 'redrive', '--subscriber-output', '{"subscriberName":"billing"}');
    expect(notAnOutput.stderr).toContain("--subscriber-output is not a subscriber's Operator stack output: its field 'format' must be 1");
  });

  test('without the output, --queue must be the queue whose redrive policy names the dead-letter queue: a typo is refused (exit 3), nothing moves', async () => {
    const s = await startServices('Typo');
    await deadLetter(s, 'evt-typo', 1);

    const result = await cli(
      s, 'dlq', 'redrive', '--dead-letter-queue', s.deadLetterQueue.address.url, '--queue', s.subscriptionDeadLetterQueue.address.url,
      '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional', '--deduplication-window', '30d', '--yes',
    );

    expect(result.code).toBe(3);
    expect(result.stderr).toContain(`refused: ${s.deadLetterQueue.address.url} is not the dead-letter queue of --queue ${s.subscriptionDeadLetterQueue.address.url} (its RedrivePolicy names none)`);
    expect(s.deadLetterQueue.messages()).toHaveLength(1);
    expect(s.subscriptionDeadLetterQueue.messages()).toEqual([]);
  });

  test('a subscriber in aggregate mode gets no redriven copy (exit 3) unless --allow-reapply, with a warning', async () => {
    const s = await startServices('Aggregate');
    await deadLetter(s, 'evt-aggregate', 1);
    const output = operatorOutput(s, { processingMode: 'aggregate', deduplicationWindowSeconds: undefined, inboxTable: undefined });

    const refused = await cli(s, 'dlq', 'redrive', '--subscriber-output', output, '--yes');
    expect(refused.code).toBe(3);
    expect(refused.stdout).toContain("subscriber 'billing' is in aggregate mode: it keeps no inbox");
    expect(s.queue.messages()).toEqual([]);

    const allowed = await cli(s, 'dlq', 'redrive', '--subscriber-output', output, '--yes', '--allow-reapply');
    expect(allowed.code).toBe(0);
    expect(allowed.stderr).toContain("warning: event 'evt-aggregate': subscriber 'billing' is in aggregate mode");
    expect(s.queue.messages()).toHaveLength(1);
  });
});

describe('findings 3 and 4: replay knows the subscriber\'s mode and its subscription\'s filter policy', () => {
  let outbox: ProducerConfig;
  beforeEach(async () => {
    outbox = await createOutbox(localClient(), { eventSource: 'urn:orders' });
  });

  const output = (s: OperatorServices, overrides: Record<string, unknown>) =>
    JSON.stringify({
      format: 1,
      subscriberName: SUBSCRIBER,
      processingMode: 'transactional',
      deduplicationWindowSeconds: 30 * 86_400,
      inboxTable,
      outboxTable: outbox.outboxTableName,
      queueUrl: s.queue.address.url,
      deadLetterQueueUrl: s.deadLetterQueue.address.url,
      ...overrides,
    });

  async function produce(s: OperatorServices, events: ReadonlyArray<{ id: string; type?: string; source?: string; data?: unknown }>): Promise<void> {
    await new Outbox({ client: localClient(), config: outbox, now: () => new Date(s.clock.now()) }).transactWrite({
      events: events.map((event) => ({ id: event.id, type: event.type ?? 'Deposited', data: event.data ?? { amount: 5 }, ...(event.source === undefined ? {} : { source: event.source }) })),
    });
  }

  test('finding 3: a range replayed into an aggregate-mode subscriber, whose id list has moved on, is refused (exit 3): the balance stays', async () => {
    const s = await startServices('AggregateReplay');
    const handler = createAggregateConsumer<{ amount: number }, { balance: number }>({
      client: localClient(),
      config: { subscriberName: SUBSCRIBER },
      maxProcessedMessages: 1,
      deadLetter: s.deadLetterPublisher,
      logger: recordingLogger().logger,
      metricsSink: () => undefined,
      now: () => new Date(s.clock.now()),
      locate: () => ({ tableName: effectsTable, key: { pk: 'account-1' } }),
      apply: (current, envelope) => ({ state: { balance: (current?.balance ?? 0) + envelope.data.amount } }),
    });
    const [since, until] = [new Date(s.clock.now() - 60_000).toISOString(), new Date(s.clock.now() + 60_000).toISOString()];
    await produce(s, [{ id: 'evt-a', data: { amount: 100 } }, { id: 'evt-b', data: { amount: 5 } }]);
    for (const id of ['evt-a', 'evt-b']) {
      const item = (await documents().send(new GetCommand({ TableName: outbox.outboxTableName, Key: { pk: outboxKeyValue(id), sk: outboxKeyValue(id) } }))).Item!;
      s.queue.send({ body: item[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE] as string, origin: { via: 'sns' } });
      await deliverOnce(s.queue, handler);
    }
    const balance = async () => (await documents().send(new GetCommand({ TableName: effectsTable, Key: { pk: 'account-1' }, ConsistentRead: true }))).Item?.balance;
    expect(await balance()).toBe(105);

    const replay = await cli(s, 'replay', '--subscriber-output', output(s, { processingMode: 'aggregate', deduplicationWindowSeconds: undefined, inboxTable: undefined }), '--since', since, '--until', until, '--yes');

    expect(replay.code).toBe(3);
    expect(replay.stdout).toMatch(/evt-a +Deposited +\S+ +refused +subscriber 'billing' is in aggregate mode/);
    while ((await deliverOnce(s.queue, handler)) > 0);
    expect(await balance()).toBe(105);
  });

  test('finding 4: a replay sends only what the subscription\'s filter policy takes (type and source); the rest is listed as not for it', async () => {
    const s = await startServices('FilteredReplay');
    const [since, until] = [new Date(s.clock.now() - 60_000).toISOString(), new Date(s.clock.now() + 60_000).toISOString()];
    await produce(s, [
      { id: 'evt-ours', type: 'OrderPlaced' },
      { id: 'evt-other-source', type: 'OrderPlaced', source: 'urn:returns' },
      { id: 'evt-other-type', type: 'OrderShipped' },
    ]);
    const filtered = output(s, { filterPolicy: { type: ['OrderPlaced'], source: ['urn:orders'] }, filterPolicyScope: 'MessageBody' });

    const replay = await cli(s, 'replay', '--subscriber-output', filtered, '--since', since, '--until', until, '--yes', '--json');

    expect(replay.code).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ filteredOut: ['evt-other-source', 'evt-other-type'], sent: [{ eventId: 'evt-ours' }] });
    expect(s.queue.messages().map((message) => JSON.parse(message.body).id)).toEqual(['evt-ours']);
    // without the output, the policy is a flag the replay needs
    const typed = await cli(s, 'replay', '--table', outbox.outboxTableName, '--queue', s.queue.address.url, '--subscriber', SUBSCRIBER, '--processing-mode', 'transactional', '--deduplication-window', '30d', '--since', since);
    expect(typed).toMatchObject({ code: 2, stderr: expect.stringContaining("'replay' needs --filter-policy") });
  });
});
