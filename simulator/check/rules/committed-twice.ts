/** Rule: no producer the run drove committed a command twice across its attempts (../committed-twice.ts). */
import type { RunWideCheck } from '../run-check';

export const committedTwiceRule: RunWideCheck = {
  name: 'command-committed-twice',
  checks: 'no attempt of a producer command committed it again after an earlier attempt had committed it',
  scope: 'run',
  check: (facts) => facts.producer.committedTwice ?? [],
};
