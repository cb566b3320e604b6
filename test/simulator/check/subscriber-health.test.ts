/**
 * The checks that keep a broken app from ending in an OK, on a real simulated queue and dead-letter queue observed by
 * the run's ledger: configuration errors among the dead letters, acknowledged failures, nothing acknowledged, and
 * producer commands that never succeeded.
 */
import { describe, expect, test } from 'vitest';
import { readDeadLetters } from '../../../simulator/check/dead-letters';
import { checkProducerFailures } from '../../../simulator/check/producer-failures';
import { ACKNOWLEDGED_UNCOMMITTED_TEXT } from '../../../simulator/check/acknowledged-uncommitted';
import { failurePathsOf } from '../../../simulator/check/failure-paths';
import { hiddenOutcomesNote, LOG_LEVEL_HIDES_OUTCOMES_TEXT } from '../../../simulator/check/hidden-outcomes';
import { checkSubscriberHealth } from '../../../simulator/check/subscriber-health';
import { fixFor } from '../../../simulator/check/violation-cause';
import type { EventSourceMappingModel, FunctionModel } from '../../../simulator/model/flow-model';
import type { InvocationOutcome } from '../../../simulator/observation/observer';
import { receiveAll, subscriberKit } from './check-kit';

const MAPPING: EventSourceMappingModel = {
  key: 'Stack/Mapping',
  stackName: 'Stack',
  logicalId: 'Mapping',
  queue: 'Stack/Orders',
  function: 'Stack/Consumer',
  batchSize: 10,
  enabled: true,
  reportBatchItemFailures: true,
};

function kitWithMapping(options: Parameters<typeof subscriberKit>[0] = {}) {
  const kit = subscriberKit(options);
  const subscriber = { ...kit.subscriber, mapping: MAPPING };
  const check = () => checkSubscriberHealth(subscriber, readDeadLetters(subscriber.deadLetterQueues, kit.ledger), kit.ledger);
  return { ...kit, check };
}

/** The runtime's outcome line for a record, as lambda/consumer/process-message.ts writes it. */
function outcomeLine(messageId: string, outcome: string, error?: { name: string; message: string }): string {
  return JSON.stringify({ level: outcome === 'failed' ? 'WARN' : 'INFO', message: outcome, subscriber: 'Billing', sqsMessageId: messageId, outcome, ...(error ? { error } : {}) });
}

/** The consumer function of a transactional subscriber (or of `mode`). */
function consumerFunction(mode = 'transactional'): FunctionModel {
  return { key: 'Stack/Consumer', stackName: 'Stack', logicalId: 'Consumer', assetDirectory: '.', handler: 'index.handler', runtime: 'nodejs22.x', timeoutSeconds: 30, memorySizeMb: 256, environment: { IEF_PROCESSING_MODE: mode } };
}

/** A kit whose subscriber has a consumer in `mode`, and its check with `exempt`. */
function kitWithConsumer(mode = 'transactional', exempt?: (eventId: string) => boolean) {
  const kit = subscriberKit();
  const fn = consumerFunction(mode);
  const subscriber = { ...kit.subscriber, mapping: MAPPING, function: fn, environment: { IEF_PROCESSING_MODE: mode } };
  const check = () => checkSubscriberHealth(subscriber, readDeadLetters(subscriber.deadLetterQueues, kit.ledger), kit.ledger, exempt);
  return { ...kit, subscriber, check };
}

/** The runtime's inbox commit of `eventId` for Billing, as DynamoDB applied it (a PutItem of the inbox record). */
function inboxPut(eventId: string): { operation: string; body: Buffer } {
  const item = { pk: { S: `Billing#${eventId}` }, eventId: { S: eventId }, subscriber: { S: 'Billing' }, eventType: { S: 'OrderPlaced' } };
  return { operation: 'PutItem', body: Buffer.from(JSON.stringify({ TableName: 'Inbox', Item: item })) };
}

const returned = (failed: readonly string[]): InvocationOutcome => ({ kind: 'returned', response: { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) } });

describe('acknowledged-failure', () => {
  test('fails when a response acknowledges a record the runtime logged as failed in that invocation, naming it and what was logged', () => {
    // GIVEN two records; the runtime logs the second as failed, and the response (a swallowing wrapper's) lists none
    const kit = kitWithMapping();
    kit.deliver('event-1');
    kit.deliver('event-2');
    const [first, second] = receiveAll(kit.queue);
    const messages = [first!, second!].map(({ messageId, origin, receiveCount }) => ({ messageId, origin, receiveCount }));
    const output = [outcomeLine(first!.messageId, 'processed'), outcomeLine(second!.messageId, 'failed', { name: 'Error', message: 'downstream unavailable' })];

    // WHEN
    kit.ledger.onInvocation(MAPPING.key, { messages, outcome: returned([]), failedMessageIds: [], output });

    // THEN
    expect(kit.check()).toContainEqual({
      kind: 'acknowledged-failure',
      subscriber: 'Billing',
      detail: expect.stringContaining(`message ${second!.messageId} (event event-2) logged failed (Error: downstream unavailable)`),
    });
  });

  test('passes a failed record the response reported, and records the runtime dead-lettered or blocked', () => {
    const kit = kitWithMapping();
    for (const id of ['event-1', 'event-2', 'event-3']) kit.deliver(id);
    const received = receiveAll(kit.queue);
    const messages = received.map(({ messageId, origin, receiveCount }) => ({ messageId, origin, receiveCount }));
    const [failed, deadLettered, blocked] = received.map((message) => message.messageId);
    const output = [outcomeLine(failed!, 'failed'), outcomeLine(deadLettered!, 'dead-lettered'), outcomeLine(blocked!, 'blocked')];

    kit.ledger.onInvocation(MAPPING.key, { messages, outcome: returned([failed!]), failedMessageIds: [failed!], output });

    expect(kit.check().filter((violation) => violation.kind === 'acknowledged-failure')).toEqual([]);
  });

  test('correlates per invocation: a failed line of another batch, or of an invocation that threw, is no witness', () => {
    const kit = kitWithMapping();
    kit.deliver('event-1');
    const [message] = receiveAll(kit.queue);
    const messages = [{ messageId: message!.messageId, origin: message!.origin, receiveCount: message!.receiveCount }];

    // a line about a message not in this batch, then an invocation that threw after logging a failure
    kit.ledger.onInvocation(MAPPING.key, { messages, outcome: returned([]), failedMessageIds: [], output: [outcomeLine('other-message', 'failed')] });
    const threw: InvocationOutcome = { kind: 'threw', errorName: 'Error', errorMessage: 'boom' };
    kit.ledger.onInvocation(MAPPING.key, { messages, outcome: threw, failedMessageIds: [message!.messageId], output: [outcomeLine(message!.messageId, 'failed')] });

    expect(kit.check().filter((violation) => violation.kind === 'acknowledged-failure')).toEqual([]);
  });
});

describe('acknowledged, never committed (lost)', () => {
  /** Receives every message, answers each invocation with no batch item failures and deletes them (a swallowing wrapper). */
  function acknowledgeAll(kit: ReturnType<typeof kitWithConsumer>): void {
    const received = receiveAll(kit.queue);
    kit.ledger.onInvocation(MAPPING.key, { messages: received.map(({ messageId, origin, receiveCount }) => ({ messageId, origin, receiveCount })), outcome: returned([]), failedMessageIds: [], output: [] });
    for (const message of received) kit.queue.delete(message.receiptHandle);
  }

  test('fails a transactional subscriber that acknowledged events whose inbox record it never committed, with lost and its cause', () => {
    // GIVEN three events acknowledged, only the first committed (no outcome line at all: the log level hid them)
    const kit = kitWithConsumer();
    for (const id of ['event-1', 'event-2', 'event-3']) kit.deliver(id);
    kit.ledger.recordApplied('Stack/Consumer', inboxPut('event-1'));
    acknowledgeAll(kit);

    // THEN the two others are lost, named with the cause and its fix
    expect(kit.check()).toEqual([
      {
        kind: 'lost',
        subscriber: 'Billing',
        detail: expect.stringContaining(`2 event(s) ${ACKNOWLEDGED_UNCOMMITTED_TEXT} (events event-2, event-3): acknowledged, never applied`),
        causes: [{ kind: 'acknowledged-uncommitted', subscriber: 'Billing', eventIds: ['event-2', 'event-3'], invocations: [], requests: [], fix: fixFor('acknowledged-uncommitted') }],
      },
    ]);
  });

  test('passes committed events (a duplicate delivery too), exempt ones, dead-lettered ones, and subscribers of the other modes', () => {
    const exempt = (eventId: string) => eventId === 'malformed';
    const kit = kitWithConsumer('transactional', exempt);
    kit.deliver('event-1', 2);
    kit.deliver('malformed');
    kit.ledger.recordApplied('Stack/Consumer', inboxPut('event-1'));
    acknowledgeAll(kit);
    kit.deliver('event-2');
    const [deadLettered] = receiveAll(kit.queue);
    kit.deadLetterByRuntime(deadLettered!, 'event-2');
    expect(kit.check().filter((violation) => violation.kind === 'lost')).toEqual([]);

    const lease = kitWithConsumer('lease');
    lease.deliver('event-1');
    acknowledgeAll(lease);
    expect(lease.check()).toEqual([]);
  });
});

describe('failed records without the runtime\'s outcome lines (a log level above WARN)', () => {
  test('handler-error counts a record a returned invocation reported with no outcome line, and one logged failed, but not one logged skipped', () => {
    const kit = kitWithConsumer();
    for (const id of ['event-1', 'event-2', 'event-3']) kit.deliver(id);
    const received = receiveAll(kit.queue);
    const messages = received.map(({ messageId, origin, receiveCount }) => ({ messageId, origin, receiveCount }));
    const [unlogged, failed, skipped] = received.map((message) => message.messageId);
    const output = [outcomeLine(failed!, 'failed'), outcomeLine(skipped!, 'skipped')];

    kit.ledger.onInvocation(MAPPING.key, { messages, outcome: returned([unlogged!, failed!, skipped!]), failedMessageIds: [unlogged!, failed!, skipped!], output });

    expect(failurePathsOf(kit.subscriber, kit.ledger, 0)['handler-error']).toBe(2);
  });

  test('a level above WARN gets the note (FATAL and ERROR), the others none', () => {
    expect(hiddenOutcomesNote('Billing', 'ERROR')).toContain(`Billing: its application log level ERROR ${LOG_LEVEL_HIDES_OUTCOMES_TEXT}`);
    expect(hiddenOutcomesNote('Billing', 'FATAL')).toContain(LOG_LEVEL_HIDES_OUTCOMES_TEXT);
    expect(hiddenOutcomesNote('Billing', 'ERROR')).not.toContain('--count');
    for (const level of [undefined, 'INFO', 'WARN', 'DEBUG', 'TRACE']) expect(hiddenOutcomesNote('Billing', level)).toBeUndefined();
  });
});

describe('nothing-acknowledged', () => {
  test('fails when events matched the subscriber and it acknowledged none, even if each was dead-lettered with a reason', () => {
    const kit = kitWithMapping();
    kit.deliver('event-1');
    const [message] = receiveAll(kit.queue);
    kit.deadLetterByRuntime(message!, 'event-1');

    expect(kit.check()).toEqual([
      { kind: 'nothing-acknowledged', subscriber: 'Billing', detail: expect.stringContaining('1 event(s) matched its filter policy and reached its queue, and its consumer acknowledged none of them (1 dead letter(s))') },
    ]);
  });

  test('passes once one event was acknowledged', () => {
    const kit = kitWithMapping();
    kit.deliver('event-1');
    kit.deliver('event-2');
    const [first, second] = receiveAll(kit.queue);
    kit.queue.delete(first!.receiptHandle);
    kit.deadLetterByRuntime(second!, 'event-2');

    expect(kit.check()).toEqual([]);
  });
});

describe('configuration-error', () => {
  test('fails once per error name for the dead letters SQS moved after a handler that is not exported, with the count and one reason', () => {
    // GIVEN three events whose only receive failed: the handler could not be loaded
    const kit = kitWithMapping({ maxReceiveCount: 1, visibilityTimeoutSeconds: 30 });
    for (const id of ['event-1', 'event-2', 'event-3']) kit.deliver(id);
    for (const message of receiveAll(kit.queue)) {
      kit.ledger.onInvocation(MAPPING.key, {
        messages: [{ messageId: message.messageId, origin: message.origin, receiveCount: message.receiveCount }],
        outcome: { kind: 'threw', errorName: 'Runtime.HandlerNotFound', errorMessage: 'index.handler is undefined or not exported', atInit: true },
        failedMessageIds: [message.messageId],
        output: [],
      });
    }
    // WHEN they come back and SQS moves them to the dead-letter queue
    kit.clock.advanceBy(31_000);
    expect(kit.queue.receive(10)).toEqual([]);

    // THEN one violation names the error, the count and a reason
    const violations = kit.check().filter((violation) => violation.kind === 'configuration-error');
    expect(violations).toEqual([
      {
        kind: 'configuration-error',
        subscriber: 'Billing',
        detail: expect.stringMatching(/^3 dead letter\(s\) failed with Runtime\.HandlerNotFound, a configuration or deployment error.*index\.handler is undefined or not exported/),
      },
    ]);
  });

  test('passes dead letters of bad events', () => {
    const kit = kitWithMapping();
    kit.deliver('event-1');
    kit.deliver('event-2');
    const [first, second] = receiveAll(kit.queue);
    kit.queue.delete(first!.receiptHandle);
    kit.deadLetterByRuntime(second!, 'event-2');

    expect(kit.check().filter((violation) => violation.kind === 'configuration-error')).toEqual([]);
  });
});

describe('producer-failed', () => {
  test('fails once per kind of reason, naming the commands and one reason', () => {
    const figures = {
      total: 4,
      succeeded: 1,
      retried: 6,
      failed: [
        { index: 0, reason: 'the invocation threw Error: order-1 refused' },
        { index: 2, reason: 'the invocation threw Error: order-3 refused' },
        { index: 3, reason: 'the invocation timed out after 3 s' },
      ],
    };

    expect(checkProducerFailures(figures, 3)).toEqual([
      { kind: 'producer-failed', detail: '2 of 4 producer command(s) failed all 3 attempt(s) (#1, #3): the invocation threw Error: order-1 refused' },
      { kind: 'producer-failed', detail: '1 of 4 producer command(s) failed all 3 attempt(s) (#4): the invocation timed out after 3 s' },
    ]);
  });

  test('says why a transactWrite failed after an attempt whose write was applied but unseen, and that transactWriteOnce answers a retry', () => {
    // GIVEN a command whose first write committed with its response lost: the retry is refused by its own write's conditions
    const reason =
      "the invocation threw TransactionCancelledError: transaction cancelled, nothing was written: action 0 (Put on table 'Orders'): ConditionalCheckFailed; " +
      "action 1 (event 'e-1' (duplicate id?)): ConditionalCheckFailed";
    const figures = { total: 2, succeeded: 1, retried: 3, failed: [{ index: 1, reason, afterUnseenWrite: true }] };

    const [violation] = checkProducerFailures(figures, 3);

    expect(violation).toEqual({ kind: 'producer-failed', detail: expect.stringContaining(`1 of 2 producer command(s) failed all 3 attempt(s) (#2): ${reason}`) });
    expect(violation!.detail).toContain(
      'why: a write of an earlier attempt was applied, but the producer did not see it (a lost response, or a crash after the write), and the retry was refused by the conditions that write now fails (ConditionalCheckFailed)',
    );
    expect(violation!.detail).toContain('Outbox.transactWriteOnce');
  });

  test('gives no such hint for a failure without an unseen write, or for another error', () => {
    const conflict = "the invocation threw TransactionCancelledError: transaction cancelled, nothing was written: action 0 (Put on table 'Orders'): ConditionalCheckFailed";
    const figures = {
      total: 3,
      succeeded: 1,
      retried: 4,
      failed: [
        { index: 0, reason: conflict },
        { index: 2, reason: 'the invocation threw Error: refused', afterUnseenWrite: true },
      ],
    };

    expect(checkProducerFailures(figures, 3).map((violation) => violation.detail).join('\n')).not.toContain('transactWriteOnce');
  });

  test('passes when every command succeeded', () => {
    expect(checkProducerFailures({ total: 2, succeeded: 2, retried: 1, failed: [] }, 3)).toEqual([]);
  });

  test('with several producers, names the producer and counts against its own commands', () => {
    const figures = {
      total: 6,
      succeeded: 4,
      retried: 6,
      failed: [
        { index: 1, reason: 'the invocation threw Error: refused', producer: 'App/Payments/Produce' },
        { index: 2, reason: 'the invocation threw Error: refused', producer: 'App/Orders/Produce' },
      ],
      byProducer: [
        { producer: 'App/Orders/Produce', total: 4, succeeded: 3, retried: 3, failed: 1 },
        { producer: 'App/Payments/Produce', total: 2, succeeded: 1, retried: 3, failed: 1 },
      ],
    };

    expect(checkProducerFailures(figures, 3)).toEqual([
      { kind: 'producer-failed', detail: '1 of 2 App/Payments/Produce command(s) failed all 3 attempt(s) (#2): the invocation threw Error: refused' },
      { kind: 'producer-failed', detail: '1 of 4 App/Orders/Produce command(s) failed all 3 attempt(s) (#3): the invocation threw Error: refused' },
    ]);
  });
});
