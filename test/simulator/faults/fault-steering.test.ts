/** Steering: each fault the rates allow, once per subscriber, at a write of its inbox record, one per event and invocation. */
import { describe, expect, test } from 'vitest';
import { NO_FAULTS } from '../../../simulator/faults/fault-plan';
import { FaultSteering, steeredFaults } from '../../../simulator/faults/fault-steering';
import { DEFAULT_FAULT_RATES } from '../../../simulator/run/options';

const inboxWrite = (eventId: string): string => JSON.stringify({ TransactItems: [{ Put: { TableName: 'Inbox', Item: { pk: { S: `Billing#${eventId}` } } } }] });

describe('FaultSteering', () => {
  test('gives a subscriber each allowed fault once, each on another event and invocation; a steered conflict holds for the rest of its invocation', () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    steering.addSubscriber('Stack/Billing', 'Billing');

    const decided = ['event-1', 'event-1', 'event-2', 'event-3', 'event-4', 'event-5'].map((eventId, index) =>
      steering.decide('Stack/Billing', index < 2 ? 'invocation-1' : `invocation-${index}`, 'TransactWriteItems', inboxWrite(eventId), 'none'),
    );

    expect(decided).toEqual(['conflict', 'conflict', 'lose-response', 'crash-before', 'crash-after', 'none']);
  });

  test('leaves a fault the plan already gave, other functions, reads and writes of no inbox record alone', () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    steering.addSubscriber('Stack/Billing', 'Billing');

    expect(steering.decide('Stack/Billing', 'i-1', 'TransactWriteItems', inboxWrite('event-1'), 'lose-response')).toBe('lose-response');
    expect(steering.decide('Stack/Producer', 'i-2', 'TransactWriteItems', inboxWrite('event-2'), 'none')).toBe('none');
    expect(steering.decide('Stack/Billing', 'i-3', 'GetItem', inboxWrite('event-3'), 'none')).toBe('none');
    expect(steering.decide('Stack/Billing', 'i-4', 'PutItem', JSON.stringify({ Item: { pk: { S: 'ORDER#1' } } }), 'none')).toBe('none');
    // the plan's lost response counts: the next steered fault is the next one missing
    expect(steering.decide('Stack/Billing', 'i-5', 'TransactWriteItems', inboxWrite('event-5'), 'none')).toBe('conflict');
    expect(steering.decide('Stack/Billing', 'i-6', 'TransactWriteItems', inboxWrite('event-6'), 'none')).toBe('crash-before');
  });

  test('steers only the faults whose rates are above 0', () => {
    expect(steeredFaults(NO_FAULTS)).toEqual([]);
    expect(steeredFaults({ ...NO_FAULTS, lostResponse: 0.1 })).toEqual(['lose-response']);
    expect(steeredFaults(DEFAULT_FAULT_RATES)).toEqual(['conflict', 'lose-response', 'crash-before', 'crash-after']);
  });
});
