import { describe, expect, test } from 'vitest';
import {
  EventFlowError,
  EventTooLargeError,
  MalformedEnvelopeError,
  PermanentError,
  TransactionCancelledError,
  TransactionLimitError,
} from '../../lambda/errors';

describe('errors', () => {
  test('each error sets its own name, extends EventFlowError and keeps its cause', () => {
    const cause = new Error('root');
    const errors: Array<[Error, string]> = [
      [new EventFlowError('x', { cause }), 'EventFlowError'],
      [new MalformedEnvelopeError('x', { cause }), 'MalformedEnvelopeError'],
      [new PermanentError('x', { cause }), 'PermanentError'],
      [new TransactionLimitError('x', { cause }), 'TransactionLimitError'],
      [new TransactionCancelledError('x', { cancellationReasonCodes: [], failedActions: [] }, { cause }), 'TransactionCancelledError'],
    ];
    for (const [error, name] of errors) {
      expect(error.name).toBe(name);
      expect(error).toBeInstanceOf(EventFlowError);
      expect(error.cause).toBe(cause);
    }
  });

  test('EventTooLargeError carries the event id, the size and the limit', () => {
    const error = new EventTooLargeError('too big', { eventId: 'e1', sizeBytes: 300_000, limitBytes: 262_144 });
    expect([error.name, error.eventId, error.sizeBytes, error.limitBytes]).toEqual(['EventTooLargeError', 'e1', 300_000, 262_144]);
  });

  test('TransactionCancelledError tells a duplicate event from a business condition', () => {
    const duplicate = new TransactionCancelledError('x', {
      cancellationReasonCodes: ['None', 'ConditionalCheckFailed'],
      failedActions: [{ index: 1, kind: 'event', code: 'ConditionalCheckFailed', description: 'event e1', eventId: 'e1' }],
    });
    const business = new TransactionCancelledError('x', {
      cancellationReasonCodes: ['ConditionalCheckFailed', 'None'],
      failedActions: [{ index: 0, kind: 'item', code: 'ConditionalCheckFailed', description: 'Put' }],
    });
    expect(duplicate.isDuplicateEvent).toBe(true);
    expect(business.isDuplicateEvent).toBe(false);
  });
});
