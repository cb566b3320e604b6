/**
 * Where a run's clock starts (`SimulationOptions.startTime`): the run's times are its start plus what the run moved its
 * clock, so two runs of one seed report the same times only when they start at the same time. The replay tests
 * (replay.int.test.ts) failed in CI of stop 47 on this alone: the runs took the same course, but the times a blocked
 * event's dead letter names (its lease's expiry, blocked since) differed by the real time between the runs' starts.
 */
import { describe, expect, test } from 'vitest';
import { runSettings } from '../../../simulator/run/prepare';
import { SimulationOptionError } from '../../../simulator/run/options';

// a run driven by events needs no app read to settle its settings
const options = { cwd: '.', events: [] };

describe("a run's start", () => {
  test('is the given startTime, whatever the real time', () => {
    expect(runSettings({ ...options, startTime: 1_800_000_000_000 }, () => 1_764_000_000_123).startTime).toBe(1_800_000_000_000);
    expect(runSettings({ ...options, startTime: 1_800_000_000_000 }, () => 1_764_000_999_999).startTime).toBe(1_800_000_000_000);
  });

  test('is the real time to the whole second without one: the milliseconds of the run\'s times are then the seed\'s', () => {
    expect(runSettings(options, () => 1_764_000_000_123).startTime).toBe(1_764_000_000_000);
    expect(runSettings(options, () => 1_764_000_000_999).startTime).toBe(1_764_000_000_000);
  });

  test('refuses a start that is not a whole number of ms in the range of a Date, naming the option, the bound and the value', () => {
    for (const bad of [1.5, -1, Number.NaN, 253_402_300_800_000]) {
      expect(() => runSettings({ ...options, startTime: bad })).toThrow(SimulationOptionError);
    }
    expect(() => runSettings({ ...options, startTime: -1 })).toThrow('startTime must be an integer from 0 to 253402300799000, but -1 was given');
  });
});
