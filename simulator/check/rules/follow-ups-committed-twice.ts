/** Rule: no subscriber committed a follow-up of an event it received again at a redelivery, under a new id (../follow-ups-committed-twice.ts). */
import type { RunWideCheck } from '../run-check';

export const followUpsCommittedTwiceRule: RunWideCheck = {
  name: 'follow-up-committed-twice',
  checks: 'no subscriber committed the follow-up of an event it received again, under a new id, at a redelivery',
  scope: 'run',
  check: (facts) => facts.followUpsCommittedTwice ?? [],
};
