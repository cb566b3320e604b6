/** A subscriber that received no event proves nothing of exactly-once: the run is NOT PROVEN, naming it and why. */
import { describe, expect, test } from 'vitest';
import { notExercised, type ExerciseFigures } from '../../../simulator/check/not-exercised';

function figures(name: string, deliveries: number, taken: number, givenUpByRelay = 0, consumed = true): ExerciseFigures {
  return { name, consumed, deliveries, taken, givenUpByRelay };
}

describe('notExercised', () => {
  test('names every subscriber whose events the relay all gave up on (--relay-failure-rate 1)', () => {
    expect(notExercised([figures('Billing', 0, 3, 3), figures('Shipping', 0, 3, 3)], 3)).toEqual([
      { subscriber: 'Billing', reason: 'the relay gave up on all 3 committed event(s) its filter takes before they reached its topic' },
      { subscriber: 'Shipping', reason: 'the relay gave up on all 3 committed event(s) its filter takes before they reached its topic' },
    ]);
  });

  test('names a subscriber its filter took events for and that received none, while others received theirs', () => {
    expect(notExercised([figures('Billing', 4, 3), figures('Audit', 0, 2, 1)], 3)).toEqual([
      { subscriber: 'Audit', reason: "its filter takes 2 committed event(s), the relay gave up on 1 of them, and SNS delivered none to its queue (see the sns line: on the subscription's dead-letter queue, or undeliverable)" },
    ]);
  });

  test('when no subscriber received anything, names those whose filter took none too: filtered out', () => {
    expect(notExercised([figures('Billing', 0, 0), figures('Audit', 0, 0)], 2)).toEqual([
      { subscriber: 'Billing', reason: 'filtered out: none of the 2 committed event(s) matched its filter policy' },
      { subscriber: 'Audit', reason: 'filtered out: none of the 2 committed event(s) matched its filter policy' },
    ]);
  });

  test('leaves out a subscriber its filter took nothing for while another was exercised, one with no consumer, and a run that committed nothing', () => {
    expect(notExercised([figures('Billing', 2, 2), figures('Cancellations', 0, 0)], 2)).toEqual([]);
    expect(notExercised([figures('Billing', 2, 2), figures('External', 0, 2, 0, false)], 2)).toEqual([]);
    expect(notExercised([figures('Billing', 0, 0)], 0)).toEqual([]);
  });
});
