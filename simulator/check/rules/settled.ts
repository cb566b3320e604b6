/** Rule: the run settled before its limits (../invariants.ts). */
import { checkSettled } from '../invariants';
import type { RunWideCheck } from '../run-check';

export const settledRule: RunWideCheck = {
  name: 'not-settled',
  checks: 'the run settled before its simulated-time and round limits',
  scope: 'run',
  check: (facts) => checkSettled(facts.rounds),
};
