/** The fault plan's draws: seeded, keyed, and with the distribution their rates promise. */
import { describe, expect, test } from 'vitest';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';

describe('FaultPlan.failedAttempts', () => {
  const plan = new FaultPlan('seed', NO_FAULTS);

  test('no attempt fails at rate 0, and none ever succeeds at rate 1', () => {
    expect(plan.failedAttempts(0, 'sns-delivery-failure', 'a')).toBe(0);
    expect(plan.failedAttempts(1, 'sns-delivery-failure', 'a')).toBe(Number.POSITIVE_INFINITY);
  });

  test('is a function of the seed and the key', () => {
    const draws = (seed: string) => Array.from({ length: 50 }, (_, index) => new FaultPlan(seed, NO_FAULTS).failedAttempts(0.6, 'relay-publish-failure', 'relay', index));
    expect(draws('a')).toEqual(draws('a'));
    expect(draws('a')).not.toEqual(draws('b'));
  });

  test('is geometric: P(at least n failures) = rate^n', () => {
    const rate = 0.5;
    const samples = Array.from({ length: 20_000 }, (_, index) => plan.failedAttempts(rate, 'relay-publish-failure', index));
    for (const n of [1, 2, 3]) {
      const share = samples.filter((failures) => failures >= n).length / samples.length;
      expect(share).toBeGreaterThan(rate ** n - 0.02);
      expect(share).toBeLessThan(rate ** n + 0.02);
    }
  });
});

describe('FaultPlan', () => {
  test('refuses a rate outside [0, 1], naming it', () => {
    expect(() => new FaultPlan('s', { ...NO_FAULTS, relayFailure: 1.5 })).toThrow("fault rate 'relayFailure' must be between 0 and 1, got 1.5");
  });

  test('stopFaults: from then on every rate reads 0, so no fault happens (a served run works without the run\'s faults)', () => {
    const plan = new FaultPlan('s', { duplicate: 1, lostResponse: 1, throttle: 1, crash: 1, relayFailure: 1, snsDeliveryFailure: 1 });
    expect(plan.happens(plan.rates.duplicate, 'duplicate-delivery', 'm')).toBe(true);
    expect(plan.stopped).toBe(false);

    plan.stopFaults();

    expect(plan.stopped).toBe(true);
    expect(plan.rates).toEqual(NO_FAULTS);
    expect(plan.happens(plan.rates.duplicate, 'duplicate-delivery', 'm')).toBe(false);
    expect(plan.failedAttempts(plan.rates.relayFailure ?? 0, 'relay-publish-failure', 'r')).toBe(0);
  });
});
