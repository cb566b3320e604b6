/**
 * The run's fifth stage: every registered check (simulator/check/registry.ts) over the settled run's facts, in the
 * registry's order.
 */
import type { Finding } from '../check/invariants';
import { RUN_CHECKS } from '../check/registry';
import { runChecks, type RunCheck, type RunFacts } from '../check/run-check';

/** The violations of the run, with their causes where told: each check of `checks` (the registry's, unless a test gives others) over `facts`. */
export function checkRun(facts: RunFacts, checks: readonly RunCheck[] = RUN_CHECKS): Finding[] {
  return runChecks(checks, facts);
}
