/**
 * The last-receive probe: one event per probed subscriber failed at every receive, its last included (a consumer that
 * gives up quietly there would otherwise pass), by a conflict on its own record only; the other messages of its batches
 * keep the budget and last-receive rule; a FIFO message is never chosen; ended when the run settles.
 */
import { describe, expect, test } from 'vitest';
import { NO_FAULTS } from '../../../simulator/faults/fault-plan';
import { FaultSteering, type SteeredInvocation } from '../../../simulator/faults/fault-steering';
import { DEFAULT_FAULT_RATES } from '../../../simulator/run/options';

const commit = (eventId: string, subscriber = 'Billing'): string =>
  JSON.stringify({ TransactItems: [{ Put: { TableName: 'Inbox', Item: { pk: { S: `${subscriber}#${eventId}` } } } }, { Put: { TableName: 'Ledger', Item: { pk: { S: `L#${eventId}` } } } }] });
/** An invocation of a batch: `[messageId/eventId, receive count, group?]` each; its key ends with the first message's receive count. */
const batch = (...messages: Array<[string, number, string?]>): SteeredInvocation => ({
  key: `${messages[0]![0]}|${messages[0]![1]}`,
  message: messages[0]![0],
  messages: messages.map(([id, receiveCount, groupId]) => ({ messageId: `m-${id}`, receiveCount, eventId: id, ...(groupId === undefined ? {} : { groupId }) })),
});

describe('FaultSteering: the last-receive probe', () => {
  test('fails every receive of one event per probed subscriber, its last included, and no other event of the subscriber', () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    steering.addSubscriber('S/Billing', 'Billing', 5, ['Inbox'], { lastReceiveProbe: true });
    steering.addSubscriber('S/Audit', 'Audit', 5, ['Inbox'], { lastReceiveProbe: true });
    const decide = (functionKey: string, invocation: SteeredInvocation, eventId: string, subscriber = 'Billing', planned: 'none' | 'crash-before' | 'lose-response' = 'none') =>
      steering.decide(functionKey, invocation, 'TransactWriteItems', commit(eventId, subscriber), planned);
    // the first event written at its first receive is the probe's: refused at each of its 5 receives (every retry in one),
    // whatever the plan drew
    expect([1, 2, 3, 4, 5].map((receive) => decide('S/Billing', batch(['A', receive]), 'A', 'Billing', receive === 3 ? 'lose-response' : 'none'))).toEqual(Array(5).fill('conflict'));
    expect(decide('S/Billing', batch(['A', 5]), 'A')).toBe('conflict');
    // the subscriber's other events get the steering they had before (the probe counted no site): crash-before first
    expect(decide('S/Billing', batch(['B', 1]), 'B')).toBe('crash-before');
    // each probed subscriber has its own
    expect(decide('S/Audit', batch(['C', 1]), 'C', 'Audit')).toBe('conflict');
    expect(decide('S/Audit', batch(['D', 1]), 'D', 'Audit')).toBe('crash-before');
    expect(steering.endProbes()).toEqual([
      // each refused write counted: what the run's fault figures owe to the probe
      { functionKey: 'S/Billing', subscriber: 'Billing', eventId: 'A', lastReceive: 5, refusedWrites: 6 },
      { functionKey: 'S/Audit', subscriber: 'Audit', eventId: 'C', lastReceive: 1, refusedWrites: 1 },
    ]);
  });

  test("names each copy of the probe's event its consumer's answer acknowledged at a receive the run refused, and only those", () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    steering.addSubscriber('S/Billing', 'Billing', 5, ['Inbox'], { lastReceiveProbe: true });
    const refused = (invocation: SteeredInvocation) => expect(steering.decide('S/Billing', invocation, 'TransactWriteItems', commit(invocation.messages![0]!.eventId!), 'none')).toBe('conflict');
    // receive 1: reported failed (a correct answer); receive 4: the batch threw (every message failed)
    refused(batch(['A', 1]));
    steering.onInvocationAnswered('S/Billing', 'A|1', ['m-A']);
    refused(batch(['A', 4]));
    steering.onInvocationAnswered('S/Billing', 'A|4', ['m-A']);
    // receive 5, two SNS copies of A in one batch: the answer reports one failed and leaves the other out
    const twoCopies: SteeredInvocation = { key: 'A|5', message: 'A', messages: [{ messageId: 'm-A', receiveCount: 5, eventId: 'A' }, { messageId: 'm-A2', receiveCount: 2, eventId: 'A' }] };
    refused(twoCopies);
    steering.onInvocationAnswered('S/Billing', 'A|5', ['m-A']);
    // an invocation the probe refused nothing in is not judged
    steering.onInvocationAnswered('S/Billing', 'B|1', []);
    expect(steering.endProbes()).toEqual([{ functionKey: 'S/Billing', subscriber: 'Billing', eventId: 'A', lastReceive: 5, refusedWrites: 3, acknowledged: [{ messageId: 'm-A2', receiveCount: 2 }] }]);
  });

  test("names a copy of the probe's event acknowledged by an answer at a receive where the consumer made no write for it (it gave up before calling the runtime), and none once the probes ended", () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    steering.addSubscriber('S/Billing', 'Billing', 5, ['Inbox'], { lastReceiveProbe: true });
    expect(steering.decide('S/Billing', batch(['A', 1]), 'TransactWriteItems', commit('A'), 'none')).toBe('conflict');
    steering.onInvocationAnswered('S/Billing', 'A|1', ['m-A'], [{ messageId: 'm-A', receiveCount: 1, eventId: 'A' }]);
    // receive 5: no write of A reached DynamoDB, and the answer left it out of batchItemFailures; B is another event
    steering.onInvocationAnswered('S/Billing', 'A|5', [], [{ messageId: 'm-A', receiveCount: 5, eventId: 'A' }, { messageId: 'm-B', receiveCount: 1, eventId: 'B' }]);
    const [probe] = steering.endProbes();
    expect(probe?.acknowledged).toEqual([{ messageId: 'm-A', receiveCount: 5 }]);
    // after the probes end (the run redrives the dead letter and a correct consumer applies it), an acknowledgement is no evidence
    steering.onInvocationAnswered('S/Billing', 'A|6', [], [{ messageId: 'm-A', receiveCount: 1, eventId: 'A' }]);
    expect(probe?.acknowledged).toEqual([{ messageId: 'm-A', receiveCount: 5 }]);
  });

  test('chooses a message at its first receive only, and leaves the other messages of its batches unharmed', () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    steering.addSubscriber('S/Billing', 'Billing', 5, ['Inbox'], { lastReceiveProbe: true });
    const decide = (invocation: SteeredInvocation, eventId: string, planned: 'none' | 'crash-before' | 'crash-after' = 'none') => steering.decide('S/Billing', invocation, 'TransactWriteItems', commit(eventId), planned);
    // X at its second receive is not chosen (an earlier receive was not failed by the probe); Y at its first is
    expect(decide(batch(['X', 2]), 'X')).toBe('crash-before');
    const withOthers = batch(['Y', 1], ['Z', 1], ['W', 5]);
    expect(decide(withOthers, 'Y')).toBe('conflict');
    // Z shares the probe's batch: no crash (it would fail Y's batch and hide Y's failed record), a fault on its own record only
    expect(decide(withOthers, 'Z')).toBe('conflict');
    // W is at its last receive: nothing that fails its receive, and the plan's crash is dropped in a batch holding the probe's event
    expect(decide(withOthers, 'W', 'crash-after')).toBe('none');
    expect(decide(batch(['Y', 5], ['V', 5]), 'V', 'crash-before')).toBe('none');
    // after the probe's record failed, the next record's handler writes its own item (naming no inbox record) before its
    // commit: that write is the next record's, not the probe's, and is not refused
    const next = batch(['Y', 2], ['S', 5]);
    expect(decide(next, 'Y')).toBe('conflict');
    expect(steering.decide('S/Billing', next, 'PutItem', JSON.stringify({ TableName: 'Ledger', Item: { pk: { S: 'L#S' } } }), 'none')).not.toBe('conflict');
    // outside the probe's batches a planned crash stays
    expect(decide(batch(['U', 5]), 'U', 'crash-before')).toBe('crash-before');
  });

  test('never chooses a FIFO message, and probes only a subscriber asked for when conflicts are steered', () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    steering.addSubscriber('S/Ordered', 'Ordered', 5, ['Inbox'], { lastReceiveProbe: true });
    steering.addSubscriber('S/Plain', 'Plain', 5, ['Inbox']);
    const fifo = [1, 2, 3, 4, 5].map((receive) => steering.decide('S/Ordered', batch(['A', receive, 'g-1']), 'TransactWriteItems', commit('A', 'Ordered'), 'none'));
    expect(fifo.filter((fault) => fault === 'conflict').length).toBeLessThanOrEqual(2);
    expect(['conflict', 'crash-before', 'crash-after']).not.toContain(fifo[4]);
    // a subscriber not asked for: at a last receive nothing that fails it (the budget's rule)
    expect(['conflict', 'crash-before', 'crash-after']).not.toContain(steering.decide('S/Plain', batch(['A', 5]), 'TransactWriteItems', commit('A', 'Plain'), 'none'));
    expect(steering.endProbes()).toEqual([{ functionKey: 'S/Ordered', subscriber: 'Ordered' }]);
    // no conflicts steered (throttle rate 0): no probe; a fault-free run probes nothing
    for (const rates of [{ ...DEFAULT_FAULT_RATES, throttle: 0 }, NO_FAULTS]) {
      const quiet = new FaultSteering(rates);
      quiet.addSubscriber('S/Billing', 'Billing', 5, ['Inbox'], { lastReceiveProbe: true });
      expect(quiet.decide('S/Billing', batch(['A', 1]), 'TransactWriteItems', commit('A'), 'none')).not.toBe('conflict');
      expect(quiet.endProbes()).toEqual([]);
    }
  });

  test('ends when the run settles: a redriven copy of the event is left to the plan', () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    steering.addSubscriber('S/Billing', 'Billing', 5, ['Inbox'], { lastReceiveProbe: true });
    expect(steering.decide('S/Billing', batch(['A', 1]), 'TransactWriteItems', commit('A'), 'none')).toBe('conflict');
    steering.endProbes();
    expect(steering.decide('S/Billing', { ...batch(['A', 1]), messages: [{ messageId: 'redriven', receiveCount: 1, eventId: 'A' }] }, 'TransactWriteItems', commit('A'), 'none')).not.toBe('conflict');
    // and a batch that held it gets its crashes again
    expect(steering.decide('S/Billing', batch(['A', 2], ['B', 1]), 'TransactWriteItems', commit('B'), 'crash-before')).toBe('crash-before');
  });

  test('chooses only an event whose own time dlq redrive\'s window rule takes, and none a copy wrote before; tells the last receive it refused', () => {
    const steering = new FaultSteering(DEFAULT_FAULT_RATES);
    // the redrive takes an event whose own time is 1000 or later (its age against the window)
    steering.addSubscriber('S/Billing', 'Billing', 5, ['Inbox'], { lastReceiveProbe: true, probeTakes: (eventTime) => eventTime === undefined || eventTime >= 1000 });
    const decide = (invocation: SteeredInvocation, eventId: string) => steering.decide('S/Billing', invocation, 'TransactWriteItems', commit(eventId), 'none');
    const timed = (eventId: string, receiveCount: number, eventTime: number): SteeredInvocation => ({ key: `${eventId}|${receiveCount}`, message: eventId, messages: [{ messageId: `m-${eventId}-${receiveCount}`, receiveCount, eventId, eventTime }] });
    // an old event (its time before 1000) at its first receive is not chosen: its dead letter would be refused
    expect(decide(timed('OLD', 1, 10), 'OLD')).toBe('crash-before');
    // an event first written at a later receive, then a copy of it at its first (an SNS duplicate): not chosen
    expect(decide(timed('P', 2, 2000), 'P')).not.toBe('conflict');
    expect(decide(timed('P', 1, 2000), 'P')).not.toBe('conflict');
    // a young event no copy wrote before is chosen, and refused at every receive up to its last
    expect([1, 2, 3, 4, 5].map((receive) => decide(timed('Q', receive, 2000), 'Q'))).toEqual(Array(5).fill('conflict'));
    expect(steering.endProbes()).toEqual([{ functionKey: 'S/Billing', subscriber: 'Billing', eventId: 'Q', lastReceive: 5, refusedWrites: 5 }]);
  });
});
