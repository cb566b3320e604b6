/**
 * The `--json` document of a run: the result as `simulate --json` writes it. Dead letters by subscriber name as an
 * object; each violation carries the causes its check told (`causes`, simulator/check/violation-cause.ts), so a program
 * reads a violation and its cause together (the result's own `causes` list, by violation index, is not repeated). Its
 * `verdict` is the run's (`OK`, `VIOLATED`, `NOT PROVEN`: ./verdict.ts), the one the text prints and the exit code gives.
 */
import type { Violation } from '../check/invariants';
import type { ViolationCause } from '../check/violation-cause';
import type { SimulationResult } from './result';
import { runVerdict } from './verdict';

/** A violation as `--json` writes it. */
export type ViolationJson = Violation & { readonly causes?: readonly ViolationCause[] };

/** The `--json` document of `result` (see the module comment). */
export function resultJson(result: SimulationResult): Record<string, unknown> {
  const { causes, ...rest } = result;
  const byIndex = new Map(causes.map((caused) => [caused.violation, caused.causes]));
  const violations: ViolationJson[] = result.violations.map((violation, index) => {
    const told = byIndex.get(index);
    return told === undefined ? violation : { ...violation, causes: told };
  });
  return { verdict: runVerdict(result), ...rest, deadLetters: Object.fromEntries(result.deadLetters), violations };
}
