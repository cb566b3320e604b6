/** Rule: IAM denied no request the flow made (../access.ts); nothing to check when IAM was not evaluated. */
import { checkAccess } from '../access';
import type { RunWideCheck } from '../run-check';

export const accessRule: RunWideCheck = {
  name: 'access-denied',
  checks: 'IAM (identity, resource and key policies) denied no request the flow made',
  scope: 'run',
  check: (facts) => (facts.iam.evaluated ? checkAccess(facts.iam) : []),
};
