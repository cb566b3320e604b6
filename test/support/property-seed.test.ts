import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { propertySeed } from './property-seed';

describe('the run-wide property seed (IEF_TEST_SEED)', () => {
  test('a set seed is read as a number, negative ones too', () => {
    expect(propertySeed({ IEF_TEST_SEED: '1234' })).toBe(1234);
    expect(propertySeed({ IEF_TEST_SEED: '-1305068781' })).toBe(-1305068781);
  });

  test('unset or empty means no seed: fast-check draws its own', () => {
    expect(propertySeed({})).toBeUndefined();
    expect(propertySeed({ IEF_TEST_SEED: ' ' })).toBeUndefined();
  });

  test('a seed that is not a 32-bit integer is refused, naming the variable and the value', () => {
    expect(() => propertySeed({ IEF_TEST_SEED: 'abc' })).toThrow("IEF_TEST_SEED must be a 32-bit integer (fast-check's seed), got 'abc'");
    expect(() => propertySeed({ IEF_TEST_SEED: '4294967296' })).toThrow(/got '4294967296'/);
    expect(() => propertySeed({ IEF_TEST_SEED: '1.5' })).toThrow(/got '1.5'/);
  });

  test('in this run, the global seed is the one IEF_TEST_SEED names (vitest loaded the setup file)', () => {
    const global = fc.readConfigureGlobal().seed;
    expect(global).toBe(propertySeed());
  });

  test('a property that names no seed searches from the global one: two checks draw the same values', () => {
    const drawn = (): number[] => {
      const values: number[] = [];
      fc.check(fc.property(fc.integer(), (value) => { values.push(value); }), { numRuns: 5, seed: fc.readConfigureGlobal().seed ?? 42 });
      return values;
    };
    const previous = fc.readConfigureGlobal();
    fc.configureGlobal({ ...previous, seed: 99 });
    try {
      const first: number[] = [];
      const second: number[] = [];
      fc.check(fc.property(fc.integer(), (value) => { first.push(value); }), { numRuns: 5 });
      fc.check(fc.property(fc.integer(), (value) => { second.push(value); }), { numRuns: 5 });
      expect(second).toEqual(first);
      expect(drawn()).toEqual(first);
    } finally {
      fc.configureGlobal(previous);
    }
  });
});
