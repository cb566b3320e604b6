/**
 * not-exercised: the failure paths the run's rates require of every subscriber events reached. A path not met leaves the
 * run NOT PROVEN (too little proven of that subscriber), never VIOLATED: it is returned as what is not proven, with the
 * subscriber, the paths and the events that reached it, not as a violation.
 */
import { describe, expect, test } from 'vitest';
import { failurePathsNotMet, FAILURE_PATHS, FAILURE_PATHS_NOT_MET_ADVICE, notSteeredFailurePaths, requiredFailurePaths, type FailurePathCounts } from '../../../simulator/check/failure-paths';
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

  test('names a subscriber that events reached and that missed a required path as not proven (its paths, the events that reached it), not as a violation; not one no event reached', () => {
    const counts = { ...everyPath(2), conflict: 0, 'crash-after-commit': 0, 'dead-letter': 0 };
    const required = requiredFailurePaths(DEFAULT_FAULT_RATES);

    expect(failurePathsNotMet('Billing', counts, required, 6)).toEqual([{ subscriber: 'Billing', paths: ['conflict', 'crash-after-commit'], eventsReached: 6 }]);
    expect(failurePathsNotMet('Billing', counts, required, 0)).toEqual([]);
    expect(failurePathsNotMet('Billing', { ...everyPath(1), 'dead-letter': 0 }, required, 6)).toEqual([]);
    expect(FAILURE_PATHS_NOT_MET_ADVICE).toMatch(/^run more commands \(--count\)/);
  });

  test('below the steerable receive count, the paths only a conflict or a crash leads to are not required: a correct subscriber at maxReceiveCount 2 is not failed for them', () => {
    // a subscriber at maxReceiveCount 2 that met the lost response steered to it and nothing a conflict or a crash leads to
    const counts = { ...everyPath(0), 'lost-response': 2 };

    expect(requiredFailurePaths(DEFAULT_FAULT_RATES, 2)).toEqual(['lost-response']);
    expect(notSteeredFailurePaths(DEFAULT_FAULT_RATES, 2)).toEqual(['handler-error', 'conflict', 'crash-before-commit', 'crash-after-commit', 'redelivery']);
    expect(failurePathsNotMet('Billing', counts, requiredFailurePaths(DEFAULT_FAULT_RATES, 2), 6)).toEqual([]);
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

  test('a subscriber at maxReceiveCount 1 or 2 that missed a path the run does steer to it is still not proven, told to run more commands, never to change its setting', () => {
    for (const maxReceiveCount of [1, 2]) {
      const notMet = failurePathsNotMet('Billing', { ...everyPath(2), 'lost-response': 0 }, requiredFailurePaths(DEFAULT_FAULT_RATES, maxReceiveCount), 6);
      expect(notMet).toEqual([{ subscriber: 'Billing', paths: ['lost-response'], eventsReached: 6 }]);
    }
    expect(FAILURE_PATHS_NOT_MET_ADVICE).not.toContain('maxReceiveCount');
  });
});
