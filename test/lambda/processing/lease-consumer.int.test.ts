import { UpdateItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LeaseConsumerConfig } from '../../../lambda/config';
import { PermanentError, RetryableError } from '../../../lambda/errors';
import { payloadFingerprint } from '../../../lambda/fingerprint';
import { BlockedMessages } from '../../../operator/blocked/blocked-messages';
import { createLeaseConsumer } from '../../../lambda/processing/lease-consumer';
import { MAX_RELEASE_ATTEMPTS } from '../../../lambda/processing/step-engine';
import { DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS, ProcessingRecordStore } from '../../../lambda/processing/record-store';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { LeaseConsumerOptions, LeaseHandlerContext } from '../../../lambda/processing/types';
import { localClient } from '../../support/dynamodb-client';
import type { FaultProxy } from '../../support/fault-proxy';
import { interruptibleClient } from '../../support/proof/crash-injector';
import { rawRecord } from '../../support/proof/table-reads';
import { startLeaseTestbed } from '../../support/proof/testbed';
import { outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../helpers';
import { deferred, FakeClock, newMessage, type TestMessage } from './fixtures';

const SUBSCRIBER = 'mailer';
const WINDOW_SECONDS = 3600;
const LEASE_SECONDS = 60;
const PUT = 'DynamoDB_20120810.PutItem';
const UPDATE = 'DynamoDB_20120810.UpdateItem';
const GET = 'DynamoDB_20120810.GetItem';

let client: DynamoDBClient;
let proxy: FaultProxy;
let config: LeaseConsumerConfig;

beforeAll(async () => {
  ({ client, proxy, config } = await startLeaseTestbed({ subscriberName: SUBSCRIBER, deduplicationWindowSeconds: WINDOW_SECONDS, leaseDurationSeconds: LEASE_SECONDS }));
});
afterAll(() => proxy.stop());

/** The external effect: sends recorded per event id, with the context each saw. */
class Mailbox {
  public readonly sent: Array<{ eventId: string; context: LeaseHandlerContext }> = [];
  public count(eventId: string): number {
    return this.sent.filter((entry) => entry.eventId === eventId).length;
  }
}

function consumer(overrides: Partial<LeaseConsumerOptions<unknown>> = {}, clock = new FakeClock()) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const mailbox = new Mailbox();
  const handler = createLeaseConsumer({
    handle: (envelope, context) => void mailbox.sent.push({ eventId: envelope.id, context }),
    client,
    config,
    deadLetter,
    logger,
    now: clock.now,
    metricsSink: () => undefined,
    ...overrides,
  });
  return { handler, lines, deadLetter, mailbox, clock };
}

const deliver = (handler: ReturnType<typeof consumer>['handler'], message: TestMessage, receiveCount = 1) =>
  handler({ Records: [sqsRecord(message.body, { messageId: `sqs-${message.id}`, receiveCount })] });

const record = (eventId: string) => rawRecord(client, config.inboxTableName, SUBSCRIBER, eventId);

/**
 * Delivers `message` to a new consumer whose effect, once started, waits until `resume()` (then runs `afterPause`);
 * returns once the effect has started. A worker that is slow, or that loses its lease meanwhile.
 */
async function startPaused(message: TestMessage, options: { clock?: FakeClock; receiveCount?: number; overrides?: Partial<LeaseConsumerOptions<unknown>>; afterPause?: () => void }) {
  const hold = deferred();
  const entered = deferred();
  let runs = 0;
  const worker = consumer(
    {
      ...options.overrides,
      handle: async () => {
        runs += 1;
        entered.resolve();
        await hold.promise;
        options.afterPause?.();
      },
    },
    options.clock,
  );
  const run = deliver(worker.handler, message, options.receiveCount);
  await entered.promise;
  const resume = () => {
    hold.resolve();
    return run;
  };
  return { ...worker, runs: () => runs, resume };
}

/**
 * A worker pauses mid-effect, its lease expires, a newer worker takes the message over and pauses too; then the stale
 * worker resumes (running `staleAfterPause`). Returns the record as it was before the stale worker resumed, its
 * response, and the newer worker (to resume).
 */
async function staleWorkerResumes(message: TestMessage, staleAfterPause?: () => void) {
  const clock = new FakeClock();
  const stale = await startPaused(message, { clock, ...(staleAfterPause ? { afterPause: staleAfterPause } : {}) });
  clock.advanceSeconds(LEASE_SECONDS + DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS + 1);
  const newer = await startPaused(message, { clock, receiveCount: 2, overrides: { onExpiredLease: 'retry' } });
  const before = await record(message.id);
  return { before, staleResponse: await stale.resume(), staleLines: stale.lines, newer };
}

describe('createLeaseConsumer', () => {
  test('the claim writes the record in the wire format: IN_PROGRESS, owned, leased, the effect step PROCESSING', async () => {
    const message = newMessage();
    let duringEffect: Awaited<ReturnType<typeof record>>;
    const { handler, clock } = consumer({
      newOwnerToken: () => 'owner-1',
      handle: async (envelope) => {
        duringEffect = await record(envelope.id);
      },
    });
    const nowEpochMilliseconds = clock.now().getTime();

    await deliver(handler, message);

    expect(duringEffect).toEqual({
      pk: { S: `${SUBSCRIBER}#${message.id}` },
      recordType: { S: 'ProcessingRecord.v1' },
      mode: { S: 'lease' },
      eventId: { S: message.id },
      eventType: { S: 'OrderPaid' },
      subscriber: { S: SUBSCRIBER },
      payloadFingerprint: { S: payloadFingerprint(message.envelope as never) },
      status: { S: 'IN_PROGRESS' },
      owner: { S: 'owner-1' },
      leaseExpiresAtEpochMilliseconds: { N: String(nowEpochMilliseconds + LEASE_SECONDS * 1000) },
      activeStep: { S: 'effect' },
      stepOrder: { L: [{ S: 'effect' }] },
      steps: { M: { effect: { M: { status: { S: 'PROCESSING' }, attempts: { N: '1' }, updatedAt: { S: '2024-05-01T12:00:00.000Z' } } } } },
      context: { M: {} },
      version: { N: '1' },
      lastWrite: { S: 'owner-1:1' },
      expiresAt: { N: String(nowEpochMilliseconds / 1000 + WINDOW_SECONDS) },
      deduplicationWindowSeconds: { N: String(WINDOW_SECONDS) },
      createdAt: { S: '2024-05-01T12:00:00.000Z' },
      updatedAt: { S: '2024-05-01T12:00:00.000Z' },
    });
  });

  test('the completion write marks the record COMPLETED and removes owner, active step and lease', async () => {
    const message = newMessage();
    const { handler, lines, mailbox } = consumer({ newOwnerToken: () => 'owner-2' });

    const response = await deliver(handler, message);

    expect(response.batchItemFailures).toEqual([]);
    expect(mailbox.count(message.id)).toBe(1);
    expect(outcomesOf(lines)).toEqual(['processed']);
    const item = await record(message.id);
    expect(item).toMatchObject({
      status: { S: 'COMPLETED' },
      steps: { M: { effect: { M: { status: { S: 'SUCCESS' }, attempts: { N: '1' } } } } },
      version: { N: '2' },
      lastWrite: { S: 'owner-2:2' },
    });
    expect(item).not.toHaveProperty('owner');
    expect(item).not.toHaveProperty('activeStep');
    expect(item).not.toHaveProperty('leaseExpiresAtEpochMilliseconds');
  });

  test('hands the effect an idempotency key, its lease and the attempt', async () => {
    const message = newMessage();
    const { handler, mailbox, clock } = consumer();

    await deliver(handler, message);

    expect(mailbox.sent[0]?.context).toMatchObject({
      idempotencyKey: `${SUBSCRIBER}#${message.id}`,
      leaseExpiresAtEpochMilliseconds: clock.now().getTime() + LEASE_SECONDS * 1000,
      attempt: 1,
    });
  });

  test('a redelivery after completion is a duplicate: the effect does not run again', async () => {
    const message = newMessage();
    const { handler, lines, mailbox } = consumer();

    await deliver(handler, message);
    const second = await deliver(handler, message, 2);

    expect(second.batchItemFailures).toEqual([]);
    expect(mailbox.count(message.id)).toBe(1);
    expect(outcomesOf(lines)).toEqual(['processed', 'duplicate']);
  });

  test('an event id reused with another payload is dead-lettered as PayloadMismatchError', async () => {
    const message = newMessage({ amountCents: 1 });
    const reused = newMessage({ amountCents: 2 }, { id: message.id });
    const { handler, deadLetter, mailbox } = consumer();

    await deliver(handler, message);
    const response = await deliver(handler, reused);

    expect(response.batchItemFailures).toEqual([]);
    expect(mailbox.count(message.id)).toBe(1);
    expect(deadLetter.published).toEqual([expect.objectContaining({ body: reused.body, errorName: 'PayloadMismatchError', eventId: message.id })]);
  });

  test('a delivery that finds a live lease is a batch item failure and does not run the effect', async () => {
    const message = newMessage();
    const first = await startPaused(message, {});

    const concurrent = await deliver(first.handler, message);
    await first.resume();

    expect(concurrent.batchItemFailures).toEqual([{ itemIdentifier: `sqs-${message.id}` }]);
    expect(first.runs()).toBe(1);
    expect(first.lines.find((line) => line.outcome === 'failed')).toMatchObject({ level: 'INFO', error: { name: 'MessageInProgressError' } });
  });

  test('a record whose lease expired with no step active is taken over, and the effect runs', async () => {
    const message = newMessage();
    const { handler, mailbox, clock } = consumer({ newOwnerToken: () => 'owner-new' });
    // a holder that was released (or resolved) and left: IN_PROGRESS, no active step, lease over
    const first = consumer({ handle: () => Promise.reject(new RetryableError('mail server said 503 before accepting')) }, clock);
    await deliver(first.handler, message);
    await client.send(
      new UpdateItemCommand({
        TableName: config.inboxTableName,
        Key: { pk: { S: `${SUBSCRIBER}#${message.id}` } },
        UpdateExpression: 'SET #owner = :ghost, #lease = :past',
        ExpressionAttributeNames: { '#owner': 'owner', '#lease': 'leaseExpiresAtEpochMilliseconds' },
        // over by more than the clock-skew allowance
        ExpressionAttributeValues: { ':ghost': { S: 'ghost' }, ':past': { N: String(clock.now().getTime() - DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS * 1000 - 1) } },
      }),
    );

    const response = await deliver(handler, message);

    expect(response.batchItemFailures).toEqual([]);
    expect(mailbox.count(message.id)).toBe(1);
    expect(mailbox.sent[0]?.context.attempt).toBe(2);
    expect(await record(message.id)).toMatchObject({ status: { S: 'COMPLETED' }, lastWrite: { S: 'owner-new:4' } });
  });

  test('a record whose holder crashed mid-effect is blocked when its lease expires: DLQ, BLOCKED, body kept, TTL removed, listed', async () => {
    const message = newMessage();
    const clock = new FakeClock();
    const crashing = interruptibleClient();
    const first = consumer({ client: crashing.client, handle: () => crashing.crash() }, clock);
    const crashed = await deliver(first.handler, message);
    expect(crashed.batchItemFailures).toHaveLength(1);

    const { handler, deadLetter, mailbox, lines } = consumer({}, clock);
    const tooEarly = await deliver(handler, message, 2);
    expect(tooEarly.batchItemFailures).toHaveLength(1); // the lease is still live
    clock.advanceSeconds(LEASE_SECONDS + DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS + 1);
    const response = await deliver(handler, message, 3);

    expect(response.batchItemFailures).toEqual([]);
    expect(mailbox.count(message.id)).toBe(0);
    expect(outcomesOf(lines)).toEqual(['failed', 'blocked']);
    expect(deadLetter.published).toEqual([
      expect.objectContaining({ body: message.body, errorName: 'MessageBlockedError', errorMessage: expect.stringMatching(/step 'effect' was PROCESSING under owner '.+', whose lease expired/) }),
    ]);
    const item = await record(message.id);
    expect(item).toMatchObject({
      status: { S: 'BLOCKED' },
      activeStep: { S: 'effect' },
      blockedSubscriber: { S: SUBSCRIBER },
      blockedAt: { S: clock.now().toISOString() },
      steps: { M: { effect: { M: { status: { S: 'PROCESSING' } } } } },
    });
    // the payload is not kept at rest by default: the dead letter above is where it is
    expect(item).not.toHaveProperty('blockedBody');
    expect(item).not.toHaveProperty('expiresAt');
    expect(item).not.toHaveProperty('owner');
    const listed = await new BlockedMessages({ client, tableName: config.inboxTableName }).list({ subscriber: SUBSCRIBER });
    expect(listed).toContainEqual(expect.objectContaining({ eventId: message.id, step: 'effect', subscriber: SUBSCRIBER }));
  });

  test('another copy of a blocked message (an SNS or relay duplicate) is acknowledged as already-blocked: no dead letter, no write', async () => {
    const message = newMessage();
    const emf: string[] = [];
    const { handler, deadLetter, lines } = consumer({
      client: localClient({ endpoint: proxy.endpoint }),
      handle: () => Promise.reject(new Error('connection reset after sending')),
      metricsSink: (line) => void emf.push(line),
    });
    await deliver(handler, message);
    const before = await record(message.id);
    const [puts, updates] = [proxy.requestCount(PUT), proxy.requestCount(UPDATE)];

    const response = await handler({ Records: [sqsRecord(message.body, { messageId: `sqs-copy-${message.id}` })] });

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetter.published.map((letter) => letter.sourceMessageId)).toEqual([`sqs-${message.id}`]);
    expect([proxy.requestCount(PUT) - puts, proxy.requestCount(UPDATE) - updates]).toEqual([1, 0]); // the claim that found it, nothing else
    expect(await record(message.id)).toEqual(before);
    expect(outcomesOf(lines)).toEqual(['blocked', 'already-blocked']);
    expect(lines.filter((line) => line.outcome !== undefined).at(-1)).toMatchObject({
      level: 'INFO',
      sqsMessageId: `sqs-copy-${message.id}`,
      detail: expect.stringMatching(
        /blocked for an operator since .* at step 'effect' by SQS message 'sqs-.+'; the dead letter of SQS message 'sqs-.+' holds the message \(its send was confirmed\)/,
      ),
    });
    expect(emf.map((line) => JSON.parse(line) as Record<string, unknown>)).toEqual([
      expect.objectContaining({ Blocked: 1, AlreadyBlocked: 0 }),
      expect.objectContaining({ Blocked: 0, AlreadyBlocked: 1 }),
    ]);
  });

  test('a copy redriven with a new message id, after SQS moved the blocked message to the DLQ itself (our dead letter never sent), is dead-lettered: the event is not lost', async () => {
    const message = newMessage();
    // the blocking delivery's own dead-letter send fails: SQS keeps the message and, at maxReceiveCount, moves it to
    // the DLQ itself, without our reason attributes; a redrive gives it a NEW message id
    const failing = consumer({ handle: () => Promise.reject(new Error('connection reset after sending')), deadLetter: new RecordingDeadLetterPublisher(true) });
    const first = await deliver(failing.handler, message);
    expect(first.batchItemFailures).toHaveLength(1);
    expect(await record(message.id)).toMatchObject({ status: { S: 'BLOCKED' } });
    const { handler, deadLetter, lines } = consumer({ handle: () => Promise.reject(new Error('must not run')) });

    const response = await handler({ Records: [sqsRecord(message.body, { messageId: `sqs-redriven-by-sqs-${message.id}` })] });

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetter.published.map((letter) => [letter.sourceMessageId, letter.errorName])).toEqual([[`sqs-redriven-by-sqs-${message.id}`, 'MessageBlockedError']]);
    expect(outcomesOf(lines)).toEqual(['blocked']);
  });

  test('a copy of a blocked message is acknowledged as already-blocked only once the blocking dead letter was confirmed and recorded', async () => {
    const message = newMessage();
    const { handler, deadLetter, lines } = consumer({ handle: () => Promise.reject(new Error('connection reset after sending')) });
    await deliver(handler, message);

    expect(await record(message.id)).toMatchObject({ status: { S: 'BLOCKED' }, blockedDeadLetterSqsMessageId: { S: `sqs-${message.id}` } });
    await handler({ Records: [sqsRecord(message.body, { messageId: `sqs-copy-${message.id}` })] });
    expect(deadLetter.published.map((letter) => letter.sourceMessageId)).toEqual([`sqs-${message.id}`]);
    expect(outcomesOf(lines)).toEqual(['blocked', 'already-blocked']);
  });

  test('with the body kept on the record, a copy of a blocked message is acknowledged even when no dead letter was confirmed', async () => {
    const message = newMessage();
    const failing = consumer({
      handle: () => Promise.reject(new Error('connection reset after sending')),
      deadLetter: new RecordingDeadLetterPublisher(true),
      config: { ...config, keepBlockedMessageBody: true },
    });
    await deliver(failing.handler, message);
    const { handler, deadLetter, lines } = consumer({ config: { ...config, keepBlockedMessageBody: true } });

    const response = await handler({ Records: [sqsRecord(message.body, { messageId: `sqs-copy-${message.id}` })] });

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetter.published).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['already-blocked']);
  });

  test('a dead letter of a blocked message redriven before the block is resolved goes back to the DLQ (it is the only copy)', async () => {
    const message = newMessage();
    const { handler, deadLetter, lines } = consumer({ handle: () => Promise.reject(new Error('connection reset after sending')) });
    await deliver(handler, message);
    const before = await record(message.id);
    const redriven = {
      ...sqsRecord(message.body, { messageId: `sqs-redriven-${message.id}` }),
      messageAttributes: { iefErrorName: { stringValue: 'MessageBlockedError', dataType: 'String' } },
    };

    const response = await handler({ Records: [redriven] });

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetter.published.map((letter) => [letter.sourceMessageId, letter.errorName])).toEqual([
      [`sqs-${message.id}`, 'MessageBlockedError'],
      [`sqs-redriven-${message.id}`, 'MessageBlockedError'],
    ]);
    expect(deadLetter.published[1]?.errorMessage).toMatch(/is blocked for an operator since .* at step 'effect'.*resolve the record before redriving/);
    expect(outcomesOf(lines)).toEqual(['blocked', 'blocked']);
    // the record is unchanged but for the note naming the dead letter now holding the message
    expect(await record(message.id)).toEqual({ ...before, blockedDeadLetterSqsMessageId: { S: `sqs-redriven-${message.id}` }, blockedDeadLetterAt: expect.anything() });
  });

  test('the message whose delivery blocked it, delivered again after its dead-letter send failed, goes to the DLQ again, the record unchanged but for the note of that send', async () => {
    const message = newMessage();
    const failing = consumer({ handle: () => Promise.reject(new Error('connection reset after sending')), deadLetter: new RecordingDeadLetterPublisher(true) });
    await deliver(failing.handler, message);
    const before = await record(message.id);
    const { handler, deadLetter } = consumer({ handle: () => Promise.reject(new Error('must not run')) });

    await deliver(handler, message, 2);

    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['MessageBlockedError']);
    expect(deadLetter.published[0]?.errorMessage).toMatch(/is blocked for an operator since .* at step 'effect': step 'effect' failed with an unknown outcome/);
    const after = await record(message.id);
    expect(after).toMatchObject({ blockedDeadLetterSqsMessageId: { S: `sqs-${message.id}` } });
    const { blockedDeadLetterSqsMessageId: _note, blockedDeadLetterAt: _at, ...rest } = after ?? {};
    expect(rest).toEqual(before);
  });

  test('the message whose delivery blocked it, delivered again after its dead letter was sent (its acknowledgement lost), is acknowledged: one dead letter', async () => {
    const message = newMessage();
    const { handler, deadLetter, lines } = consumer({ handle: () => Promise.reject(new Error('connection reset after sending')) });
    await deliver(handler, message);

    const response = await deliver(handler, message, 2);

    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetter.published.map((letter) => letter.sourceMessageId)).toEqual([`sqs-${message.id}`]);
    expect(outcomesOf(lines)).toEqual(['blocked', 'already-blocked']);
  });

  test('with batchRead, the batch read never takes an IN_PROGRESS record for proof: a copy of a message whose holder is mid-effect is retried, not acknowledged', async () => {
    const message = newMessage();
    const crashing = interruptibleClient();
    await deliver(consumer({ client: crashing.client, handle: () => crashing.crash() }).handler, message); // IN_PROGRESS, lease live
    const { handler, mailbox, lines } = consumer({ batchRead: true });
    const other = newMessage();

    const response = await handler({ Records: [sqsRecord(message.body, { messageId: `sqs-copy-${message.id}`, receiveCount: 2 }), sqsRecord(other.body)] });

    expect(response.batchItemFailures).toEqual([{ itemIdentifier: `sqs-copy-${message.id}` }]);
    expect(mailbox.count(message.id)).toBe(0);
    expect(lines.filter((line) => line.eventId === message.id).map((line) => line.outcome)).not.toContain('duplicate');
    expect(await record(message.id)).toMatchObject({ status: { S: 'IN_PROGRESS' } });
  });

  test("with onExpiredLease 'retry', a record whose holder crashed mid-effect is taken over and the effect runs again", async () => {
    const message = newMessage();
    const clock = new FakeClock();
    const crashing = interruptibleClient();
    const first = consumer({ client: crashing.client, handle: () => crashing.crash() }, clock);
    await deliver(first.handler, message);
    clock.advanceSeconds(LEASE_SECONDS + DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS + 1);
    const { handler, mailbox, lines } = consumer({ onExpiredLease: 'retry' }, clock);

    const response = await deliver(handler, message, 2);

    expect(response.batchItemFailures).toEqual([]);
    expect(mailbox.sent.map((entry) => entry.context.attempt)).toEqual([2]);
    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(await record(message.id)).toMatchObject({ status: { S: 'COMPLETED' } });
  });

  test('a RetryableError releases the lease (TRY_AGAIN) and the next delivery runs the effect at once', async () => {
    const message = newMessage();
    let calls = 0;
    const { handler, lines } = consumer({
      handle: () => {
        calls += 1;
        if (calls === 1) throw new RetryableError('mail server answered 429 before accepting');
      },
    });

    const first = await deliver(handler, message);
    const released = await record(message.id);
    const second = await deliver(handler, message, 2); // same clock: no waiting for a lease

    expect(first.batchItemFailures).toHaveLength(1);
    expect(released).toMatchObject({
      status: { S: 'IN_PROGRESS' },
      leaseExpiresAtEpochMilliseconds: { N: '0' },
      steps: { M: { effect: { M: { status: { S: 'TRY_AGAIN' }, attempts: { N: '1' } } } } },
    });
    expect(released).not.toHaveProperty('owner');
    expect(released).not.toHaveProperty('activeStep');
    expect(second.batchItemFailures).toEqual([]);
    expect(calls).toBe(2);
    expect(outcomesOf(lines)).toEqual(['failed', 'processed']);
  });

  test('a RetryableError whose lease release is throttled is released by a retry: the next delivery runs the effect at once', async () => {
    const message = newMessage();
    let calls = 0;
    const { handler, lines } = consumer({
      client: localClient({ endpoint: proxy.endpoint, maxAttempts: 1 }), // no SDK retry: the runtime's own must do it
      handle: () => {
        calls += 1;
        if (calls === 1) throw new RetryableError('mail server answered 429 before accepting');
      },
    });
    const throttled = proxy.inject({ target: UPDATE, fault: { kind: 'throttle' } }); // the first UpdateItem: the release

    const first = await deliver(handler, message);
    const released = await record(message.id);
    const second = await deliver(handler, message, 2); // same clock: no waiting for a lease

    expect(throttled()).toBe(1);
    expect(first.batchItemFailures).toHaveLength(1);
    expect(released).toMatchObject({ status: { S: 'IN_PROGRESS' }, steps: { M: { effect: { M: { status: { S: 'TRY_AGAIN' } } } } } });
    expect(second.batchItemFailures).toEqual([]);
    expect(calls).toBe(2);
    expect(outcomesOf(lines)).toEqual(['failed', 'processed']);
    expect(lines.filter((line) => line.message === 'lease release failed; retrying')).toHaveLength(1);
  });

  test('a release that fails every attempt says truthfully what follows: the step stays PROCESSING and is blocked once the lease expires', async () => {
    const message = newMessage();
    const clock = new FakeClock();
    const { handler, lines } = consumer(
      { client: localClient({ endpoint: proxy.endpoint, maxAttempts: 1 }), handle: () => Promise.reject(new RetryableError('rejected before sending')) },
      clock,
    );
    const updatesBefore = proxy.requestCount(UPDATE);
    const throttled = proxy.inject({ target: UPDATE, times: MAX_RELEASE_ATTEMPTS, fault: { kind: 'throttle' } });

    const response = await deliver(handler, message);

    expect(throttled()).toBe(MAX_RELEASE_ATTEMPTS);
    expect(proxy.requestCount(UPDATE) - updatesBefore).toBe(MAX_RELEASE_ATTEMPTS);
    expect(response.batchItemFailures).toHaveLength(1);
    expect(lines.find((line) => String(line.message).startsWith('lease release failed after'))).toMatchObject({
      level: 'ERROR',
      message: `lease release failed after ${MAX_RELEASE_ATTEMPTS} attempts; the step stays PROCESSING`,
      detail: expect.stringMatching(/^the step did not take effect, but once its lease expires .* the next delivery blocks the message for an operator: resolve it TRY_AGAIN$/),
    });
    expect(await record(message.id)).toMatchObject({ status: { S: 'IN_PROGRESS' }, steps: { M: { effect: { M: { status: { S: 'PROCESSING' } } } } } });
    // and that is what happens
    clock.advanceSeconds(LEASE_SECONDS + 120); // past the lease, within the deduplication window
    const after = consumer({}, clock);
    await deliver(after.handler, message, 2);
    expect(outcomesOf(after.lines)).toEqual(['blocked']);
    expect(after.mailbox.count(message.id)).toBe(0);
  });

  test('a PermanentError releases the lease and dead-letters the message; a redrive runs the effect again', async () => {
    const message = newMessage();
    let calls = 0;
    const { handler, deadLetter } = consumer({
      handle: () => {
        calls += 1;
        if (calls === 1) throw new PermanentError('recipient address rejected');
      },
    });

    await deliver(handler, message);
    expect(deadLetter.published).toEqual([expect.objectContaining({ errorName: 'PermanentError', errorMessage: 'recipient address rejected' })]);
    expect(await record(message.id)).toMatchObject({ status: { S: 'IN_PROGRESS' }, steps: { M: { effect: { M: { status: { S: 'TRY_AGAIN' } } } } } });
    expect((await deliver(handler, message, 1)).batchItemFailures).toEqual([]);
    expect(calls).toBe(2);
  });

  test('an error of unknown outcome blocks the message with the error as the cause', async () => {
    const message = newMessage();
    const { handler, deadLetter, lines } = consumer({ handle: () => Promise.reject(new Error('socket hang up')) });

    const response = await deliver(handler, message);

    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['blocked']);
    expect(deadLetter.published).toEqual([expect.objectContaining({ errorName: 'MessageBlockedError', errorMessage: expect.stringContaining('Error: socket hang up') })]);
    expect(lines.find((line) => line.outcome === 'blocked')).toMatchObject({ error: { name: 'MessageBlockedError', cause: { message: 'socket hang up' } } });
    const item = await record(message.id);
    expect(item).toMatchObject({ status: { S: 'BLOCKED' }, activeStep: { S: 'effect' } });
    expect(item).not.toHaveProperty('blockedBody');
    expect(item).not.toHaveProperty('expiresAt');
  });

  test('keeps the blocked message body on the record only when keepBlockedMessageBody is chosen', async () => {
    const message = newMessage();
    const { handler } = consumer({ config: { ...config, keepBlockedMessageBody: true }, handle: () => Promise.reject(new Error('socket hang up')) });
    await deliver(handler, message);
    expect(await record(message.id)).toMatchObject({ status: { S: 'BLOCKED' }, blockedBody: { S: message.body } });
  });

  test('classifyError decides what an error means', async () => {
    const message = newMessage();
    const { handler, lines } = consumer({
      handle: () => Promise.reject(Object.assign(new Error('HTTP 400'), { statusCode: 400 })),
      classifyError: (error) => ((error as { statusCode?: number }).statusCode === 400 ? 'retry' : 'unknown'),
    });

    await deliver(handler, message);

    expect(outcomesOf(lines)).toEqual(['failed']);
    expect(await record(message.id)).toMatchObject({ steps: { M: { effect: { M: { status: { S: 'TRY_AGAIN' } } } } } });
  });

  test("an error classified 'permanent' is dead-lettered even when it is not a PermanentError", async () => {
    const message = newMessage();
    const { handler, deadLetter } = consumer({
      handle: () => Promise.reject(Object.assign(new Error('HTTP 422: unknown recipient'), { statusCode: 422 })),
      classifyError: (error) => ((error as { statusCode?: number }).statusCode === 422 ? 'permanent' : 'unknown'),
    });

    await deliver(handler, message);

    expect(deadLetter.published).toEqual([
      // the step's own error is redacted (issue 22, item 5): its numbers and quoted values, not its words
      expect.objectContaining({ errorName: 'PermanentError', errorMessage: "step 'effect' failed permanently: Error: HTTP #: unknown recipient" }),
    ]);
    expect(await record(message.id)).toMatchObject({ steps: { M: { effect: { M: { status: { S: 'TRY_AGAIN' } } } } } });
  });

  test('a stale worker whose lease was taken over can not complete: LeaseLostError, the record unchanged', async () => {
    const message = newMessage();

    const { before, staleResponse, staleLines, newer } = await staleWorkerResumes(message);

    expect(staleResponse.batchItemFailures).toHaveLength(1);
    expect(await record(message.id)).toEqual(before);
    expect(staleLines.find((line) => line.outcome === 'failed')).toMatchObject({ error: { name: 'LeaseLostError' } });
    expect(staleLines.find((line) => line.message === 'step effect may have run under a lost lease')).toMatchObject({ level: 'ERROR', step: 'effect' });
    expect((await newer.resume()).batchItemFailures).toEqual([]);
    expect(await record(message.id)).toMatchObject({ status: { S: 'COMPLETED' } });
  });

  test('a stale worker whose lease was taken over can not release it either', async () => {
    const message = newMessage();

    const { before, staleResponse, staleLines, newer } = await staleWorkerResumes(message, () => {
      throw new RetryableError('rejected before sending');
    });

    expect(staleResponse.batchItemFailures).toHaveLength(1);
    expect(await record(message.id)).toEqual(before);
    expect(staleLines.find((line) => line.outcome === 'failed')).toMatchObject({ error: { name: 'LeaseLostError' } });
    await newer.resume();
  });

  test('a lost response of the completion write is recognised by lastWrite after the SDK retries', async () => {
    const message = newMessage();
    const { handler, mailbox, lines } = consumer({ client: localClient({ endpoint: proxy.endpoint }) });
    const updatesBefore = proxy.requestCount(UPDATE);
    const fired = proxy.inject({ target: UPDATE, fault: { kind: 'drop-response' } });

    const response = await deliver(handler, message);

    expect(fired()).toBe(1);
    expect(proxy.requestCount(UPDATE) - updatesBefore).toBe(2); // the applied write, then the SDK's retry whose condition failed
    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(mailbox.count(message.id)).toBe(1);
    expect(await record(message.id)).toMatchObject({ status: { S: 'COMPLETED' }, version: { N: '2' } });
  });

  test('a lost response of the claim is recognised by lastWrite: the effect runs once', async () => {
    const message = newMessage();
    const { handler, mailbox } = consumer({ client: localClient({ endpoint: proxy.endpoint }) });
    const fired = proxy.inject({ target: PUT, fault: { kind: 'drop-response' } });

    const response = await deliver(handler, message);

    expect(fired()).toBe(1);
    expect(response.batchItemFailures).toEqual([]);
    expect(mailbox.count(message.id)).toBe(1);
  });

  test('a lost response with no SDK retry is reconciled by one read', async () => {
    const message = newMessage();
    const { handler, mailbox } = consumer({ client: localClient({ endpoint: proxy.endpoint, maxAttempts: 1 }) });
    const getsBefore = proxy.requestCount(GET);
    proxy.inject({ target: UPDATE, fault: { kind: 'drop-response' } });

    const response = await deliver(handler, message);

    expect(response.batchItemFailures).toEqual([]);
    expect(proxy.requestCount(GET) - getsBefore).toBe(1);
    expect(mailbox.count(message.id)).toBe(1);
    expect(await record(message.id)).toMatchObject({ status: { S: 'COMPLETED' } });
  });

  test.each([
    // [PutItem, UpdateItem, GetItem, BatchGetItem] per delivery of a one-record batch, which never pays the batch read
    { batchRead: false, duplicateInPair: [2, 1, 0, 0], perPairRead: 0, what: 'the failed claim answers a duplicate (1 write unit), no reads' },
    { batchRead: true, duplicateInPair: [1, 1, 0, 1], perPairRead: 1, what: 'in a batch of two the batch read answers a duplicate with no write' },
  ])(
    'DynamoDB requests per message with batchRead $batchRead: 2 writes processed, 3 blocked (the dead letter recorded), 1 for a copy; $what',
    async ({ batchRead, duplicateInPair, perPairRead }) => {
      const counted = localClient({ endpoint: proxy.endpoint });
      const processed = consumer({ client: counted, batchRead });
      const blocking = consumer({ client: counted, batchRead, handle: () => Promise.reject(new Error('timeout')) });
      const requests = (target: string) => proxy.requestCount(target);
      const snapshot = () => [requests(PUT), requests(UPDATE), requests(GET), requests('DynamoDB_20120810.BatchGetItem')];
      const delta = async (run: () => Promise<unknown>) => {
        const before = snapshot();
        await run();
        return snapshot().map((count, index) => count - (before[index] as number));
      };
      const message = newMessage();
      const unlucky = newMessage();
      const fresh = newMessage();

      expect(await delta(() => deliver(processed.handler, message))).toEqual([1, 1, 0, 0]);
      expect(await delta(() => deliver(processed.handler, message, 2))).toEqual([1, 0, 0, 0]); // one record: no batch read
      // a batch of the duplicate and a new message: the new one is claimed and completed (1 + 1); the duplicate costs a
      // failed claim without the batch read, nothing with it
      const pair = { Records: [sqsRecord(message.body, { messageId: `sqs-pair-${message.id}`, receiveCount: 3 }), sqsRecord(fresh.body, { messageId: `sqs-${fresh.id}` })] };
      expect(await delta(() => processed.handler(pair))).toEqual([duplicateInPair[0], duplicateInPair[1], 0, perPairRead]);
      expect(processed.mailbox.count(message.id)).toBe(1);
      // claim, block, and the note that the dead letter was sent
      expect(await delta(() => deliver(blocking.handler, unlucky))).toEqual([1, 2, 0, 0]);
      // the same message again (its acknowledgement lost): its dead letter is known to hold it, so only the claim that found it
      expect(await delta(() => deliver(blocking.handler, unlucky, 2))).toEqual([1, 0, 0, 0]);
    },
  );

  test('throttled writes are retried by the SDK', async () => {
    const message = newMessage();
    const { handler, mailbox } = consumer({ client: localClient({ endpoint: proxy.endpoint }) });
    const putThrottled = proxy.inject({ target: PUT, fault: { kind: 'throttle' } });
    const updateThrottled = proxy.inject({ target: UPDATE, fault: { kind: 'throttle', errorType: 'ProvisionedThroughputExceededException' } });

    const response = await deliver(handler, message);

    expect([putThrottled(), updateThrottled()]).toEqual([1, 1]);
    expect(response.batchItemFailures).toEqual([]);
    expect(mailbox.count(message.id)).toBe(1);
    expect(await record(message.id)).toMatchObject({ status: { S: 'COMPLETED' } });
  });

  test('an expired record that TTL has not deleted yet is claimed afresh', async () => {
    const message = newMessage();
    const { handler, mailbox, clock } = consumer();
    await client.send(
      new PutItemCommand({
        TableName: config.inboxTableName,
        Item: {
          pk: { S: `${SUBSCRIBER}#${message.id}` },
          recordType: { S: 'ProcessingRecord.v1' },
          status: { S: 'COMPLETED' },
          version: { N: '2' },
          expiresAt: { N: String(Math.floor(clock.now().getTime() / 1000) - 1) },
        },
      }),
    );

    const response = await deliver(handler, message);

    expect(response.batchItemFailures).toEqual([]);
    expect(mailbox.count(message.id)).toBe(1);
    expect(await record(message.id)).toMatchObject({ status: { S: 'COMPLETED' }, version: { N: '2' }, mode: { S: 'lease' } });
  });

  test('dead-letters an event whose id is too long for the record key, before any request, instead of failing on every retry', async () => {
    const requestsBefore = proxy.requestCount();
    const { handler, deadLetter, mailbox, lines } = consumer({ client: localClient({ endpoint: proxy.endpoint }) });
    const message = newMessage(undefined, { id: 'x'.repeat(2042) }); // 'mailer#' + 2042 characters: 2049 bytes

    const response = await deliver(handler, message);

    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['dead-lettered']);
    expect(mailbox.count(message.id)).toBe(0);
    expect(deadLetter.published).toEqual([
      expect.objectContaining({
        errorName: 'PermanentError',
        errorMessage: "event id of 2042 characters is too long for the inbox: its key 'mailer#<id>' is 2049 bytes, but DynamoDB allows at most 2048 bytes for a partition key value",
      }),
    ]);
    expect(proxy.requestCount() - requestsBefore).toBe(0);
  });

  test('an event id that just fits the record key is processed', async () => {
    const { handler, mailbox } = consumer();
    const message = newMessage(undefined, { id: 'x'.repeat(2041) });

    expect((await deliver(handler, message)).batchItemFailures).toEqual([]);
    expect(mailbox.count(message.id)).toBe(1);
  });

  test('a record with a live lease is never treated as expired, even with a deduplication window shorter than the lease', async () => {
    const message = newMessage();
    const clock = new FakeClock();
    const shortWindow = { ...config, deduplicationWindowSeconds: 30 }; // the lease is 60 seconds
    const first = await startPaused(message, { clock, overrides: { config: shortWindow } });
    clock.advanceSeconds(45); // past the window, within the lease
    const concurrent = consumer({ config: shortWindow }, clock);

    const response = await deliver(concurrent.handler, message, 2);
    await first.resume();

    expect(response.batchItemFailures).toHaveLength(1);
    expect(concurrent.mailbox.count(message.id)).toBe(0);
    expect(first.runs()).toBe(1);
    expect(concurrent.lines.find((line) => line.outcome === 'failed')).toMatchObject({ error: { name: 'MessageInProgressError' } });
    expect(await record(message.id)).toMatchObject({ status: { S: 'COMPLETED' }, version: { N: '2' } });
  });

  test('a delivery that read an expired record can not block its successor: the record expired and was claimed afresh (version 1 again) in between', async () => {
    const message = newMessage();
    const clock = new FakeClock();
    const window = { ...config, deduplicationWindowSeconds: 120 }; // the lease is 60 seconds
    const crashing = interruptibleClient();
    await deliver(consumer({ config: window, client: crashing.client, handle: () => crashing.crash() }, clock).handler, message);
    clock.advanceSeconds(LEASE_SECONDS + DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS + 1); // the crashed holder's lease is over, its record (version 1) not yet expired
    let successor: Awaited<ReturnType<typeof startPaused>> | undefined;
    const slow = localClient();
    // the slow delivery read version 1 and decided to block it; before its write lands, the record expires and a new delivery claims it
    slow.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName === 'UpdateItemCommand' && successor === undefined) {
          clock.advanceSeconds(120);
          successor = await startPaused(message, { clock, receiveCount: 3, overrides: { config: window } });
        }
        return next(args);
      },
      { step: 'initialize' },
    );
    const stale = consumer({ config: window, client: slow }, clock);

    const staleResponse = await deliver(stale.handler, message, 2);
    const successorResponse = await (successor as NonNullable<typeof successor>).resume();

    expect(staleResponse.batchItemFailures).toHaveLength(1);
    expect(stale.lines.find((line) => line.outcome === 'failed')).toMatchObject({ error: { name: 'MessageInProgressError' } });
    expect(stale.deadLetter.published).toEqual([]);
    expect(successorResponse.batchItemFailures).toEqual([]);
    expect(successor?.runs()).toBe(1);
    expect(await record(message.id)).toMatchObject({ status: { S: 'COMPLETED' }, version: { N: '2' } });
  });

  test.each([['retry'], ['block']] as const)(
    "with onExpiredLease '%s', a delivery on an instance whose clock is ahead by less than the skew allowance leaves a live lease alone",
    async (onExpiredLease) => {
      const message = newMessage();
      const holderClock = new FakeClock();
      const holder = await startPaused(message, { clock: holderClock });
      // 1 second of real time later, on an instance whose clock is LEASE_SECONDS + 1 seconds ahead: the lease looks 2 seconds over
      const aheadClock = new FakeClock(holderClock.now().getTime() + (LEASE_SECONDS + 2) * 1000);
      const ahead = consumer({ onExpiredLease }, aheadClock);

      const response = await deliver(ahead.handler, message, 2);
      const holderResponse = await holder.resume();

      expect(response.batchItemFailures).toHaveLength(1);
      expect(ahead.lines.find((line) => line.outcome === 'failed')).toMatchObject({ error: { name: 'MessageInProgressError' } });
      expect(ahead.mailbox.count(message.id)).toBe(0);
      expect(ahead.deadLetter.published).toEqual([]);
      expect(holderResponse.batchItemFailures).toEqual([]);
      expect(holder.runs()).toBe(1);
      expect(await record(message.id)).toMatchObject({ status: { S: 'COMPLETED' }, version: { N: '2' } });
    },
  );

  test('a lease is taken over once it is over by the skew allowance, not before', async () => {
    const message = newMessage();
    const clock = new FakeClock();
    const crashing = interruptibleClient();
    await deliver(consumer({ client: crashing.client, handle: () => crashing.crash() }, clock).handler, message);
    const { handler, mailbox } = consumer({ onExpiredLease: 'retry' }, clock);
    clock.advanceSeconds(LEASE_SECONDS + DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS - 1);
    expect((await deliver(handler, message, 2)).batchItemFailures).toHaveLength(1); // 1 second short of the allowance: still live

    clock.advanceSeconds(1);
    const response = await deliver(handler, message, 3);

    expect(response.batchItemFailures).toEqual([]);
    expect(mailbox.count(message.id)).toBe(1);
  });

  test('clockSkewAllowanceSeconds sets the allowance: 0 takes over as soon as the lease is over', async () => {
    const message = newMessage();
    const clock = new FakeClock();
    const crashing = interruptibleClient();
    await deliver(consumer({ client: crashing.client, handle: () => crashing.crash() }, clock).handler, message);
    clock.advanceSeconds(LEASE_SECONDS + 1);
    const { handler, mailbox } = consumer({ onExpiredLease: 'retry', clockSkewAllowanceSeconds: 0 }, clock);

    expect((await deliver(handler, message, 2)).batchItemFailures).toEqual([]);
    expect(mailbox.count(message.id)).toBe(1);
  });

  test('the takeover and the expired-lease block are refused by DynamoDB itself while the lease (plus the allowance) is live, whatever the caller decided', async () => {
    const message = newMessage();
    const clock = new FakeClock();
    const store = new ProcessingRecordStore({
      client: DynamoDBDocumentClient.from(client),
      tableName: config.inboxTableName,
      subscriberName: SUBSCRIBER,
      deduplicationWindowSeconds: WINDOW_SECONDS,
      leaseDurationSeconds: LEASE_SECONDS,
      clockSkewAllowanceSeconds: DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS,
      mode: 'lease',
      now: clock.now,
    });
    const claim = await store.claim(message.envelope as never, 'sha256:x', 'holder', ['effect']);
    expect(claim.claimed).toBe(true);
    const existing = await store.read(store.key(message.id));
    const before = await record(message.id);
    clock.advanceSeconds(LEASE_SECONDS + DEFAULT_CLOCK_SKEW_ALLOWANCE_SECONDS - 1);

    await expect(store.takeOver(existing!, 'intruder', true)).rejects.toThrow(/its lease is still live/);
    expect(await store.blockExpired(existing!, 'intruder', 'reason', sqsRecord(message.body))).toBe(false);
    expect(await record(message.id)).toEqual(before);
  });

  test.each([[-1], [1.5], [Number.NaN], [Number.POSITIVE_INFINITY]])('fails if clockSkewAllowanceSeconds is %s', (seconds) => {
    expect(() => consumer({ clockSkewAllowanceSeconds: seconds })).toThrow(
      `createLeaseConsumer: clockSkewAllowanceSeconds must be a whole number of seconds, 0 or more, but ${seconds} was given`,
    );
  });

  test('refuses to start when the subscriber was deployed with another mode', () => {
    expect(() => consumer({ config: { ...config, processingMode: 'multi-step' } })).toThrow(
      /deployed with processingMode 'multi-step', but its handler uses createLeaseConsumer/,
    );
  });

  test.each([[0], [-60], [1.5], [Number.NaN]])('fails if an explicit config has a deduplication window of %s seconds (every record would expire at once)', (seconds) => {
    expect(() => consumer({ config: { ...config, deduplicationWindowSeconds: seconds } })).toThrow(
      `createLeaseConsumer: deduplicationWindowSeconds must be a positive whole number of seconds, but ${seconds} was given`,
    );
  });

  test('fails if an explicit config has no positive whole lease duration', () => {
    expect(() => consumer({ config: { ...config, leaseDurationSeconds: 0 } })).toThrow(
      'createLeaseConsumer: leaseDurationSeconds must be a positive whole number of seconds, but 0 was given',
    );
  });

  test("fails if onExpiredLease is not 'block' or 'retry'", () => {
    expect(() => consumer({ onExpiredLease: 'ignore' as never })).toThrow(/onExpiredLease must be 'block' or 'retry', but 'ignore' was given/);
  });
});
