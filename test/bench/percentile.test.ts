import { describe, expect, test } from 'vitest';
import { percentile } from '../../bench/support/latency/percentile';

describe('percentile (nearest rank), as the batch-latency bench reports p50 and p95', () => {
  const oneToTwenty = Array.from({ length: 20 }, (_, i) => 20 - i); // unsorted on purpose

  test('picks the smallest sample with at least p % of the samples at or below it', () => {
    expect(percentile(oneToTwenty, 50)).toBe(10);
    expect(percentile(oneToTwenty, 95)).toBe(19);
    expect(percentile(oneToTwenty, 100)).toBe(20);
    expect(percentile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 50)).toBe(5);
    expect(percentile([7], 95)).toBe(7);
  });

  test('does not reorder the caller\'s samples', () => {
    const samples = [3, 1, 2];
    percentile(samples, 50);
    expect(samples).toEqual([3, 1, 2]);
  });

  test('refuses no samples and a p outside (0, 100]', () => {
    expect(() => percentile([], 50)).toThrow('percentile of no samples');
    expect(() => percentile([1], 0)).toThrow('but was 0');
    expect(() => percentile([1], 101)).toThrow('but was 101');
  });
});
