/**
 * The `access-denied` invariant: IAM allowed every request the flow made. Each distinct denial (principal, action,
 * resource) is one violation that names the role (construct path), what it ran, the action, the resource, the decisive
 * reason and the CDK grant that would fix it.
 */
import type { IamFigures } from '../iam/access-types';
import type { Violation } from './invariants';

/** One violation per distinct denied request. */
export function checkAccess(figures: IamFigures): Violation[] {
  return figures.denials.map((denial) => ({
    kind: 'access-denied',
    detail:
      `${denial.principal} (${denial.caller}) may not ${denial.action} on ${denial.resource} (${denial.resourceArn}): ${denial.reason}; ` +
      `denied ${denial.count} time(s). Fix: ${denial.fix}`,
  }));
}
