/** Rule: no subject's ordered events spread over many one-event aggregates, a producer that orders nothing (../subject-spread.ts). */
import { checkSubjectSpread } from '../subject-spread';
import type { RunWideCheck } from '../run-check';

export const subjectSpreadRule: RunWideCheck = {
  name: 'subject-spread',
  checks: "no subject's ordered events spread over many one-event aggregates (a producer drawing a fresh aggregate id per event)",
  scope: 'run',
  check: (facts) => checkSubjectSpread(facts.committed.eventsById.values()),
};
