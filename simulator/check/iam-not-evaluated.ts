/**
 * A run whose IAM was not evaluated: `--iam off`, or the policy engine (`@cloud-copilot/iam-simulate`, an optional
 * dependency: AGPL-3.0, so a dev dependency of the user's app, never of the simulator's users by default) is not
 * installed. Such a run checks no grant, resource policy or key policy, so a removed statement passes it: its verdict
 * and its JSON say so, never reading as if IAM had been checked.
 */
import { HOW_TO_INSTALL_POLICY_ENGINE } from '../iam/policy-engine';

/** What a run without IAM evaluation did not check (the verdict's and the JSON's words). */
export const IAM_NOT_CHECKED =
  'no IAM policy, resource policy (topic, queue, bucket) or key policy was checked, so a missing grant or statement (across accounts too) passes this run';

/** Why IAM was not evaluated. */
export type IamNotEvaluatedCause = 'off' | 'engine-missing';

/** The IAM report of a run without IAM evaluation. */
export interface IamNotEvaluated {
  readonly evaluated: false;
  readonly cause: IamNotEvaluatedCause;
  readonly reason: string;
  /** {@link IAM_NOT_CHECKED} */
  readonly notChecked: string;
}

/** The report of a run whose IAM was not evaluated for `cause`. */
export function iamNotEvaluated(cause: IamNotEvaluatedCause): IamNotEvaluated {
  return {
    evaluated: false,
    cause,
    reason: cause === 'off' ? 'IAM evaluation is off (--iam off)' : `IAM was not evaluated: ${HOW_TO_INSTALL_POLICY_ENGINE}`,
    notChecked: IAM_NOT_CHECKED,
  };
}

/** What the verdict line adds for a run without IAM evaluation. */
export function iamVerdictNote(iam: IamNotEvaluated): string {
  return iam.cause === 'off'
    ? ` IAM NOT EVALUATED (--iam off): ${IAM_NOT_CHECKED}.`
    : ` IAM NOT EVALUATED: ${IAM_NOT_CHECKED}; to check them: ${HOW_TO_INSTALL_POLICY_ENGINE}.`;
}
