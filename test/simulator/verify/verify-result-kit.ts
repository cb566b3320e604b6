/**
 * A verify run's result for verdict tests: a run of two events of run `v0-01020304` that Shipping took and applied,
 * nothing dead-lettered, no violation, with `overrides` applied. Not a test file.
 */
import type { VerifyResult } from '../../../simulator/verify/verify-run';

/** The result of a clean verify run, with `overrides`. */
export function verifyResult(overrides: Partial<VerifyResult> = {}): VerifyResult {
  return {
    runId: 'v0-01020304',
    seed: 'verify',
    stacks: ['App'],
    producer: { total: 2, succeeded: 2, retried: 0, failed: [] },
    committedEvents: 2,
    eventIds: [],
    derivedEvents: [],
    subscribers: [{ name: 'Shipping', events: 2, deadLettered: 0, effectsApplied: 2 }],
    deadLetters: {},
    violations: [],
    effectsNotCounted: [],
    ...overrides,
  };
}
