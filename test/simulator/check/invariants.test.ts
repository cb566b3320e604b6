/**
 * The invariant checks on a real simulated queue and dead-letter queue, observed by the run's ledger: what counts as
 * acknowledged, dead-lettered and lost, and what effect count exactly-once allows.
 */
import { describe, expect, test } from 'vitest';
import { readDeadLetters } from '../../../simulator/check/dead-letters';
import { checkDeliveries, checkEffects } from '../../../simulator/check/invariants';
import { receiveAll, subscriberKit, SUBSCRIPTION_KEY } from './check-kit';

function check(kit: ReturnType<typeof subscriberKit>, applied?: number) {
  const findings = readDeadLetters(kit.subscriber.deadLetterQueues, kit.ledger);
  const deliveries = checkDeliveries(kit.subscriber, findings, kit.ledger);
  const effects = applied === undefined ? [] : checkEffects(kit.subscriber, [{ subject: 'order 1', eventIds: ['event-1'], applied }], findings, kit.ledger).violations;
  return { deliveries, effects };
}

describe('acknowledged, dead-lettered, lost', () => {
  test('an event processed and acknowledged must show its effect once, even when another copy of it was dead-lettered', () => {
    // GIVEN two copies of one event: the first processed and deleted, the second dead-lettered by the runtime
    const kit = subscriberKit();
    kit.deliver('event-1', 2);
    const [first, second] = receiveAll(kit.queue);
    kit.queue.delete(first!.receiptHandle);
    kit.deadLetterByRuntime(second!, 'event-1');

    // THEN the acknowledged copy demands exactly one application: none is a lost effect
    expect(check(kit, 0).effects).toEqual([expect.objectContaining({ kind: 'effect-count', detail: expect.stringContaining('expected exactly 1') })]);
    expect(check(kit, 1)).toEqual({ deliveries: [], effects: [] });
    expect(check(kit, 2).effects).toHaveLength(1);
  });

  test('an event only dead-lettered by the runtime may have had its effect at most once', () => {
    const kit = subscriberKit();
    kit.deliver('event-1');
    const [message] = receiveAll(kit.queue);
    kit.deadLetterByRuntime(message!, 'event-1');

    expect(check(kit, 0)).toEqual({ deliveries: [], effects: [] });
    expect(check(kit, 1)).toEqual({ deliveries: [], effects: [] });
    expect(check(kit, 2).effects).toHaveLength(1);
  });

  test('an event whose only dead letter outlived the dead-letter queue retention is lost, though the runtime deleted its message', () => {
    // GIVEN the runtime dead-lettered the only copy and the mapping deleted it from the consumer queue
    const kit = subscriberKit({ deadLetterRetentionSeconds: 60 });
    kit.deliver('event-1');
    const [message] = receiveAll(kit.queue);
    kit.deadLetterByRuntime(message!, 'event-1');
    // WHEN the dead letter expires
    kit.clock.advanceBy(61_000);

    // THEN the event is lost: deleting a dead-lettered message is no acknowledgement
    expect(kit.deadLetterQueue.counts().total).toBe(0);
    expect(check(kit).deliveries).toEqual([expect.objectContaining({ kind: 'lost', detail: expect.stringContaining('event-1') })]);
  });

  test('an event whose message SQS moved to the dead-letter queue is not acknowledged when a consumer of the dead-letter queue deletes it', () => {
    // GIVEN a message that failed its one receive and was moved to the dead-letter queue
    const kit = subscriberKit({ maxReceiveCount: 1 });
    kit.deliver('event-1');
    receiveAll(kit.queue);
    kit.ledger.lastFailure.set(kit.queue.messages()[0]!.messageId, 'the invocation threw Error: boom');
    kit.clock.advanceBy(31_000);
    expect(receiveAll(kit.queue)).toEqual([]);
    // WHEN something consumes the dead-letter queue and deletes it there
    const [moved] = receiveAll(kit.deadLetterQueue);
    kit.deadLetterQueue.delete(moved!.receiptHandle);

    // THEN the event is neither acknowledged by its subscriber nor dead-lettered any more: lost
    expect(kit.ledger.acknowledgedEvents.get(SUBSCRIPTION_KEY)?.has('event-1') ?? false).toBe(false);
    expect(check(kit).deliveries).toEqual([expect.objectContaining({ kind: 'lost' })]);
  });

  test('a copy dead-lettered at one receive and processed at a later one counts as acknowledged', () => {
    // GIVEN the runtime dead-lettered receive 1, the delete did not happen, and receive 2 was processed and deleted
    const kit = subscriberKit();
    kit.deliver('event-1');
    const [first] = receiveAll(kit.queue);
    kit.deadLetterByRuntime(first!, 'event-1', false);
    kit.clock.advanceBy(31_000);
    const [again] = receiveAll(kit.queue);
    kit.queue.delete(again!.receiptHandle);

    expect(kit.ledger.acknowledgedEvents.get(SUBSCRIPTION_KEY)?.has('event-1')).toBe(true);
    expect(check(kit, 1)).toEqual({ deliveries: [], effects: [] });
    expect(check(kit, 0).effects).toHaveLength(1);
  });

  test('a copy the runtime acknowledged as already-blocked promises no effect: the blocked event may have had it at most once', () => {
    // GIVEN two copies of one event: the first blocked (dead-lettered), the second found the record blocked and was deleted
    const kit = subscriberKit();
    kit.deliver('event-1', 2);
    const [first, second] = receiveAll(kit.queue);
    kit.deadLetterByRuntime(first!, 'event-1');
    kit.ledger.onInvocation('Stack/Mapping', {
      messages: [{ messageId: second!.messageId, receiveCount: second!.receiveCount }],
      outcome: { kind: 'returned', response: { batchItemFailures: [] } },
      failedMessageIds: [],
      output: [JSON.stringify({ level: 'INFO', message: 'already-blocked', sqsMessageId: second!.messageId, outcome: 'already-blocked' })],
    });
    kit.queue.delete(second!.receiptHandle);

    // THEN it is not an acknowledgement: 0 or 1 applications are both fine
    expect(kit.ledger.acknowledgedEvents.get(SUBSCRIPTION_KEY)?.has('event-1') ?? false).toBe(false);
    expect(check(kit, 0)).toEqual({ deliveries: [], effects: [] });
    expect(check(kit, 1)).toEqual({ deliveries: [], effects: [] });
  });

  test('a message left on the queue does not hide another event that was lost', () => {
    // GIVEN event-2 still on the queue, and event-1 matched but never put on it
    const kit = subscriberKit();
    kit.deliver('event-2');
    kit.ledger.onFanOut(SUBSCRIPTION_KEY, { eventId: 'event-1', matched: true, copies: 1 });

    expect(check(kit).deliveries).toEqual([
      expect.objectContaining({ kind: 'not-drained' }),
      expect.objectContaining({ kind: 'lost', detail: expect.stringContaining('event event-1 ') }),
    ]);
  });
});
