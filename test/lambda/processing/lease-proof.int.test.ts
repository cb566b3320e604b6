/**
 * Proof of lease mode under at-least-once delivery: duplicates, concurrent duplicates, crashed invocations at every
 * point that matters, lost DynamoDB responses and throttling, leases that expire. The external effect is a ledger
 * outside DynamoDB. Claim: no effect ever runs twice; an effect whose outcome is unknown leaves its message BLOCKED;
 * no message is lost; after an operator resolves the blocked ones from the ledger's truth and redrives them, every
 * message is COMPLETED with its effect applied exactly once.
 */
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import type { LeaseConsumerConfig } from '../../../lambda/config';
import { RetryableError } from '../../../lambda/errors';
import { BlockedMessages } from '../../../lambda/operator/blocked-messages';
import { createLeaseConsumer } from '../../../lambda/processing/lease-consumer';
import { deliverAtLeastOnce, seededRandom } from '../../support/at-least-once';
import { localClient, uniqueTableName } from '../../support/dynamodb-client';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy';
import { recordingLogger } from '../helpers';
import { createInboxTable, FakeClock, newMessage, rawRecord, type TestMessage } from './fixtures';
import { CRASH_POINTS, CrashAwareDeadLetters, CrashInjector, injectDynamoDbFaults } from './proof-harness';

const SUBSCRIBER = 'notifier';
const MESSAGES = 100;
const LEASE_SECONDS = 60;
const SEED = 20240501;

let proxy: FaultProxy;
let config: LeaseConsumerConfig;

beforeAll(async () => {
  proxy = await startFaultProxy(inject('dynamoDbEndpoint'));
  const inboxTableName = uniqueTableName('lease-proof');
  await createInboxTable(localClient(), inboxTableName);
  config = { subscriberName: SUBSCRIBER, inboxTableName, deduplicationWindowSeconds: 86_400, leaseDurationSeconds: LEASE_SECONDS };
});
afterAll(() => proxy.stop());

describe('lease mode under at-least-once delivery', () => {
  test('no effect runs twice, unknown outcomes block, nothing is lost; after the operator, every effect applied exactly once', async () => {
    const random = seededRandom(SEED);
    const clock = new FakeClock();
    const injector = new CrashInjector(seededRandom(SEED + 1), 0.4);
    const client = localClient({ endpoint: proxy.endpoint });
    injector.instrument(client);
    const faults = injectDynamoDbFaults(proxy, seededRandom(SEED + 2), { lostResponses: 8, throttles: 4, spread: 300 });
    const deadLetters = new CrashAwareDeadLetters(injector);
    const { logger, lines } = recordingLogger();
    /** The external effect: how often each event's notification was sent. */
    const ledger = new Map<string, number>();
    let effectFaults = true;
    const effectRandom = seededRandom(SEED + 3);

    const consumer = createLeaseConsumer({
      client,
      config,
      deadLetter: deadLetters,
      logger,
      now: clock.now,
      metricsSink: () => undefined,
      handle: (envelope) => {
        injector.beforeEffect();
        const roll = effectFaults ? effectRandom() : 1;
        if (roll < 0.05) throw new RetryableError('rejected before sending');
        if (roll < 0.08) throw new Error('timed out before the request left');
        ledger.set(envelope.id, (ledger.get(envelope.id) ?? 0) + 1);
        if (roll < 0.11) throw new Error('timed out after the request was sent');
        injector.afterEffect();
      },
    });
    const messages: TestMessage[] = Array.from({ length: MESSAGES }, (_unused, index) => newMessage({ notification: index }));
    const direct = localClient();
    const recordOf = async (message: TestMessage) => rawRecord(direct, config.inboxTableName, SUBSCRIBER, message.id);
    const statusOf = async (message: TestMessage) => (await recordOf(message))?.status?.S;

    // phase 1: the hostile world
    const report = await deliverAtLeastOnce({
      bodies: messages.map((message) => message.body),
      handler: injector.wrap(consumer),
      seed: SEED,
      duplicateRate: 0.2,
      concurrentDuplicateRate: 0.15,
      batchSize: 4,
      maxReceiveCount: 10,
      betweenRounds: () => clock.advanceSeconds(25 + Math.floor(random() * 20)),
    });

    // the run did exercise what it claims to
    expect(report.stuck.size).toBe(0);
    expect(report.crashedInvocations).toBeGreaterThan(5);
    expect(report.duplicatesDelivered).toBeGreaterThan(10);
    for (const point of CRASH_POINTS) expect(injector.fired.get(point) ?? 0, `crash point ${point}`).toBeGreaterThan(0);
    expect(faults.fired()).toBeGreaterThan(5);
    expect(lines.some((line) => (line.error as { name?: string } | undefined)?.name === 'MessageInProgressError')).toBe(true);
    expect(lines.some((line) => line.message === 'lease expired mid-step; blocked')).toBe(true);
    expect(lines.some((line) => line.message === 'took over')).toBe(true);

    const statuses = await Promise.all(messages.map(statusOf));
    const blocked = messages.filter((_message, index) => statuses[index] === 'BLOCKED');
    expect(blocked.length).toBeGreaterThan(0);
    messages.forEach((message, index) => {
      const applied = ledger.get(message.id) ?? 0;
      // at most once, always
      expect(applied, `effect of message ${index}`).toBeLessThanOrEqual(1);
      // a completed message's effect applied exactly once
      if (statuses[index] === 'COMPLETED') expect(applied, `effect of completed message ${index}`).toBe(1);
      // nothing lost: completed, or in the dead-letter queue (ours, with a reason, or SQS redrive)
      const inDeadLetterQueue = deadLetters.has(message.id) || report.redriven.has(index);
      expect(statuses[index] === 'COMPLETED' || inDeadLetterQueue, `message ${index} is ${statuses[index]} and not in the DLQ`).toBe(true);
      if (statuses[index] === 'BLOCKED') expect(inDeadLetterQueue, `blocked message ${index} is in the DLQ`).toBe(true);
    });
    for (const letter of deadLetters.published) expect(['MessageBlockedError', 'PermanentError']).toContain(letter.errorName);

    // phase 2: the operator resolves from the ledger's truth and redrives until everything completes
    injector.disable();
    effectFaults = false;
    const operator = new BlockedMessages({ client: direct, tableName: config.inboxTableName, now: clock.now });
    for (let pass = 0; pass < 4; pass += 1) {
      for (const entry of await operator.list({ subscriber: SUBSCRIBER, limit: MESSAGES })) {
        const ran = (ledger.get(entry.eventId) ?? 0) > 0;
        await operator.resolve({ subscriber: SUBSCRIBER, eventId: entry.eventId, step: entry.step as string, status: ran ? 'SUCCESS' : 'TRY_AGAIN', reason: 'checked the ledger', expectedVersion: entry.version });
      }
      clock.advanceSeconds(LEASE_SECONDS + 1);
      const pending = (await Promise.all(messages.map(async (message) => ((await statusOf(message)) === 'COMPLETED' ? undefined : message)))).filter(
        (message): message is TestMessage => message !== undefined,
      );
      if (pending.length === 0) break;
      await deliverAtLeastOnce({ bodies: pending.map((message) => message.body), handler: consumer, seed: SEED + pass, duplicateRate: 0.1 });
    }

    const finalStatuses = await Promise.all(messages.map(statusOf));
    expect(finalStatuses.filter((status) => status !== 'COMPLETED')).toEqual([]);
    expect(messages.map((message) => ledger.get(message.id) ?? 0)).toEqual(messages.map(() => 1));
  });
});
