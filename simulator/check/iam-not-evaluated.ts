/**
 * A run whose IAM was not evaluated: `--iam off`, or the policy engine (`@cloud-copilot/iam-simulate`, an optional
 * dependency: AGPL-3.0, so a dev dependency of the user's app, never of the simulator's users by default) is not
 * installed. Such a run checks no grant, resource policy or key policy, so a removed statement passes it: its verdict
 * and its JSON say so, never reading as if IAM had been checked. An app whose stacks span several accounts is wired
 * across them only by such statements (the topic's, the keys', the bucket's), so a run of it without IAM evaluation
 * is NOT PROVEN (exit code 5), never OK: a CI step reads the exit code, not the text.
 */
import { HOW_TO_INSTALL_POLICY_ENGINE, POLICY_ENGINE_PACKAGE } from '../iam/policy-engine';

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
  /**
   * The accounts of the app's stacks, when they are several: the run is then NOT PROVEN ({@link iamNotProvenReason}).
   * @default absent: the app's stacks are of one account
   */
  readonly accounts?: readonly string[];
}

/** The start of the NOT PROVEN reason of a run across accounts without IAM evaluation. */
export const IAM_NOT_PROVEN_TEXT = 'IAM was not evaluated, and the app spans';

/**
 * The report of a run whose IAM was not evaluated for `cause`.
 *
 * @param accounts the accounts of the app's stacks (their order kept, each once) @default one
 */
export function iamNotEvaluated(cause: IamNotEvaluatedCause, accounts: readonly string[] = []): IamNotEvaluated {
  const distinct = [...new Set(accounts)];
  return {
    evaluated: false,
    cause,
    reason: cause === 'off' ? 'IAM evaluation is off (--iam off)' : `the policy engine ${POLICY_ENGINE_PACKAGE} is not installed: ${HOW_TO_INSTALL_POLICY_ENGINE}`,
    notChecked: IAM_NOT_CHECKED,
    ...(distinct.length > 1 ? { accounts: distinct } : {}),
  };
}

/**
 * Why a run without IAM evaluation is NOT PROVEN (its stacks span several accounts), or undefined: a run of one
 * account keeps its verdict, with the note of {@link iamVerdictNote}.
 */
export function iamNotProvenReason(iam: { readonly evaluated: boolean; readonly accounts?: readonly string[]; readonly cause?: IamNotEvaluatedCause }): string | undefined {
  if (iam.evaluated || iam.accounts === undefined || iam.accounts.length < 2) return undefined;
  const fix = iam.cause === 'off' ? 'run it without --iam off' : `to check them: ${HOW_TO_INSTALL_POLICY_ENGINE.replace(/; or pass --iam off.*$/, '')}`;
  return (
    `${IAM_NOT_PROVEN_TEXT} ${iam.accounts.length} accounts (${iam.accounts.join(', ')}): what connects them is only statements of topic, queue, ` +
    `bucket and key policies, none of which this run checked, so a missing one passes it; ${fix}`
  );
}

/** What the verdict line adds for a run without IAM evaluation. */
export function iamVerdictNote(iam: IamNotEvaluated): string {
  return iam.cause === 'off'
    ? ` IAM NOT EVALUATED (--iam off): ${IAM_NOT_CHECKED}.`
    : ` IAM NOT EVALUATED: ${IAM_NOT_CHECKED}; to check them: ${HOW_TO_INSTALL_POLICY_ENGINE}.`;
}
