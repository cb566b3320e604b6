import { describe, expect, test } from 'vitest';
import { ADAPTIVE_READ_THRESHOLD, AdaptiveBatchRead, batchReadPolicy } from '../../lambda/consumer/batch-read-policy';

/** Feeds `batches` batches of `records` records, `redeliveries` of them redeliveries (or so many in each), and says which read. */
function run(policy: AdaptiveBatchRead, batches: number, records: number, redeliveries: number | readonly number[]): boolean[] {
  const reads: boolean[] = [];
  for (let batch = 0; batch < batches; batch++) {
    reads.push(policy.shouldRead());
    policy.observe(records, typeof redeliveries === 'number' ? redeliveries : (redeliveries[batch] ?? 0));
  }
  return reads;
}

describe('the adaptive batch read', () => {
  test('a new environment does not read; without redeliveries it never starts', () => {
    const policy = new AdaptiveBatchRead();
    expect(run(policy, 50, 10, 0).some(Boolean)).toBe(false);
  });

  test('redeliveries common (2 in 10): it reads from the batch after the first one on, and keeps reading', () => {
    const policy = new AdaptiveBatchRead();
    expect(run(policy, 30, 10, 2)).toEqual([false, ...Array<boolean>(29).fill(true)]);
    expect(policy.redeliveryShare).toBeCloseTo(0.2, 1);
  });

  test('redeliveries rare: one in a hundred records alone never turns it on', () => {
    const policy = new AdaptiveBatchRead();
    const reads: boolean[] = [];
    for (let batch = 0; batch < 100; batch++) {
      reads.push(policy.shouldRead());
      policy.observe(10, batch % 10 === 0 ? 1 : 0);
    }
    expect(reads.some(Boolean)).toBe(false);
  });

  test('at the break-even share it stays off, above it on: the threshold is 1 in 40', () => {
    expect(ADAPTIVE_READ_THRESHOLD).toBe(1 / 40);
    const below = new AdaptiveBatchRead();
    run(below, 200, 40, 1);
    expect(below.shouldRead()).toBe(false);
    const above = new AdaptiveBatchRead();
    run(above, 200, 40, 2);
    expect(above.shouldRead()).toBe(true);
  });

  test('once redeliveries stop, the estimate wears down within a few hundred records and the read goes off', () => {
    const policy = new AdaptiveBatchRead();
    run(policy, 10, 10, 3);
    const reads = run(policy, 30, 10, 0);
    expect(reads[0]).toBe(true);
    expect(reads.at(-1)).toBe(false);
    expect(reads.indexOf(false)).toBeGreaterThan(5);
  });
});

test('true reads every batch whatever it sees; a policy object given is the policy', () => {
  const always = batchReadPolicy(true);
  always.observe(10, 0);
  expect(always.shouldRead()).toBe(true);
  expect(batchReadPolicy('adaptive')).toBeInstanceOf(AdaptiveBatchRead);
  const own = new AdaptiveBatchRead({ recordWeight: 0.5, threshold: 0.1 });
  expect(batchReadPolicy(own)).toBe(own);
});

test('a sensitive adaptive read (weight 0.5, as the model uses) turns on after one redelivery in a batch of 2 and off after two quiet batches', () => {
  const policy = new AdaptiveBatchRead({ recordWeight: 0.5 });
  expect(run(policy, 5, 2, [0, 1, 0, 0, 0])).toEqual([false, false, true, true, false]);
});

test('weights and thresholds out of range are refused', () => {
  expect(() => new AdaptiveBatchRead({ recordWeight: 1 })).toThrow('recordWeight must be above 0 and below 1, but was 1');
  expect(() => new AdaptiveBatchRead({ threshold: -0.1 })).toThrow('threshold must be from 0 to 1, but was -0.1');
});
