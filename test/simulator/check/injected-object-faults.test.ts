/**
 * An event whose claim-check object the simulator altered or deleted after the producer's transaction committed (issue
 * 42): the consumer MUST dead-letter it with its reason, so neither `valid-event-rejected` nor `unapplied-event` fails
 * the run for it; the same dead letter of an event whose object was left alone still fails them.
 */
import { createHash } from 'node:crypto';
import { describe, expect, test } from 'vitest';
import { payloadObjectKey, DEFAULT_PAYLOAD_KEY_PREFIX } from '../../../lambda/contract/claim-check';
import { readDeadLetters } from '../../../simulator/check/dead-letters';
import { injectedObjectFaultsByEvent } from '../../../simulator/check/injected-object-faults';
import { checkRejectedEvents } from '../../../simulator/check/rejected-events';
import { checkUnappliedEvents } from '../../../simulator/check/unapplied-events';
import { receiveAll, rejectByRuntime, subscriberKit } from './check-kit';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');
const keyOf = (eventId: string): string => payloadObjectKey(DEFAULT_PAYLOAD_KEY_PREFIX, sha256(eventId), sha256(`data of ${eventId}`), new Date(0));


describe('injectedObjectFaultsByEvent', () => {
  test("names each committed event whose object was altered or deleted, by the key's event id digest", () => {
    const faults = injectedObjectFaultsByEvent(
      [
        { bucket: 'payloads', key: keyOf('event-1'), fault: 'altered' },
        { bucket: 'payloads', key: keyOf('event-3'), fault: 'missing' },
        { bucket: 'payloads', key: 'elsewhere', fault: 'missing' },
      ],
      ['event-1', 'event-2', 'event-3'],
    );
    expect([...faults]).toEqual([
      ['event-1', { bucket: 'payloads', key: keyOf('event-1'), fault: 'altered' }],
      ['event-3', { bucket: 'payloads', key: keyOf('event-3'), fault: 'missing' }],
    ]);
  });
});

describe('an event whose object the simulator altered or deleted', () => {
  const reason = "ClaimCheckIntegrityError: the object of event 'event-1' does not match its digest";

  test('its permanent rejection fails neither valid-event-rejected nor unapplied-event; the same rejection of an event left alone fails valid-event-rejected', () => {
    const kit = subscriberKit();
    for (const id of ['event-1', 'event-2']) kit.deliver(id);
    const [first, second] = receiveAll(kit.queue);
    rejectByRuntime(kit, first!, 'ClaimCheckIntegrityError', reason);
    rejectByRuntime(kit, second!, 'ClaimCheckIntegrityError', "ClaimCheckIntegrityError: the object of event 'event-2' does not match its digest");
    const deadLetters = readDeadLetters(kit.subscriber.deadLetterQueues, kit.ledger);
    const faults = injectedObjectFaultsByEvent([{ bucket: 'payloads', key: keyOf('event-1'), fault: 'altered' }], ['event-1', 'event-2']);
    const injected = (eventId: string) => faults.get(eventId);

    expect(deadLetters.every((finding) => finding.explanation !== undefined)).toBe(true);
    const violations = checkRejectedEvents('Billing', deadLetters, () => false, injected);
    expect(violations).toHaveLength(1);
    expect(violations[0]!.detail).toContain('1 event(s)');
    expect(violations[0]!.detail).toContain('event-2');
    expect(violations[0]!.detail).not.toContain('event-1');
    expect(checkUnappliedEvents({ name: 'Billing', matched: new Set(['event-1', 'event-2']), applied: new Set(), deadLetters, operator: 'none' }, () => false, injected)).toEqual([]);
  });

  test('moved by SQS after its receives (the runtime retried a missing object): unapplied-event excuses it, and still fails for an event left alone', () => {
    const kit = subscriberKit({ maxReceiveCount: 1 });
    for (const id of ['event-1', 'event-2']) kit.deliver(id);
    for (const message of receiveAll(kit.queue)) kit.ledger.lastFailure.set(message.messageId, 'NoSuchKey: The specified key does not exist.');
    kit.clock.advanceBy(31_000);
    expect(kit.queue.receive(10)).toEqual([]);
    const deadLetters = readDeadLetters(kit.subscriber.deadLetterQueues, kit.ledger);
    expect(deadLetters.map((finding) => finding.eventId).sort()).toEqual(['event-1', 'event-2']);
    const faults = injectedObjectFaultsByEvent([{ bucket: 'payloads', key: keyOf('event-1'), fault: 'missing' }], ['event-1', 'event-2']);
    const violations = checkUnappliedEvents({ name: 'Billing', matched: new Set(['event-1', 'event-2']), applied: new Set(), deadLetters, operator: 'none' }, () => false, (eventId) => faults.get(eventId));
    expect(violations).toHaveLength(1);
    expect(violations[0]!.detail).toContain('event-2');
    expect(violations[0]!.detail).not.toContain('event-1');
  });
});
