import { describe, expect, test } from 'vitest';
import { VirtualClock } from '../../../simulator/aws/clock';

describe('VirtualClock.runWithRealTime: a frozen clock moves with real time from where it stands', () => {
  test('continues from the frozen time, ahead of or behind real time, and then moves as real time does', () => {
    let real = 1_000_000;
    for (const frozenAt of [5_000_000, 400_000]) {
      const clock = new VirtualClock(undefined, () => real);
      const frozen = VirtualClock.fromBuffer(VirtualClock.frozen(frozenAt).buffer, () => real);
      frozen.advanceBy(1500);
      expect(frozen.now()).toBe(frozenAt + 1500);
      real += 250; // a frozen clock does not move with real time
      expect(frozen.now()).toBe(frozenAt + 1500);

      frozen.runWithRealTime();

      expect(frozen.now()).toBe(frozenAt + 1500);
      real += 120_000;
      expect(frozen.now()).toBe(frozenAt + 1500 + 120_000);
      // it still only moves forward when advanced
      frozen.advanceBy(10);
      expect(frozen.now()).toBe(frozenAt + 1500 + 120_010);
      // a running clock is unchanged by it
      const before = clock.now();
      clock.runWithRealTime();
      expect(clock.now()).toBe(before);
    }
  });
});
