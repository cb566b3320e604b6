/** Rule: no key's history shows two owners running its effect at once, or a lost response applied twice (../history.ts). */
import { checkHistory } from '../history';
import type { RunWideCheck } from '../run-check';

export const historyRule: RunWideCheck = {
  name: 'history',
  checks: "no key's history shows two owners running its effect at once, or a lost response applied twice",
  scope: 'run',
  check: (facts) =>
    checkHistory(facts.history).map((violation) => ({ kind: 'history' as const, subscriber: violation.key.subscriber, detail: `${violation.detail}; its history:\n${violation.excerpt}` })),
};
