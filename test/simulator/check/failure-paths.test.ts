/** not-exercised: the failure paths the run's rates require of every subscriber events reached. */
import { describe, expect, test } from 'vitest';
import { checkFailurePaths, FAILURE_PATHS, notSteeredFailurePaths, requiredFailurePaths, type FailurePathCounts } from '../../../simulator/check/failure-paths';
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

  test('below the steerable receive count, the paths only a conflict or a crash leads to are not required: a correct subscriber at maxReceiveCount 2 is not failed for them', () => {
    // a subscriber at maxReceiveCount 2 that met the lost response steered to it and nothing a conflict or a crash leads to
    const counts = { ...everyPath(0), 'lost-response': 2 };

    expect(requiredFailurePaths(DEFAULT_FAULT_RATES, 2)).toEqual(['lost-response']);
    expect(notSteeredFailurePaths(DEFAULT_FAULT_RATES, 2)).toEqual(['handler-error', 'conflict', 'crash-before-commit', 'crash-after-commit', 'redelivery']);
    expect(checkFailurePaths('Billing', counts, requiredFailurePaths(DEFAULT_FAULT_RATES, 2), 6)).toEqual([]);
    // at 1, one crash is steered (it dead-letters the event, which the run names); nothing is received again there
    expect(requiredFailurePaths(DEFAULT_FAULT_RATES, 1)).toEqual(['lost-response', 'crash-before-commit', 'crash-after-commit']);
    expect(notSteeredFailurePaths(DEFAULT_FAULT_RATES, 1)).toEqual(['handler-error', 'conflict', 'redelivery']);
    // from the steerable count on (and with no redrive policy), every path the rates stand for is required
    for (const maxReceiveCount of [MIN_RECEIVES_STEERED, 1000, undefined]) {
      expect(requiredFailurePaths(DEFAULT_FAULT_RATES, maxReceiveCount)).toEqual(requiredFailurePaths(DEFAULT_FAULT_RATES));
      expect(notSteeredFailurePaths(DEFAULT_FAULT_RATES, maxReceiveCount)).toEqual([]);
    }
    // rates that steer nothing leave nothing unsteered
    expect(notSteeredFailurePaths(NO_FAULTS, 2)).toEqual([]);
  });

  test('a subscriber at maxReceiveCount 1 or 2 that missed a path the run does steer to it still fails, told to run more commands, never to change its setting', () => {
    for (const maxReceiveCount of [1, 2]) {
      const violations = checkFailurePaths('Billing', { ...everyPath(2), 'lost-response': 0 }, requiredFailurePaths(DEFAULT_FAULT_RATES, maxReceiveCount), 6);
      expect(violations).toEqual([{ kind: 'not-exercised', subscriber: 'Billing', detail: expect.stringMatching(/^its consumer never met lost-response \(6 event\(s\) reached it\).*run more commands \(--count\)/) }]);
      expect(violations[0]?.detail).not.toContain('maxReceiveCount');
    }
  });
});
