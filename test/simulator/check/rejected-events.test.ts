/**
 * A permanent rejection (the runtime dead-lettered a message at once) of an event the scenario did not mark as
 * malformed fails the run: the producer made it, so it is valid, and the consumer refused valid work.
 */
import { describe, expect, test } from 'vitest';
import { readDeadLetters } from '../../../simulator/check/dead-letters';
import { checkRejectedEvents } from '../../../simulator/check/rejected-events';
import { receiveAll, rejectByRuntime, subscriberKit } from './check-kit';


describe('valid-event-rejected', () => {
  test('fails once per error when events the scenario did not mark as malformed were rejected for good, naming the error and the events', () => {
    // GIVEN a parse that refuses valid e-mail addresses: two events rejected with SchemaValidationError
    const kit = subscriberKit();
    for (const id of ['event-1', 'event-2', 'event-3']) kit.deliver(id);
    const [first, second] = receiveAll(kit.queue);
    rejectByRuntime(kit, first!, 'SchemaValidationError', "event 'event-1' failed the subscriber's schema: email is invalid");
    rejectByRuntime(kit, second!, 'SchemaValidationError', "event 'event-2' failed the subscriber's schema: email is invalid");

    // WHEN no event is marked malformed
    const violations = checkRejectedEvents('Billing', readDeadLetters(kit.subscriber.deadLetterQueues, kit.ledger), () => false);

    // THEN one violation names the error, the events and one reason
    expect(violations).toEqual([
      {
        kind: 'valid-event-rejected',
        subscriber: 'Billing',
        detail: expect.stringMatching(/^2 event\(s\) the scenario did not mark as malformed were rejected for good with SchemaValidationError \(events event-1, event-2\).*email is invalid/),
      },
    ]);
  });

  test('passes events the scenario marked as malformed, blocked messages, and messages SQS moved after failed receives', () => {
    const kit = subscriberKit({ maxReceiveCount: 1 });
    for (const id of ['event-1', 'event-2', 'event-3']) kit.deliver(id);
    const [first, second] = receiveAll(kit.queue);
    rejectByRuntime(kit, first!, 'SchemaValidationError', 'totalCents must be a whole number');
    kit.deadLetterByRuntime(second!, 'event-2');
    // event-3's one receive failed: SQS moves it at the next receive
    kit.clock.advanceBy(31_000);
    expect(kit.queue.receive(10)).toEqual([]);
    expect(kit.deadLetterQueue.counts().total).toBe(3);

    const violations = checkRejectedEvents('Billing', readDeadLetters(kit.subscriber.deadLetterQueues, kit.ledger), (eventId) => eventId === 'event-1');

    expect(violations).toEqual([]);
  });
});
