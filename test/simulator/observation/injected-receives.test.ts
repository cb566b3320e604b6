/**
 * Which failed receives failed at a fault the run injected: a crash fails the whole batch; a record's contention error
 * counts only in an invocation the run injected contention into; a FIFO record skipped behind its group's failure counts
 * when every failure of the batch did; anything else is the app's.
 */
import { describe, expect, test } from 'vitest';
import { InjectedReceiveFailures, isContention } from '../../../simulator/observation/injected-receives';

const MAPPING = 'Stack/Mapping';
const SUBSCRIPTION = 'Stack/Subscription';

function message(id: string, receiveCount = 1) {
  return { messageId: id, receiveCount, origin: { via: 'sns' as const, eventId: `event-${id}`, subscription: SUBSCRIPTION } };
}

function line(sqsMessageId: string, outcome: string, fields: Record<string, unknown> = {}): string {
  return JSON.stringify({ sqsMessageId, outcome, ...fields });
}

/** A returned invocation of `messages` that reported `failed` as batch item failures, with the runtime's `output`. */
function returned(messages: ReturnType<typeof message>[], failed: readonly string[], output: readonly string[]) {
  return { messages, outcome: { kind: 'returned' as const, response: { batchItemFailures: failed.map((itemIdentifier) => ({ itemIdentifier })) } }, failedMessageIds: failed, output };
}

describe('InjectedReceiveFailures', () => {
  test('a crashed invocation fails every message of its batch at an injected fault', () => {
    const failures = new InjectedReceiveFailures();
    failures.onInvocation(MAPPING, { messages: [message('a'), message('b')], outcome: { kind: 'crashed', atRequest: 3, afterCommit: true }, failedMessageIds: ['a', 'b'] });

    expect(failures.onlyInjected(SUBSCRIPTION, 'event-a')).toBe(true);
    expect(failures.onlyInjected(SUBSCRIPTION, 'event-b')).toBe(true);
    expect(failures.onlyInjected(SUBSCRIPTION, 'event-c')).toBe(false);
  });

  test("a record failed for contention in an invocation the run injected a conflict into; another's TypeError is the app's", () => {
    const failures = new InjectedReceiveFailures();
    failures.onFault(`${MAPPING}|a|1`, 'transaction-conflict');
    const conflict = "TransactionCancelledError: transaction cancelled, nothing was written: action 0 (inbox record of event 'event-a'): TransactionConflict; action 1 (Put on table 'Ledger'): TransactionConflict";
    failures.onInvocation(
      MAPPING,
      returned([message('a'), message('b')], ['a', 'b'], [line('a', 'failed', { error: { name: 'TransactionCancelledError', message: conflict.slice('TransactionCancelledError: '.length) } }), line('b', 'failed', { error: { name: 'TypeError', message: 'x is undefined' } })]),
    );

    expect(failures.onlyInjected(SUBSCRIPTION, 'event-a')).toBe(true);
    expect(failures.onlyInjected(SUBSCRIPTION, 'event-b')).toBe(false);
  });

  test("a record not started for lack of the invocation's time counts where contention was injected; a failure with no outcome line never does", () => {
    const failures = new InjectedReceiveFailures();
    failures.onFault(`${MAPPING}|a|2`, 'throttle');
    failures.onInvocation(MAPPING, returned([message('a', 2), message('b', 1), message('c', 1)], ['a', 'b', 'c'], [line('a', 'failed', { error: { name: 'ThrottlingException', message: 'Rate exceeded' } }), line('b', 'failed', { detail: "not started: too little of the invocation's time left; retried later" })]));

    expect(failures.onlyInjected(SUBSCRIPTION, 'event-a')).toBe(true);
    expect(failures.onlyInjected(SUBSCRIPTION, 'event-b')).toBe(true);
    expect(failures.onlyInjected(SUBSCRIPTION, 'event-c')).toBe(false);
  });

  test('a record skipped behind its FIFO group counts when every failure of the batch was injected, not when an app error is among them', () => {
    const injected = new InjectedReceiveFailures();
    injected.onFault(`${MAPPING}|a|1`, 'throttle');
    injected.onInvocation(MAPPING, returned([message('a'), message('b')], ['a', 'b'], [line('a', 'failed', { error: { name: 'ThrottlingException', message: 'Rate exceeded' } }), line('b', 'skipped', { detail: 'an earlier message of this FIFO group failed' })]));
    expect(injected.onlyInjected(SUBSCRIPTION, 'event-b')).toBe(true);

    const appError = new InjectedReceiveFailures();
    appError.onFault(`${MAPPING}|a|1`, 'throttle');
    appError.onInvocation(MAPPING, returned([message('a'), message('b')], ['a', 'b'], [line('a', 'failed', { error: { name: 'Error', message: 'bad data' } }), line('b', 'skipped', { detail: 'an earlier message of this FIFO group failed' })]));
    expect(appError.onlyInjected(SUBSCRIPTION, 'event-b')).toBe(false);
  });

  test('one receive at the app own error, before or after injected ones, makes the event not injected-only', () => {
    const failures = new InjectedReceiveFailures();
    failures.onInvocation(MAPPING, { messages: [message('a', 1)], outcome: { kind: 'crashed', atRequest: 1, afterCommit: false }, failedMessageIds: ['a'] });
    failures.onInvocation(MAPPING, { messages: [message('a', 2)], outcome: { kind: 'timed-out', timeoutSeconds: 30 }, failedMessageIds: ['a'] });

    expect(failures.onlyInjected(SUBSCRIPTION, 'event-a')).toBe(false);
  });

  test.each([
    ['ThrottlingException: Rate exceeded', true],
    ['ConcurrentModificationError: aggregate order-1 was changed by other writers', true],
    ["TransactionCancelledError: transaction cancelled, nothing was written: action 0 (inbox record of event 'e'): TransactionConflict", true],
    ["TransactionCancelledError: transaction cancelled, nothing was written: action 0 (inbox record of event 'e'): ConditionalCheckFailed; action 1 (Put on table 'T'): TransactionConflict", false],
    ['TransactionCanceledException: Transaction cancelled, please refer cancellation reasons for specific reasons [TransactionConflict, None]', true],
    ['TransactionCanceledException: Transaction cancelled, please refer cancellation reasons for specific reasons [ConditionalCheckFailed, None]', false],
    ["TypeError: Cannot read properties of undefined (reading 'refund')", false],
  ])('isContention(%j) is %s', (detail, expected) => {
    expect(isContention(detail)).toBe(expected);
  });
});
