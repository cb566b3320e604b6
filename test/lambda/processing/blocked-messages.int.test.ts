import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import type { LeaseConsumerConfig } from '../../../lambda/config';
import { BlockedMessages, ResolveRefusedError } from '../../../operator/blocked/blocked-messages';
import { createLeaseConsumer } from '../../../lambda/processing/lease-consumer';
import { createMultiStepConsumer } from '../../../lambda/processing/multi-step-consumer';
import { ProcessingContextError } from '../../../lambda/processing/processing-context';
import type { ProcessingStep } from '../../../lambda/processing/types';
import { localClient, uniqueTableName } from '../../support/dynamodb-client';
import { startFaultProxy, type FaultProxy } from '../../support/fault-proxy';
import { rawRecord } from '../../support/proof/table-reads';
import { createInboxTable } from '../../support/proof/tables';
import { outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../helpers';
import { FakeClock, newMessage, type TestMessage } from './fixtures';

const WINDOW_SECONDS = 7200;

let client: DynamoDBClient;
let tableName: string;
let proxy: FaultProxy;

beforeAll(async () => {
  client = localClient();
  tableName = uniqueTableName('blocked-inbox');
  await createInboxTable(client, tableName);
  proxy = await startFaultProxy(inject('dynamoDbEndpoint'));
});
afterAll(() => proxy.stop());

const UPDATE = 'DynamoDB_20120810.UpdateItem';

const configFor = (subscriberName: string): LeaseConsumerConfig => ({
  subscriberName,
  inboxTableName: tableName,
  deduplicationWindowSeconds: WINDOW_SECONDS,
  leaseDurationSeconds: 60,
  // `show` prints the body when the subscriber chose to keep it
  keepBlockedMessageBody: true,
});

/** A two-step consumer whose second step fails with an unknown outcome until `healthy` is set. */
function invoicing(subscriber: string, clock = new FakeClock()) {
  const state = { healthy: false, created: [] as string[], emailed: [] as Array<{ eventId: string; context: unknown }> };
  const steps: ProcessingStep<unknown>[] = [
    { name: 'create-invoice', run: (envelope) => (state.created.push(envelope.id), { createdInvoiceId: `inv-${envelope.id}` }) },
    {
      name: 'email-invoice',
      run: (envelope, context) => {
        if (!state.healthy) throw new Error('SMTP timeout after DATA');
        state.emailed.push({ eventId: envelope.id, context: context.stepContext });
      },
    },
  ];
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = createMultiStepConsumer({ steps, client, config: configFor(subscriber), deadLetter, logger, now: clock.now, metricsSink: () => undefined });
  const deliver = (message: TestMessage) => handler({ Records: [sqsRecord(message.body, { messageId: `sqs-${message.id}` })] });
  return { state, deliver, lines, deadLetter, clock };
}

const operator = (clock = new FakeClock()) => new BlockedMessages({ client, tableName, now: clock.now });

describe('BlockedMessages', () => {
  test('lists the blocked messages of a subscriber, oldest first, and of all subscribers', async () => {
    const clock = new FakeClock();
    const a = invoicing('list-a', clock);
    const b = invoicing('list-b', clock);
    const first = newMessage();
    const second = newMessage();
    const other = newMessage();
    await a.deliver(first);
    clock.advanceSeconds(1);
    await a.deliver(second);
    await b.deliver(other);

    const listed = await operator().list({ subscriber: 'list-a' });
    const all = await operator().list();

    expect(listed).toEqual([
      expect.objectContaining({ subscriber: 'list-a', eventId: first.id, eventType: 'OrderPaid', step: 'email-invoice', mode: 'multi-step', version: 3, blockedAt: '2024-05-01T12:00:00.000Z' }),
      expect.objectContaining({ subscriber: 'list-a', eventId: second.id, blockedAt: '2024-05-01T12:00:01.000Z' }),
    ]);
    expect(listed[0]?.reason).toMatch(/step 'email-invoice' failed with an unknown outcome \(Error: SMTP timeout after DATA\)/);
    expect(all.map((message) => message.eventId)).toEqual(expect.arrayContaining([first.id, second.id, other.id]));
    expect(await operator().list({ subscriber: 'list-a', limit: 1 })).toHaveLength(1);
  });

  test('shows one record with its steps, context and blocked state', async () => {
    const flow = invoicing('show');
    const message = newMessage();
    await flow.deliver(message);

    const shown = await operator().get('show', message.id);

    expect(shown).toMatchObject({
      key: `show#${message.id}`,
      status: 'BLOCKED',
      activeStep: 'email-invoice',
      stepOrder: ['create-invoice', 'email-invoice'],
      steps: { 'create-invoice': { status: 'SUCCESS', attempts: 1 }, 'email-invoice': { status: 'PROCESSING', attempts: 1 } },
      context: { createdInvoiceId: `inv-${message.id}` },
      blocked: { subscriber: 'show', body: message.body, sqsMessageId: `sqs-${message.id}` },
    });
    expect(shown?.expiresAtEpochSeconds).toBeUndefined();
    expect(await operator().get('show', 'no-such-event')).toBeUndefined();
  });

  test('resolve SUCCESS on the blocked step completes the record; the redriven message is a duplicate', async () => {
    const clock = new FakeClock();
    const flow = invoicing('resolve-success', clock);
    const message = newMessage();
    await flow.deliver(message);
    clock.advanceSeconds(600);

    const resolved = await operator(clock).resolve({
      subscriber: 'resolve-success',
      eventId: message.id,
      step: 'email-invoice',
      status: 'SUCCESS',
      context: { emailMessageId: 'smtp-42' },
      reason: 'the customer confirmed the email arrived',
      resolvedBy: 'alice',
    });

    expect(resolved).toMatchObject({
      status: 'COMPLETED',
      version: 4,
      steps: { 'email-invoice': { status: 'SUCCESS' } },
      context: { createdInvoiceId: `inv-${message.id}`, emailMessageId: 'smtp-42' },
      expiresAtEpochSeconds: Math.floor(clock.now().getTime() / 1000) + WINDOW_SECONDS,
      resolutions: [{ at: clock.now().toISOString(), by: 'alice', step: 'email-invoice', status: 'SUCCESS', reason: 'the customer confirmed the email arrived' }],
    });
    expect(resolved.blocked).toBeUndefined();
    expect(resolved.activeStep).toBeUndefined();
    const item = await rawRecord(client, tableName, 'resolve-success', message.id);
    for (const blockedAttribute of ['blockedSubscriber', 'blockedAt', 'blockedReason', 'blockedSqsMessageId']) expect(item).not.toHaveProperty(blockedAttribute);
    expect(await operator().list({ subscriber: 'resolve-success' })).toEqual([]);
    flow.state.healthy = true;
    await flow.deliver(message);
    expect(outcomesOf(flow.lines)).toEqual(['blocked', 'duplicate']);
    expect(flow.state.emailed).toEqual([]);
  });

  test('resolve SUCCESS on a step that is not the last: the redelivery runs the rest with the context', async () => {
    const clock = new FakeClock();
    const flow = invoicing('resolve-middle', clock);
    const message = newMessage();
    flow.state.healthy = true;
    // block the first step: the worker crashed after creating the invoice, its lease expired
    const crashSteps: ProcessingStep<unknown>[] = [
      { name: 'create-invoice', run: () => Promise.reject(new Error('HTTP 504 from the accounting system')) },
      { name: 'email-invoice', run: () => undefined },
    ];
    const { logger } = recordingLogger();
    const blocking = createMultiStepConsumer({ steps: crashSteps, client, config: configFor('resolve-middle'), deadLetter: new RecordingDeadLetterPublisher(), logger, now: clock.now, metricsSink: () => undefined });
    await blocking({ Records: [sqsRecord(message.body)] });

    await operator(clock).resolve({ subscriber: 'resolve-middle', eventId: message.id, step: 'create-invoice', status: 'SUCCESS', context: { createdInvoiceId: 'inv-found-by-hand' } });
    const response = await flow.deliver(message);

    expect(response.batchItemFailures).toEqual([]);
    expect(flow.state.created).toEqual([]);
    expect(flow.state.emailed).toEqual([{ eventId: message.id, context: { createdInvoiceId: 'inv-found-by-hand' } }]);
    expect(await rawRecord(client, tableName, 'resolve-middle', message.id)).toMatchObject({ status: { S: 'COMPLETED' } });
  });

  test('resolve TRY_AGAIN: the redelivery runs the blocked step again and completes', async () => {
    const clock = new FakeClock();
    const flow = invoicing('resolve-retry', clock);
    const message = newMessage();
    await flow.deliver(message);

    const resolved = await operator(clock).resolve({ subscriber: 'resolve-retry', eventId: message.id, step: 'email-invoice', status: 'TRY_AGAIN' });
    expect(resolved).toMatchObject({ status: 'IN_PROGRESS', leaseExpiresAtEpochMilliseconds: 0, steps: { 'email-invoice': { status: 'TRY_AGAIN' } } });
    expect(resolved.owner).toBeUndefined();
    expect(resolved.resolutions).toEqual([expect.objectContaining({ by: 'operator', status: 'TRY_AGAIN' })]);
    flow.state.healthy = true;
    const response = await flow.deliver(message);

    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(flow.lines)).toEqual(['blocked', 'processed']);
    expect(flow.state.created).toEqual([message.id]);
    expect(flow.state.emailed).toEqual([{ eventId: message.id, context: { createdInvoiceId: `inv-${message.id}` } }]);
  });

  test('resolve works for lease mode: the effect step is resolved', async () => {
    const clock = new FakeClock();
    let fail = true;
    const sent: string[] = [];
    const { logger } = recordingLogger();
    const handler = createLeaseConsumer({
      handle: (envelope) => {
        if (fail) throw new Error('timeout');
        sent.push(envelope.id);
      },
      client,
      config: configFor('resolve-lease'),
      deadLetter: new RecordingDeadLetterPublisher(),
      logger,
      now: clock.now,
      metricsSink: () => undefined,
    });
    const message = newMessage();
    await handler({ Records: [sqsRecord(message.body)] });

    await operator(clock).resolve({ subscriber: 'resolve-lease', eventId: message.id, step: 'effect', status: 'TRY_AGAIN', expectedVersion: 2 });
    fail = false;
    await handler({ Records: [sqsRecord(message.body)] });

    expect(sent).toEqual([message.id]);
  });

  test('fails to resolve a record that is not blocked', async () => {
    const flow = invoicing('not-blocked');
    flow.state.healthy = true;
    const message = newMessage();
    await flow.deliver(message);

    const attempt = operator().resolve({ subscriber: 'not-blocked', eventId: message.id, step: 'email-invoice', status: 'SUCCESS' });

    await expect(attempt).rejects.toThrow(ResolveRefusedError);
    await expect(attempt).rejects.toMatchObject({ refusal: 'not-blocked', message: expect.stringMatching(/is not blocked \(it is COMPLETED\)/) });
  });

  test('fails to resolve a missing record', async () => {
    await expect(operator().resolve({ subscriber: 'nobody', eventId: 'nothing', step: 'effect', status: 'SUCCESS' })).rejects.toMatchObject({
      refusal: 'not-found',
      message: expect.stringContaining(`event 'nothing' of subscriber 'nobody' has no processing record in table '${tableName}'`),
    });
  });

  test('fails to resolve a step that is not the blocked one', async () => {
    const flow = invoicing('wrong-step');
    const message = newMessage();
    await flow.deliver(message);

    await expect(operator().resolve({ subscriber: 'wrong-step', eventId: message.id, step: 'create-invoice', status: 'TRY_AGAIN' })).rejects.toMatchObject({
      refusal: 'wrong-step',
      message: expect.stringMatching(/step 'create-invoice' is SUCCESS; the blocked step is 'email-invoice'/),
    });
    await expect(operator().resolve({ subscriber: 'wrong-step', eventId: message.id, step: 'print', status: 'TRY_AGAIN' })).rejects.toMatchObject({
      refusal: 'wrong-step',
      message: expect.stringMatching(/has no step 'print' \(steps: create-invoice, email-invoice\)/),
    });
  });

  test('fails to resolve at another version than expected', async () => {
    const flow = invoicing('version');
    const message = newMessage();
    await flow.deliver(message);

    await expect(
      operator().resolve({ subscriber: 'version', eventId: message.id, step: 'email-invoice', status: 'SUCCESS', expectedVersion: 2 }),
    ).rejects.toMatchObject({ refusal: 'version-mismatch', message: expect.stringMatching(/is at version 3, not the expected 2/) });
    expect(await rawRecord(client, tableName, 'version', message.id)).toMatchObject({ status: { S: 'BLOCKED' } });
  });

  test('keeps at most 20 resolutions', async () => {
    const clock = new FakeClock();
    const flow = invoicing('audit', clock);
    const message = newMessage();
    let resolutions = 0;
    for (let round = 0; round < 21; round += 1) {
      await flow.deliver(message);
      const resolved = await operator(clock).resolve({ subscriber: 'audit', eventId: message.id, step: 'email-invoice', status: 'TRY_AGAIN', reason: `round ${round}` });
      resolutions = resolved.resolutions.length;
      expect(resolved.resolutions.at(-1)?.reason).toBe(`round ${round}`);
    }
    expect(resolutions).toBe(20);
  });

  test('a lost response of the resolution is recognised as applied after the SDK retries: no refusal, nothing written twice', async () => {
    const clock = new FakeClock();
    const flow = invoicing('lost-resolve', clock);
    const message = newMessage();
    await flow.deliver(message);
    const throughProxy = new BlockedMessages({ client: localClient({ endpoint: proxy.endpoint }), tableName, now: clock.now });
    const updatesBefore = proxy.requestCount(UPDATE);
    const fired = proxy.inject({ target: UPDATE, fault: { kind: 'drop-response' } });

    const resolved = await throughProxy.resolve({ subscriber: 'lost-resolve', eventId: message.id, step: 'email-invoice', status: 'SUCCESS', reason: 'sent' });

    expect(fired()).toBe(1);
    expect(proxy.requestCount(UPDATE) - updatesBefore).toBe(2); // the applied write, then the SDK's retry whose condition failed
    expect(resolved).toMatchObject({ status: 'COMPLETED', version: 4, resolutions: [expect.objectContaining({ step: 'email-invoice', status: 'SUCCESS' })] });
    expect(await operator().get('lost-resolve', message.id)).toEqual(resolved);
  });

  test('a lost response of the resolution with no SDK retry is reconciled by one read', async () => {
    const clock = new FakeClock();
    const flow = invoicing('lost-resolve-once', clock);
    const message = newMessage();
    await flow.deliver(message);
    const noRetry = new BlockedMessages({ client: localClient({ endpoint: proxy.endpoint, maxAttempts: 1 }), tableName, now: clock.now });
    proxy.inject({ target: UPDATE, fault: { kind: 'drop-response' } });

    const resolved = await noRetry.resolve({ subscriber: 'lost-resolve-once', eventId: message.id, step: 'email-invoice', status: 'TRY_AGAIN' });

    expect(resolved).toMatchObject({ status: 'IN_PROGRESS', version: 4, steps: { 'email-invoice': { status: 'TRY_AGAIN' } } });
  });

  test("another operator's resolution that lands first is refused as a concurrent change, never taken for ours", async () => {
    const clock = new FakeClock();
    const flow = invoicing('two-operators', clock);
    const message = newMessage();
    await flow.deliver(message);
    const racing = localClient();
    let raced = false;
    // the other operator resolves between our read and our write
    racing.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand' && !raced) {
          raced = true;
          await operator(clock).resolve({ subscriber: 'two-operators', eventId: message.id, step: 'email-invoice', status: 'TRY_AGAIN', resolvedBy: 'bob' });
        }
        return next(args);
      },
      { step: 'initialize' },
    );

    const attempt = new BlockedMessages({ client: racing, tableName, now: clock.now }).resolve({
      subscriber: 'two-operators',
      eventId: message.id,
      step: 'email-invoice',
      status: 'SUCCESS',
      resolvedBy: 'alice',
    });

    await expect(attempt).rejects.toMatchObject({ name: 'ResolveRefusedError', refusal: 'concurrent-change' });
    expect(await operator().get('two-operators', message.id)).toMatchObject({
      status: 'IN_PROGRESS',
      version: 4,
      resolutions: [expect.objectContaining({ by: 'bob', status: 'TRY_AGAIN' })],
    });
  });

  test('refuses an operator context DynamoDB can not store, and writes nothing', async () => {
    const flow = invoicing('unstorable-context');
    const message = newMessage();
    await flow.deliver(message);
    const before = await rawRecord(client, tableName, 'unstorable-context', message.id);

    const attempt = operator().resolve({ subscriber: 'unstorable-context', eventId: message.id, step: 'email-invoice', status: 'SUCCESS', context: { smtpId: 2 ** 60 } });

    await expect(attempt).rejects.toThrow(ProcessingContextError);
    await expect(attempt).rejects.toThrow(/the operator context can not be stored: context\.smtpId is 1152921504606847000, beyond Number\.MAX_SAFE_INTEGER/);
    expect(await rawRecord(client, tableName, 'unstorable-context', message.id)).toEqual(before);
  });

  test('a step named like a member of every JavaScript object is not one of the record\'s steps', async () => {
    const flow = invoicing('prototype-step');
    const message = newMessage();
    await flow.deliver(message);

    await expect(operator().resolve({ subscriber: 'prototype-step', eventId: message.id, step: 'constructor', status: 'SUCCESS' })).rejects.toMatchObject({
      refusal: 'wrong-step',
      message: expect.stringMatching(/has no step 'constructor' \(steps: create-invoice, email-invoice\)/),
    });
  });
});
