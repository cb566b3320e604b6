/** Rule: every committed outbox item carries an event id the simulator can follow (../invariants.ts). */
import { checkTracked } from '../invariants';
import type { RunWideCheck } from '../run-check';

export const trackedRule: RunWideCheck = {
  name: 'untracked',
  checks: 'every committed outbox item carries an event id the run can follow',
  scope: 'run',
  check: (facts) => checkTracked(facts.committed.untracked),
};
