/**
 * The last-receive probe's outcome as a check: an event the run failed at every receive whose message was deleted
 * (acknowledged) without a dead letter is lost, in every processing mode; a run cut off before the redrive, a message
 * still on the queue, a dead letter redriven or left by dlq redrive's rules is not. The probe's own dead letter that the
 * redrive's rules refused is the run's doing, not the app's: unapplied-event does not count it, and only it.
 */
import { describe, expect, test } from 'vitest';
import { checkLastReceiveProbes, LAST_RECEIVE_PROBE_LOST_TEXT, probeExpired, probeStateOf, type LastReceiveProbeOutcome } from '../../../simulator/check/last-receive-probes';
import { checkUnappliedEvents } from '../../../simulator/check/unapplied-events';
import { fixFor } from '../../../simulator/check/violation-cause';

const probe = (state: LastReceiveProbeOutcome['state'], extra: Partial<LastReceiveProbeOutcome> = {}): LastReceiveProbeOutcome => ({ subscriber: 'Audit', eventId: 'event-6', state, lastReceive: 5, redriven: 0, refused: [], ...extra });

describe('last-receive probe: lost', () => {
  test('an acknowledged probe event is lost, naming the event, the subscriber, the receive and the fix', () => {
    const findings = checkLastReceiveProbes([probe('acknowledged')]);

    expect(findings).toEqual([
      {
        kind: 'lost',
        subscriber: 'Audit',
        detail: expect.stringContaining(`event event-6 ${LAST_RECEIVE_PROBE_LOST_TEXT}`),
        causes: [expect.objectContaining({ kind: 'acknowledged-uncommitted', subscriber: 'Audit', eventIds: ['event-6'], fix: fixFor('acknowledged-uncommitted') })],
      },
    ]);
    expect(findings[0]!.detail).toContain('receive 5');
    expect(findings[0]!.detail).toContain('batchItemFailures');
  });

  test("the consumer's answer at a refused receive decides, whatever became of the message after (a lost delete, another copy's dead letter)", () => {
    const acknowledgedAt = { messageId: 'm-6', receiveCount: 5 };
    expect(probeStateOf({ acknowledgedAt, redriven: 1, refused: 0, onQueue: false })).toBe('acknowledged');
    expect(probeStateOf({ acknowledgedAt, redriven: 0, refused: 1, onQueue: true })).toBe('acknowledged');
    expect(probeStateOf({ redriven: 1, refused: 0, onQueue: false })).toBe('redriven');
    expect(probeStateOf({ redriven: 0, refused: 1, onQueue: false })).toBe('refused');
    expect(probeStateOf({ redriven: 0, refused: 0, onQueue: true })).toBe('on-queue');
    expect(probeStateOf({ redriven: 0, refused: 0, onQueue: false })).toBe('acknowledged');
    const [finding, ...more] = checkLastReceiveProbes([probe('acknowledged', { redriven: 1, acknowledgedAt })]);
    expect(more).toEqual([]);
    expect(finding).toEqual(expect.objectContaining({ kind: 'lost', subscriber: 'Audit', detail: expect.stringContaining(`event event-6 ${LAST_RECEIVE_PROBE_LOST_TEXT}`) }));
    expect(finding!.detail).toContain('at receive 5 the batch response left its message m-6 out of batchItemFailures');
  });

  test("a probe message SQS dropped by retention is expired, never acknowledged, and blames no one (the run's own doing)", () => {
    expect(probeStateOf({ redriven: 0, refused: 0, onQueue: false, expired: true })).toBe('expired');
    expect(probeStateOf({ acknowledgedAt: { messageId: 'm-6', receiveCount: 3 }, redriven: 0, refused: 0, onQueue: false, expired: true })).toBe('acknowledged');
    expect(checkLastReceiveProbes([probe('expired', { expired: { queue: 'App/AuditDlq', retentionSeconds: 960, at: '2026-11-29T00:16:00.000Z' } })])).toEqual([]);
    expect(probeExpired([probe('expired')], 'Audit')).toBe('event-6');
    expect(probeExpired([probe('redriven', { redriven: 1 })], 'Audit')).toBeUndefined();
  });

  test('nothing when the run was cut off, the message is still on the queue, or its dead letter was redriven or left', () => {
    const others = (['cut-off', 'on-queue', 'redriven', 'refused', 'not-chosen'] as const).map((state) => probe(state, state === 'redriven' ? { redriven: 1 } : {}));
    expect(checkLastReceiveProbes(others)).toEqual([]);
  });
});

describe('unapplied-event: the probe\'s own dead letter', () => {
  const outcome = (probeRefused?: string) => ({
    name: 'Audit',
    matched: new Set(['event-6', 'event-7']),
    applied: new Set<string>(),
    deadLetters: [
      { queueName: 'dlq', messageId: 'm-6', eventId: 'event-6', explanation: 'moved by SQS after 5 receives; last failure: TransactionConflictException' },
      { queueName: 'dlq', messageId: 'm-7', eventId: 'event-7', explanation: 'moved by SQS after 5 receives; last failure: TransactionConflictException' },
    ],
    operator: 'none' as const,
    ...(probeRefused === undefined ? {} : { probeRefused }),
  });

  test('is not counted when dlq redrive refused it; every other dead letter is', () => {
    expect(checkUnappliedEvents(outcome(), () => false)[0]!.detail).toContain('events event-6, event-7');
    const [violation, ...more] = checkUnappliedEvents(outcome('event-6'), () => false);
    expect(more).toEqual([]);
    expect(violation!.detail).toContain('(events event-7)');
  });

  test('a dead letter of the probe\'s event the app sent itself (not SQS\'s move) is still counted', () => {
    const own = { ...outcome('event-6'), deadLetters: [{ queueName: 'dlq', messageId: 'm-6b', eventId: 'event-6', explanation: 'MessageBlockedError: blocked' }] };
    expect(checkUnappliedEvents(own, () => false)).toEqual([expect.objectContaining({ kind: 'unapplied-event', detail: expect.stringContaining('(events event-6)') })]);
  });
});
