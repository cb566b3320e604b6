/**
 * Proof of multi-step mode under at-least-once delivery: duplicates, concurrent duplicates, crashed invocations at
 * every point that matters (in any step), lost DynamoDB responses and throttling, leases that expire. Each step's
 * effect is recorded in a ledger outside DynamoDB. Claim: no step's effect ever runs twice; a completed message ran
 * every step exactly once, each step seeing what the earlier steps returned; nothing is lost; after an operator
 * resolves the blocked ones from the ledger's truth and redrives them, every message completes with every step's
 * effect exactly once.
 */
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import type { LeaseConsumerConfig } from '../../../lambda/config';
import { RetryableError } from '../../../lambda/errors';
import { BlockedMessages } from '../../../lambda/operator/blocked-messages';
import { createMultiStepConsumer } from '../../../lambda/processing/multi-step-consumer';
import type { ProcessingStep } from '../../../lambda/processing/types';
import { deliverAtLeastOnce, seededRandom } from '../../support/at-least-once';
import { localClient, uniqueTableName } from '../../support/dynamodb-client';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy';
import { recordingLogger } from '../helpers';
import { createInboxTable, FakeClock, newMessage, rawRecord, type TestMessage } from './fixtures';
import { CRASH_POINTS, CrashAwareDeadLetters, CrashInjector, injectDynamoDbFaults } from './proof-harness';

const SUBSCRIBER = 'fulfilment';
const MESSAGES = 70;
const LEASE_SECONDS = 60;
const SEED = 20240502;
const STEP_NAMES = ['reserve', 'charge', 'notify'] as const;

let proxy: FaultProxy;
let config: LeaseConsumerConfig;

beforeAll(async () => {
  proxy = await startFaultProxy(inject('dynamoDbEndpoint'));
  const inboxTableName = uniqueTableName('steps-proof');
  await createInboxTable(localClient(), inboxTableName);
  config = { subscriberName: SUBSCRIBER, inboxTableName, deduplicationWindowSeconds: 86_400, leaseDurationSeconds: LEASE_SECONDS };
});
afterAll(() => proxy.stop());

/** What step `step` returns for event `eventId` (and what an operator stores when resolving it as SUCCESS). */
const outputOf = (step: string, eventId: string): Record<string, string> => ({ [`${step}Ref`]: `${step}-${eventId}` });

describe('multi-step mode under at-least-once delivery', () => {
  test('no step runs twice, unknown outcomes block, nothing is lost; after the operator, every step applied exactly once', async () => {
    const random = seededRandom(SEED);
    const clock = new FakeClock();
    const injector = new CrashInjector(seededRandom(SEED + 1), 0.4);
    const client = localClient({ endpoint: proxy.endpoint });
    injector.instrument(client);
    const faults = injectDynamoDbFaults(proxy, seededRandom(SEED + 2), { lostResponses: 8, throttles: 4, spread: 400 });
    const deadLetters = new CrashAwareDeadLetters(injector);
    const { logger, lines } = recordingLogger();
    /** The external effects: how often each `<eventId>#<step>` was applied. */
    const ledger = new Map<string, number>();
    const applied = (eventId: string, step: string) => ledger.get(`${eventId}#${step}`) ?? 0;
    /** Steps that ran without the context of every earlier step. */
    const contextViolations: string[] = [];
    let effectFaults = true;
    const effectRandom = seededRandom(SEED + 3);

    const steps: ProcessingStep<unknown>[] = STEP_NAMES.map((name, position) => ({
      name,
      run: (envelope, context) => {
        injector.beforeEffect();
        const expected = Object.assign({}, ...STEP_NAMES.slice(0, position).map((earlier) => outputOf(earlier, envelope.id))) as Record<string, string>;
        if (JSON.stringify(context.stepContext) !== JSON.stringify(expected)) contextViolations.push(`${envelope.id}#${name}: ${JSON.stringify(context.stepContext)}`);
        const roll = effectFaults ? effectRandom() : 1;
        if (roll < 0.04) throw new RetryableError('rejected before it took effect');
        if (roll < 0.06) throw new Error('timed out before the request left');
        ledger.set(`${envelope.id}#${name}`, applied(envelope.id, name) + 1);
        if (roll < 0.08) throw new Error('timed out after the request was sent');
        injector.afterEffect();
        return outputOf(name, envelope.id);
      },
    }));
    const consumer = createMultiStepConsumer({ steps, client, config, deadLetter: deadLetters, logger, now: clock.now, metricsSink: () => undefined });
    const messages: TestMessage[] = Array.from({ length: MESSAGES }, (_unused, index) => newMessage({ order: index }));
    const direct = localClient();
    const statusOf = async (message: TestMessage) => (await rawRecord(direct, config.inboxTableName, SUBSCRIBER, message.id))?.status?.S;

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
    expect(lines.some((line) => line.message === 'took over')).toBe(true);

    const statuses = await Promise.all(messages.map(statusOf));
    expect(statuses.filter((status) => status === 'BLOCKED').length).toBeGreaterThan(0);
    expect(statuses.filter((status) => status === 'COMPLETED').length).toBeGreaterThan(MESSAGES / 2);
    messages.forEach((message, index) => {
      for (const step of STEP_NAMES) {
        expect(applied(message.id, step), `step ${step} of message ${index}`).toBeLessThanOrEqual(1);
        if (statuses[index] === 'COMPLETED') expect(applied(message.id, step), `step ${step} of completed message ${index}`).toBe(1);
      }
      const inDeadLetterQueue = deadLetters.has(message.id) || report.redriven.has(index);
      expect(statuses[index] === 'COMPLETED' || inDeadLetterQueue, `message ${index} is ${statuses[index]} and not in the DLQ`).toBe(true);
      if (statuses[index] === 'BLOCKED') expect(inDeadLetterQueue, `blocked message ${index} is in the DLQ`).toBe(true);
    });
    expect(contextViolations).toEqual([]);

    // phase 2: the operator resolves from the ledger's truth and redrives until everything completes
    injector.disable();
    effectFaults = false;
    const operator = new BlockedMessages({ client: direct, tableName: config.inboxTableName, now: clock.now });
    let resolvedSuccess = 0;
    let resolvedTryAgain = 0;
    for (let pass = 0; pass < 4; pass += 1) {
      for (const entry of await operator.list({ subscriber: SUBSCRIBER, limit: MESSAGES })) {
        const step = entry.step as string;
        const ran = applied(entry.eventId, step) > 0;
        if (ran) resolvedSuccess += 1;
        else resolvedTryAgain += 1;
        await operator.resolve({
          subscriber: SUBSCRIBER,
          eventId: entry.eventId,
          step,
          status: ran ? 'SUCCESS' : 'TRY_AGAIN',
          ...(ran ? { context: outputOf(step, entry.eventId) } : {}),
          reason: 'checked the ledger',
          expectedVersion: entry.version,
        });
      }
      clock.advanceSeconds(LEASE_SECONDS + 1);
      const pending = (await Promise.all(messages.map(async (message) => ((await statusOf(message)) === 'COMPLETED' ? undefined : message)))).filter(
        (message): message is TestMessage => message !== undefined,
      );
      if (pending.length === 0) break;
      await deliverAtLeastOnce({ bodies: pending.map((message) => message.body), handler: consumer, seed: SEED + pass, duplicateRate: 0.1 });
    }

    expect(resolvedSuccess + resolvedTryAgain).toBeGreaterThan(0);
    expect((await Promise.all(messages.map(statusOf))).filter((status) => status !== 'COMPLETED')).toEqual([]);
    for (const message of messages) expect(STEP_NAMES.map((step) => applied(message.id, step)), message.id).toEqual([1, 1, 1]);
    expect(contextViolations).toEqual([]);
  });
});
