/**
 * The verdict of a simulated run, decided once for the exit code, the text and `--json`: `VIOLATED` when a check failed
 * (the app broke exactly-once, or would not deploy); else `NOT PROVEN` when the run proved too little to say OK: a
 * subscriber received no event (simulator/check/not-exercised.ts), a subscriber events reached never met a failure path
 * the run's fault rates steer to it (simulator/check/failure-paths.ts), or IAM was not evaluated for an app across
 * accounts (simulator/check/iam-not-evaluated.ts); else `OK`.
 */
import { iamNotProvenReason } from '../check/iam-not-evaluated';
import type { SimulationResult } from './result';

/** A run's verdict (see the module comment). */
export type RunVerdict = 'OK' | 'VIOLATED' | 'NOT PROVEN';

/** The verdict of `result` (see the module comment). */
export function runVerdict(result: Pick<SimulationResult, 'violations' | 'notExercised' | 'failurePathsNotMet' | 'iam'>): RunVerdict {
  if (result.violations.length > 0) return 'VIOLATED';
  const unproven = result.notExercised.length > 0 || result.failurePathsNotMet.length > 0 || iamNotProvenReason(result.iam) !== undefined;
  return unproven ? 'NOT PROVEN' : 'OK';
}
