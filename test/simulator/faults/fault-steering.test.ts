/** Steering: each fault the rates allow, once per subscriber, at a write of its inbox record, one per event and invocation. */
import { describe, expect, test } from 'vitest';
import { NO_FAULTS } from '../../../simulator/faults/fault-plan';
import { FaultSteering, steeredFaults } from '../../../simulator/faults/fault-steering';
import { DEFAULT_FAULT_RATES } from '../../../simulator/run/options';

const inboxWrite = (eventId: string): string => JSON.stringify({ TransactItems: [{ Put: { TableName: 'Inbox', Item: { pk: { S: `Billing#${eventId}` } } } }] });

describe('FaultSteering', () => {
  test('gives a subscriber each allowed fault once, each on another event and invocation; a steered conflict holds for the rest of its invocation', () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    steering.addSubscriber('Stack/Billing', 'Billing', 3);

    const decide = (invocation: string, eventId: string) => steering.decide('Stack/Billing', { key: invocation, message: invocation }, 'TransactWriteItems', inboxWrite(eventId), 'none');

    // a conflict holds for its invocation; event-1 had a receive-failing fault, so a crash goes to another event
    expect([decide('i-1', 'event-1'), decide('i-1', 'event-1'), decide('i-1', 'event-2')]).toEqual(['conflict', 'conflict', 'none']);
    expect([decide('i-2', 'event-1'), decide('i-3', 'event-1'), decide('i-4', 'event-2'), decide('i-5', 'event-2'), decide('i-6', 'event-3'), decide('i-7', 'event-4')]).toEqual([
      'lose-response',
      'none',
      'crash-before',
      'none',
      'crash-after',
      'none',
    ]);
  });

  test('leaves a fault the plan already gave, other functions and reads alone; a write naming no inbox record is steered by its message', () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    steering.addSubscriber('Stack/Billing', 'Billing', 4);
    const decide = (functionKey: string, invocation: string, operation: string, body: string, planned: 'none' | 'lose-response' = 'none') =>
      steering.decide(functionKey, { key: invocation, message: invocation.replace(/\|\d+$/, '') }, operation, body, planned);
    const aggregateWrite = JSON.stringify({ Item: { pk: { S: 'CUSTOMER#1' } } });

    expect(decide('Stack/Billing', 'm-1|1', 'TransactWriteItems', inboxWrite('event-1'), 'lose-response')).toBe('lose-response');
    expect(decide('Stack/Producer', 'm-2|1', 'TransactWriteItems', inboxWrite('event-2'))).toBe('none');
    expect(decide('Stack/Billing', 'm-3|1', 'GetItem', inboxWrite('event-3'))).toBe('none');
    // the plan's lost response counts: the next steered fault is the next one missing
    expect(decide('Stack/Billing', 'm-4|1', 'PutItem', aggregateWrite)).toBe('conflict');
    // the same message received again gets no other receive-failing fault; another message does
    expect(decide('Stack/Billing', 'm-4|2', 'PutItem', aggregateWrite)).toBe('none');
    expect(decide('Stack/Billing', 'm-5|1', 'PutItem', aggregateWrite)).toBe('crash-before');
  });

  test('gives an event up to half of maxReceiveCount - 1 receive-failing faults, none below 3', () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    steering.addSubscriber('Stack/Billing', 'Billing', 5);
    steering.addSubscriber('Stack/Audit', 'Audit', 2);
    const decide = (functionKey: string, name: string, invocation: string) =>
      steering.decide(functionKey, { key: invocation, message: invocation }, 'TransactWriteItems', inboxWrite('event-1').replace('Billing', name), 'none');

    expect(['i-1', 'i-2', 'i-3', 'i-4'].map((invocation) => decide('Stack/Billing', 'Billing', invocation))).toEqual(['conflict', 'lose-response', 'crash-before', 'none']);
    expect(decide('Stack/Audit', 'Audit', 'i-5')).toBe('lose-response');
    expect(decide('Stack/Audit', 'Audit', 'i-6')).toBe('none');
  });

  test('steers only the faults whose rates are above 0', () => {
    expect(steeredFaults(NO_FAULTS)).toEqual([]);
    expect(steeredFaults({ ...NO_FAULTS, lostResponse: 0.1 })).toEqual(['lose-response']);
    expect(steeredFaults(DEFAULT_FAULT_RATES)).toEqual(['conflict', 'lose-response', 'crash-before', 'crash-after']);
  });
});
