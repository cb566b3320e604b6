/**
 * The age rule across a window change: an unrecorded event is aged against the smallest window its inbox record could
 * have been written under (lambda/ordered/deduplication-window.ts), so a raise does not make an applied event whose
 * record expired by the old window look never applied.
 */
import { describe, expect, test } from 'vitest';
import { nextWindowRecord, smallestWindowSeconds, WINDOW_RAISE_GRACE_SECONDS } from '../../../lambda/ordered/deduplication-window';
import { unprovenAge } from '../../../operator/ordered/ordered-event-records';

const HOUR = 3600;
const t0 = Date.parse('2026-11-01T00:00:00.000Z');
const at = (seconds: number) => new Date(t0 + seconds * 1000);

describe('smallestWindowSeconds', () => {
  const first = nextWindowRecord(undefined, HOUR, at(0));
  const raised = nextWindowRecord(first, 3 * HOUR, at(10 * HOUR));

  test('a first record holds no raise: the window given (or the recorded one, if smaller)', () => {
    expect(first).toEqual({ windowSeconds: HOUR, raises: [], revision: 1 });
    expect(smallestWindowSeconds(HOUR, first, t0)).toBe(HOUR);
    expect(smallestWindowSeconds(3 * HOUR, first, t0)).toBe(HOUR);
    expect(smallestWindowSeconds(HOUR, undefined, t0)).toBe(HOUR);
  });

  test('after a raise, events written before it (and its grace) are aged against the old window, later ones against the new', () => {
    expect(raised).toEqual({ windowSeconds: 3 * HOUR, raises: [{ previousWindowSeconds: HOUR, changedAt: at(10 * HOUR).toISOString() }], revision: 2 });
    expect(smallestWindowSeconds(3 * HOUR, raised, at(9 * HOUR).getTime())).toBe(HOUR);
    expect(smallestWindowSeconds(3 * HOUR, raised, at(10 * HOUR + WINDOW_RAISE_GRACE_SECONDS - 1).getTime())).toBe(HOUR);
    expect(smallestWindowSeconds(3 * HOUR, raised, at(10 * HOUR + WINDOW_RAISE_GRACE_SECONDS).getTime())).toBe(3 * HOUR);
    // no write time: any time, so the old window
    expect(smallestWindowSeconds(3 * HOUR, raised, undefined)).toBe(HOUR);
  });

  test('the plan calls an event aged between the old and the new window unproven, with the window it used', () => {
    const writtenAt = at(9 * HOUR).getTime();
    const now = at(9 * HOUR + 2 * HOUR).getTime();
    const smallest = smallestWindowSeconds(3 * HOUR, raised, writtenAt);
    expect(unprovenAge(writtenAt, now, 3 * HOUR)).toBeUndefined();
    expect(unprovenAge(writtenAt, now, smallest, true)).toMatch(/could have been written under \(3600 s, the window before a raise/);
  });

  test('a lowered window adds no raise; a raise after it keeps the lower window for the events before it', () => {
    const lowered = nextWindowRecord(raised, HOUR / 2, at(10.5 * HOUR));
    expect(lowered.raises).toEqual(raised.raises);
    expect(lowered.windowSeconds).toBe(HOUR / 2);
    const raisedAgain = nextWindowRecord(lowered, 4 * HOUR, at(12 * HOUR));
    expect(raisedAgain.raises.map((raise) => raise.previousWindowSeconds)).toEqual([HOUR, HOUR / 2]);
    expect(smallestWindowSeconds(4 * HOUR, raisedAgain, at(11 * HOUR + 60).getTime())).toBe(HOUR / 2);
    expect(smallestWindowSeconds(4 * HOUR, raisedAgain, at(13 * HOUR).getTime())).toBe(4 * HOUR);
  });

  test('a raise is dropped once every event written before it is older than the new window', () => {
    const kept = nextWindowRecord({ ...raised, windowSeconds: 2 * HOUR }, 4 * HOUR, at(10 * HOUR + WINDOW_RAISE_GRACE_SECONDS + 4 * HOUR - 1));
    expect(kept.raises.map((raise) => raise.previousWindowSeconds)).toEqual([HOUR, 2 * HOUR]);
    const dropped = nextWindowRecord({ ...raised, windowSeconds: 2 * HOUR }, 4 * HOUR, at(10 * HOUR + WINDOW_RAISE_GRACE_SECONDS + 4 * HOUR));
    expect(dropped.raises.map((raise) => raise.previousWindowSeconds)).toEqual([2 * HOUR]);
  });
});
