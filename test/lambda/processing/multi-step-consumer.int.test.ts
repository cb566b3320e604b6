import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BlockedMessages } from '../../../operator/blocked/blocked-messages';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LeaseConsumerConfig } from '../../../lambda/config';
import { PermanentError, RetryableError } from '../../../lambda/errors';
import { createMultiStepConsumer } from '../../../lambda/processing/multi-step-consumer';
import { MAX_CONTEXT_BYTES } from '../../../lambda/processing/processing-context';
import type { MultiStepConsumerOptions, ProcessingStep, StepContext } from '../../../lambda/processing/types';
import { localClient } from '../../support/dynamodb-client';
import type { FaultProxy } from '../../support/fault-proxy';
import { rawRecord } from '../../support/proof/table-reads';
import { startLeaseTestbed } from '../../support/proof/testbed';
import { outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../helpers';
import { FakeClock, newMessage, type TestMessage } from './fixtures';

const SUBSCRIBER = 'invoicing';
const LEASE_SECONDS = 60;
const WRITES = ['DynamoDB_20120810.PutItem', 'DynamoDB_20120810.UpdateItem'];
const READS = ['DynamoDB_20120810.GetItem', 'DynamoDB_20120810.Query', 'DynamoDB_20120810.Scan'];

let client: DynamoDBClient;
let proxy: FaultProxy;
let config: LeaseConsumerConfig;

beforeAll(async () => {
  ({ client, proxy, config } = await startLeaseTestbed({ subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600, leaseDurationSeconds: LEASE_SECONDS }, 'steps-inbox'));
});
afterAll(() => proxy.stop());

type StepBehaviour = (context: StepContext, call: number) => unknown;

/** The seed's two steps (create an invoice, email it) plus calls recorded per step, with what each saw. */
function invoiceSteps(behaviour: Partial<Record<string, StepBehaviour>> = {}) {
  const calls: Array<{ step: string; eventId: string; context: StepContext }> = [];
  const step = (name: string, output: (eventId: string) => Record<string, unknown> | void): ProcessingStep<unknown> => ({
    name,
    run: (envelope, context) => {
      calls.push({ step: name, eventId: envelope.id, context });
      const custom = behaviour[name];
      if (custom !== undefined) return custom(context, calls.filter((entry) => entry.step === name).length) as Record<string, unknown> | void;
      return output(envelope.id);
    },
  });
  const steps = [step('create-invoice', (eventId) => ({ createdInvoiceId: `inv-${eventId}` })), step('email-invoice', () => undefined)];
  return { steps, calls, count: (name: string) => calls.filter((entry) => entry.step === name).length };
}

function consumer(overrides: Partial<MultiStepConsumerOptions<unknown>> = {}, clock = new FakeClock()) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = createMultiStepConsumer({ steps: invoiceSteps().steps, client, config, deadLetter, logger, now: clock.now, metricsSink: () => undefined, ...overrides });
  return { handler, lines, deadLetter, clock };
}

const deliver = (handler: ReturnType<typeof consumer>['handler'], message: TestMessage, receiveCount = 1) =>
  handler({ Records: [sqsRecord(message.body, { messageId: `sqs-${message.id}`, receiveCount })] });

const record = (eventId: string) => rawRecord(client, config.inboxTableName, SUBSCRIBER, eventId);

function requests(targets: readonly string[]): number {
  return targets.reduce((total, target) => total + proxy.requestCount(target), 0);
}

describe('createMultiStepConsumer', () => {
  test('passes what step 1 returned to step 2, and stores it in the record', async () => {
    const invoice = invoiceSteps();
    const { handler, lines } = consumer({ steps: invoice.steps });
    const message = newMessage();

    await deliver(handler, message);

    expect(outcomesOf(lines)).toEqual(['processed']);
    expect(invoice.calls.map((call) => call.step)).toEqual(['create-invoice', 'email-invoice']);
    expect(invoice.calls[0]?.context.stepContext).toEqual({});
    expect(invoice.calls[1]?.context.stepContext).toEqual({ createdInvoiceId: `inv-${message.id}` });
    expect(await record(message.id)).toMatchObject({
      status: { S: 'COMPLETED' },
      mode: { S: 'multi-step' },
      stepOrder: { L: [{ S: 'create-invoice' }, { S: 'email-invoice' }] },
      context: { M: { createdInvoiceId: { S: `inv-${message.id}` } } },
      steps: { M: { 'create-invoice': { M: { status: { S: 'SUCCESS' } } }, 'email-invoice': { M: { status: { S: 'SUCCESS' } } } } },
    });
  });

  test('hands each step its own idempotency key', async () => {
    const invoice = invoiceSteps();
    const { handler } = consumer({ steps: invoice.steps });
    const message = newMessage();

    await deliver(handler, message);

    expect(invoice.calls.map((call) => call.context.idempotencyKey)).toEqual([
      `${SUBSCRIBER}#${message.id}#create-invoice`,
      `${SUBSCRIBER}#${message.id}#email-invoice`,
    ]);
    expect(invoice.calls.map((call) => [call.context.step, call.context.attempt])).toEqual([
      ['create-invoice', 1],
      ['email-invoice', 1],
    ]);
  });

  test('a redelivery skips the steps that succeeded and resumes with their context', async () => {
    const invoice = invoiceSteps({
      'email-invoice': (_context, call) => {
        if (call === 1) throw new RetryableError('SMTP 451: try again later');
      },
    });
    const { handler, lines } = consumer({ steps: invoice.steps });
    const message = newMessage();

    const first = await deliver(handler, message);
    expect(first.batchItemFailures).toHaveLength(1);
    expect(await record(message.id)).toMatchObject({
      status: { S: 'IN_PROGRESS' },
      steps: { M: { 'create-invoice': { M: { status: { S: 'SUCCESS' } } }, 'email-invoice': { M: { status: { S: 'TRY_AGAIN' } } } } },
    });
    const second = await deliver(handler, message, 2);

    expect(second.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['failed', 'processed']);
    expect(invoice.count('create-invoice')).toBe(1);
    expect(invoice.calls.filter((call) => call.step === 'email-invoice').map((call) => [call.context.attempt, call.context.stepContext])).toEqual([
      [1, { createdInvoiceId: `inv-${message.id}` }],
      [2, { createdInvoiceId: `inv-${message.id}` }],
    ]);
  });

  test.each([
    { batchRead: false, duplicateWrites: 1, batchReads: 0, what: 'the failed claim answers a duplicate (1 write), no reads' },
    { batchRead: true, duplicateWrites: 0, batchReads: 1, what: 'in a batch of two, one batch read answers a duplicate with no write (a batch of one has none)' },
  ])('writes 1 + number of steps per message and reads nothing else; batchRead $batchRead: $what', async ({ batchRead, duplicateWrites, batchReads }) => {
    const three: ProcessingStep<unknown>[] = ['a', 'b', 'c'].map((name) => ({ name, run: () => ({ [name]: true }) }));
    const { handler } = consumer({ steps: three, client: localClient({ endpoint: proxy.endpoint }), batchRead });
    const message = newMessage();
    const writesBefore = requests(WRITES);
    const readsBefore = requests(READS);
    const batchReadsBefore = requests(['DynamoDB_20120810.BatchGetItem']);

    await deliver(handler, message);
    const writesProcessed = requests(WRITES) - writesBefore;
    const fresh = newMessage();
    await handler({ Records: [sqsRecord(message.body, { messageId: `sqs-again-${message.id}`, receiveCount: 2 }), sqsRecord(fresh.body)] });

    expect(writesProcessed).toBe(1 + three.length);
    expect(requests(WRITES) - writesBefore - 2 * writesProcessed).toBe(duplicateWrites);
    expect(requests(READS) - readsBefore).toBe(0);
    expect(requests(['DynamoDB_20120810.BatchGetItem']) - batchReadsBefore).toBe(batchReads);
  });

  test('a step of unknown outcome blocks the message at that step; the steps before it stay done', async () => {
    const invoice = invoiceSteps({
      'email-invoice': () => {
        throw new Error('SMTP connection dropped after DATA');
      },
    });
    const { handler, deadLetter } = consumer({ steps: invoice.steps });
    const message = newMessage();

    await deliver(handler, message);
    await deliver(handler, message, 2);

    // the redelivery is acknowledged: the first delivery's dead letter was sent, and the record notes it
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['MessageBlockedError']);
    expect(invoice.count('create-invoice')).toBe(1);
    expect(invoice.count('email-invoice')).toBe(1);
    const item = await record(message.id);
    expect(item).toMatchObject({
      status: { S: 'BLOCKED' },
      activeStep: { S: 'email-invoice' },
      steps: { M: { 'create-invoice': { M: { status: { S: 'SUCCESS' } } }, 'email-invoice': { M: { status: { S: 'PROCESSING' } } } } },
      context: { M: { createdInvoiceId: { S: `inv-${message.id}` } } },
    });
    expect(item).not.toHaveProperty('expiresAt');
  });

  test('a PermanentError in a step dead-letters the message and leaves the step TRY_AGAIN for a redrive', async () => {
    const invoice = invoiceSteps({
      'create-invoice': () => {
        throw new PermanentError('customer has no billing address');
      },
    });
    const { handler, deadLetter } = consumer({ steps: invoice.steps });
    const message = newMessage();

    await deliver(handler, message);

    expect(deadLetter.published).toEqual([expect.objectContaining({ errorName: 'PermanentError', errorMessage: 'customer has no billing address' })]);
    expect(await record(message.id)).toMatchObject({ steps: { M: { 'create-invoice': { M: { status: { S: 'TRY_AGAIN' } } } } } });
  });

  test('a step output that makes the context too large blocks the message (the step took effect); it is not run again', async () => {
    const invoice = invoiceSteps({ 'create-invoice': () => ({ pdf: 'x'.repeat(MAX_CONTEXT_BYTES) }) });
    const { handler, deadLetter, lines } = consumer({ steps: invoice.steps });
    const message = newMessage();

    await deliver(handler, message);
    await deliver(handler, message, 2);

    expect(invoice.count('create-invoice')).toBe(1);
    expect(deadLetter.published[0]).toMatchObject({ errorName: 'MessageBlockedError', errorMessage: expect.stringContaining('over the limit of 65536 bytes') });
    expect(lines.find((line) => line.outcome === 'blocked')).toMatchObject({ error: { cause: { name: 'ProcessingContextError' } } });
    expect(await record(message.id)).toMatchObject({ status: { S: 'BLOCKED' }, activeStep: { S: 'create-invoice' }, context: { M: {} } });
  });

  test.each([
    ['a number beyond Number.MAX_SAFE_INTEGER', { externalId: 2 ** 60 }, /context\.externalId is 1152921504606847000, beyond Number\.MAX_SAFE_INTEGER/],
    ['a number DynamoDB underflows on', { rate: 1e-200 }, /context\.rate is 1e-200, smaller than DynamoDB's smallest number/],
    ['an empty map key', { headers: { '': 'x' } }, /context\.headers has an empty key/],
  ])('a step output with %s blocks the message at once (the step took effect); it is not run again', async (_what, output, reason) => {
    const invoice = invoiceSteps({ 'create-invoice': () => output });
    const { handler, deadLetter, lines, clock } = consumer({ steps: invoice.steps });
    const message = newMessage();

    const first = await deliver(handler, message);
    clock.advanceSeconds(LEASE_SECONDS + 1);
    await deliver(handler, message, 2);

    expect(first.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['blocked', 'already-blocked']);
    expect(invoice.count('create-invoice')).toBe(1);
    expect(deadLetter.published[0]).toMatchObject({ errorName: 'MessageBlockedError', errorMessage: expect.stringMatching(reason) });
    expect(lines.find((line) => line.outcome === 'blocked')).toMatchObject({ error: { cause: { name: 'ProcessingContextError' } } });
    expect(await record(message.id)).toMatchObject({ status: { S: 'BLOCKED' }, activeStep: { S: 'create-invoice' }, context: { M: {} } });
  });

  test('with keepBlockedMessageBody, a block that the body would take over the item limit is written without the body: the message is still blocked', async () => {
    // a large message and context, and an audit list of long non-ASCII resolutions (3 bytes a character), as an operator may leave them
    const large = newMessage({ invoiceFor: 'order-1', lines: 'l'.repeat(250_000) });
    const invoice = invoiceSteps({
      'create-invoice': () => ({ pdfSummary: 's'.repeat(60_000) }),
      'email-invoice': () => {
        throw new Error('SMTP connection dropped after DATA');
      },
    });
    const clock = new FakeClock();
    const { handler, lines } = consumer({ steps: invoice.steps, config: { ...config, keepBlockedMessageBody: true } }, clock);
    const operator = new BlockedMessages({ client, tableName: config.inboxTableName, now: clock.now });
    const note = '確'.repeat(1024);
    let response = await deliver(handler, large);
    expect(await record(large.id)).toMatchObject({ status: { S: 'BLOCKED' }, blockedBody: { S: large.body } }); // kept while it fits
    for (let round = 0; round < 20 && outcomesOf(lines).at(-1) === 'blocked'; round += 1) {
      await operator.resolve({ subscriber: SUBSCRIBER, eventId: large.id, step: 'email-invoice', status: 'TRY_AGAIN', reason: note, resolvedBy: note });
      response = await deliver(handler, large, round + 2);
    }

    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines).every((outcome) => outcome === 'blocked')).toBe(true);
    expect(lines.filter((line) => line.outcome === 'blocked')).toHaveLength(21);
    const item = await record(large.id);
    expect(item).toMatchObject({ status: { S: 'BLOCKED' }, activeStep: { S: 'email-invoice' }, blockedSubscriber: { S: SUBSCRIBER } });
    expect(item).not.toHaveProperty('blockedBody');
    expect(item).not.toHaveProperty('expiresAt');
    expect(invoice.count('create-invoice')).toBe(1);
  });

  test('a step output that is not a plain object blocks the message', async () => {
    const invoice = invoiceSteps({ 'create-invoice': () => ['inv-1'] });
    const { handler, deadLetter } = consumer({ steps: invoice.steps });

    await deliver(handler, newMessage());

    expect(deadLetter.published[0]?.errorMessage).toMatch(/the output of step 'create-invoice' must be a plain object \(or nothing\), but was an array/);
  });

  /** A message claimed with the invoice steps, invoiced, whose email step failed retryably: in flight for a later deploy. */
  async function claimedWithEmailToRetry() {
    const before = invoiceSteps({
      'email-invoice': () => {
        throw new RetryableError('SMTP 451: try again later');
      },
    });
    const message = newMessage();
    await deliver(consumer({ steps: before.steps }).handler, message);
    return message;
  }

  test('a message in flight keeps the step list it was claimed with: a step added by a later deploy does not run for it', async () => {
    const message = await claimedWithEmailToRetry();
    // the next deploy adds a step between the two
    const after = invoiceSteps();
    const audited: string[] = [];
    const added: ProcessingStep<unknown> = { name: 'audit-invoice', run: (envelope) => void audited.push(envelope.id) };
    const deployed = consumer({ steps: [after.steps[0] as ProcessingStep<unknown>, added, after.steps[1] as ProcessingStep<unknown>] });

    const response = await deliver(deployed.handler, message, 2);

    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(deployed.lines)).toEqual(['processed']);
    expect(audited).toEqual([]);
    expect(after.calls.map((call) => call.step)).toEqual(['email-invoice']);
    const item = await record(message.id);
    expect(item).toMatchObject({ status: { S: 'COMPLETED' }, stepOrder: { L: [{ S: 'create-invoice' }, { S: 'email-invoice' }] } });
    expect(item?.steps?.M).not.toHaveProperty('audit-invoice');
  });

  test('a step of the record that the deployed handler no longer has blocks the message with the reason; it is not skipped', async () => {
    const message = await claimedWithEmailToRetry();
    // the next deploy replaces 'email-invoice' with another step
    const after = invoiceSteps();
    const archived: string[] = [];
    const replacement: ProcessingStep<unknown> = { name: 'archive-invoice', run: (envelope) => void archived.push(envelope.id) };
    const deployed = consumer({ steps: [after.steps[0] as ProcessingStep<unknown>, replacement] });

    const response = await deliver(deployed.handler, message, 2);

    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(deployed.lines)).toEqual(['blocked']);
    expect(archived).toEqual([]);
    expect(after.calls).toEqual([]);
    const reason = /step 'email-invoice' of this message's step list \(create-invoice, email-invoice\) is not a step of the deployed handler \(create-invoice, archive-invoice\); it has not run/;
    expect(deployed.deadLetter.published).toEqual([expect.objectContaining({ errorName: 'MessageBlockedError', errorMessage: expect.stringMatching(reason) })]);
    const item = await record(message.id);
    expect(item).toMatchObject({
      status: { S: 'BLOCKED' },
      activeStep: { S: 'email-invoice' },
      blockedReason: { S: expect.stringMatching(reason) },
      stepOrder: { L: [{ S: 'create-invoice' }, { S: 'email-invoice' }] },
      steps: { M: { 'create-invoice': { M: { status: { S: 'SUCCESS' } } }, 'email-invoice': { M: { status: { S: 'PROCESSING' } } } } },
    });
    expect(item?.steps?.M).not.toHaveProperty('archive-invoice');
  });

  test('refuses to start when the subscriber was deployed as lease', () => {
    expect(() => consumer({ config: { ...config, processingMode: 'lease' } })).toThrow(/but its handler uses createMultiStepConsumer, which implements 'multi-step'/);
  });
});

describe('createMultiStepConsumer options', () => {
  const run = () => undefined;

  test('fails if no steps are given', () => {
    expect(() => consumer({ steps: [] })).toThrow(/steps must list at least 1 step, but none was given/);
  });

  test('fails if more than 20 steps are given', () => {
    const steps = Array.from({ length: 21 }, (_unused, index) => ({ name: `s${index}`, run }));
    expect(() => consumer({ steps })).toThrow(/steps must list at most 20 steps, but 21 were given/);
  });

  test('fails if a step name repeats', () => {
    expect(() => consumer({ steps: [{ name: 'send', run }, { name: 'send', run }] })).toThrow(/step names must be unique, but 'send' is given twice/);
  });

  test.each([[''], ['has space'], ['a#b'], ['x'.repeat(65)]])('fails if a step name is %j', (name) => {
    expect(() => consumer({ steps: [{ name, run }] })).toThrow(/step 0 name must be 1 to 64 characters of A-Z a-z 0-9 _ \. -/);
  });

  test.each([['__proto__'], ['constructor'], ['toString']])('fails if a step is named %j, a name every JavaScript object has', (name) => {
    expect(() => consumer({ steps: [{ name: 'first', run }, { name, run }] })).toThrow(`step 1 name must not be '${name}', a name every JavaScript object already has`);
  });

  test('fails if a step has no run function', () => {
    expect(() => consumer({ steps: [{ name: 'send' } as never] })).toThrow(/step 'send' must have a run function/);
  });
});
