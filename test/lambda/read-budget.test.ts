/**
 * The memory budget of offloaded reads (R7-6, lambda/claim-check/read-budget.ts): records whose data would not fit
 * together wait for each other; one that alone would not fit is refused before its fetch.
 */
import { getHeapStatistics } from 'node:v8';
import { describe, expect, test } from 'vitest';
import { memoryBudgetBytes, ReadBudget } from '../../lambda/claim-check/read-budget';

const MIB = 1024 * 1024;

describe('memoryBudgetBytes', () => {
  test("is the function's memory (AWS_LAMBDA_FUNCTION_MEMORY_SIZE, MiB), at most V8's heap limit", () => {
    expect(memoryBudgetBytes({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '1' })).toBe(MIB);
    expect(memoryBudgetBytes({})).toBe(getHeapStatistics().heap_size_limit);
    expect(memoryBudgetBytes({ AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(1024 * 1024) })).toBe(getHeapStatistics().heap_size_limit);
  });
});

describe('ReadBudget', () => {
  test('a cost over the whole budget never fits; one within it does', () => {
    const budget = new ReadBudget(256 * MIB);
    expect(budget.fits(256 * MIB)).toBe(true);
    expect(budget.fits(256 * MIB + 1)).toBe(false);
  });

  test('two costs that do not fit together are held one after the other, and a release lets the next in', async () => {
    const budget = new ReadBudget(100);
    const order: string[] = [];
    const releaseFirst = await budget.acquire(60);
    order.push('first in');
    const second = budget.acquire(60).then((release) => {
      order.push('second in');
      return release;
    });
    const small = await budget.acquire(40); // fits beside the first
    order.push('small in');
    small();
    await Promise.resolve();
    expect(order).toEqual(['first in', 'small in']);
    releaseFirst();
    releaseFirst(); // a second release gives nothing back twice
    (await second)();
    expect(order).toEqual(['first in', 'small in', 'second in']);
    const again = await budget.acquire(100); // everything was given back
    again();
  });
});
