/** not-exercised: the failure paths the run's rates require of every subscriber events reached. */
import { describe, expect, test } from 'vitest';
import { checkFailurePaths, FAILURE_PATHS, requiredFailurePaths, type FailurePathCounts } from '../../../simulator/check/failure-paths';
import { NO_FAULTS } from '../../../simulator/faults/fault-plan';
import { MIN_RECEIVES_STEERED } from '../../../simulator/faults/fault-steering';
import { DEFAULT_FAULT_RATES } from '../../../simulator/run/options';

const everyPath = (count: number): FailurePathCounts => Object.fromEntries(FAILURE_PATHS.map((failurePath) => [failurePath, count])) as FailurePathCounts;

describe('not-exercised', () => {
  test('the default rates require every path but a dead letter; no faults require none; crashes alone require the crashes and a redelivery', () => {
    expect(requiredFailurePaths(DEFAULT_FAULT_RATES)).toEqual(FAILURE_PATHS.filter((failurePath) => failurePath !== 'dead-letter'));
    expect(requiredFailurePaths(NO_FAULTS)).toEqual([]);
    expect(requiredFailurePaths({ ...NO_FAULTS, crash: 0.01 })).toEqual(['crash-before-commit', 'crash-after-commit', 'redelivery']);
  });

  test('fails a subscriber that events reached and that missed a required path, naming the paths; not one no event reached', () => {
    const counts = { ...everyPath(2), conflict: 0, 'crash-after-commit': 0, 'dead-letter': 0 };
    const required = requiredFailurePaths(DEFAULT_FAULT_RATES);

    expect(checkFailurePaths('Billing', counts, required, 6)).toEqual([
      { kind: 'not-exercised', subscriber: 'Billing', detail: expect.stringMatching(/^its consumer never met conflict, crash-after-commit \(6 event\(s\) reached it\).*run more commands \(--count\)/) },
    ]);
    expect(checkFailurePaths('Billing', counts, required, 0)).toEqual([]);
    expect(checkFailurePaths('Billing', { ...everyPath(1), 'dead-letter': 0 }, required, 6)).toEqual([]);
  });

  test('a subscriber whose queue has maxReceiveCount 1 or 2 is told more commands will not help: only real contention or a crash meets the paths there', () => {
    const counts = { ...everyPath(2), conflict: 0, 'dead-letter': 0 };
    const required = requiredFailurePaths(DEFAULT_FAULT_RATES);

    for (const maxReceiveCount of [1, 2]) {
      const [violation] = checkFailurePaths('Billing', counts, required, 6, maxReceiveCount);
      expect(violation?.detail).toContain(`its queue's maxReceiveCount is ${maxReceiveCount}, so the run steers no transaction conflict to it`);
      expect(violation?.detail).toContain(`more commands (--count) will not: a maxReceiveCount of ${MIN_RECEIVES_STEERED} or more lets the run steer them`);
      expect(violation?.detail).not.toContain('run more commands');
    }
    expect(checkFailurePaths('Billing', counts, required, 6, MIN_RECEIVES_STEERED)[0]?.detail).toContain('run more commands (--count)');
  });
});
