/** Rule: no function sent one event's SQS message from more than one invocation (../repeated-sends.ts). */
import { checkRepeatedSends } from '../repeated-sends';
import type { RunWideCheck } from '../run-check';

export const repeatedSendsRule: RunWideCheck = {
  name: 'repeated-send',
  checks: "no function sent one event's SQS message from more than one invocation",
  scope: 'run',
  check: (facts) => checkRepeatedSends(facts.sends).violations,
};
