/**
 * `sts:AssumeRole` of a role of the templates, decided as AWS does (IAM User Guide, "Cross account resource access in
 * IAM" and "IAM tutorial: Delegate access across AWS accounts using IAM roles"): the role's trust policy must allow the
 * caller, and, across accounts, the caller's identity policy must allow `sts:AssumeRole` on the role too. A caller that
 * is a role of the templates is evaluated with its own policies; a caller from outside the app (an on-call or SSO role
 * of another account) has policies the simulator can not see, so they are taken to allow it, and only the trust
 * policy decides (said in the answer's `notEvaluated`). A trust policy the simulator cannot resolve, or an evaluation
 * that errs, is refused (`AccessDenied` naming why), never granted. Used by a served run's STS (../aws/sts-endpoint.ts).
 */
import type { AccessModel } from '../model/access-model';
import type { ResourceKey } from '../model/flow-model';
import type { IamNames } from './iam-names';
import type { PolicyEngine } from './policy-engine';
import { resolvePolicy, type PolicyDocument } from './resolve-policy';
import { pathOr, resolveRole } from './resolved-roles';

/** A principal that asks to assume a role: a role (`arn:aws:iam::<account>:role/<name>`) or an account's root. */
export interface AssumingPrincipal {
  readonly arn: string;
  readonly account: string;
}

/** What AssumeRole answers. */
export type AssumeRoleDecision =
  | { readonly allowed: true; readonly role: ResourceKey; readonly roleArn: string; readonly notEvaluated?: string }
  | { readonly allowed: false; readonly code: 'AccessDenied' | 'NoSuchEntity'; readonly message: string };

/** The principal an access key names in a served run: `<account>` (its root) or `<account>.<role name>` (that role). */
export function principalOfAccessKey(accessKeyId: string): AssumingPrincipal | undefined {
  const match = /^(\d{12})(?:\.([\w+=,.@-]{1,64}))?$/.exec(accessKeyId);
  if (match === null) return undefined;
  const account = match[1]!;
  return { account, arn: match[2] === undefined ? `arn:aws:iam::${account}:root` : `arn:aws:iam::${account}:role/${match[2]}` };
}

/** Decides whether `caller` may assume the role whose ARN is `roleArn`; see the module comment. */
export async function decideAssumeRole(access: AccessModel, names: IamNames, engine: PolicyEngine, caller: AssumingPrincipal, roleArn: string): Promise<AssumeRoleDecision> {
  const model = access.roles.find((role) => names.getAtt(role.key, 'Arn') === roleArn);
  if (model === undefined) {
    const known = access.roles.map((role) => names.getAtt(role.key, 'Arn')).filter((arn) => arn !== undefined && /CrossAccountOperator/.test(arn));
    return { allowed: false, code: 'NoSuchEntity', message: `the role ${roleArn} is not a role of the served app${known.length === 0 ? '' : ` (its cross-account operator roles: ${known.join(', ')})`}` };
  }
  const rolePath = pathOr(model, model.key);
  const roleAccount = names.accountOf(model.key);
  const action = 'sts:AssumeRole';
  let trustPolicy: PolicyDocument;
  try {
    if (model.trustPolicy === undefined) return { allowed: false, code: 'AccessDenied', message: `the role ${rolePath} (${roleArn}) has no trust policy: nobody may assume it` };
    trustPolicy = resolvePolicy(model.trustPolicy, names);
  } catch (error) {
    // refused, not granted: a trust policy the simulator cannot read may not allow this caller (rv9 S-1)
    return { allowed: false, code: 'AccessDenied', message: `the trust policy of ${rolePath} (${roleArn}) is not evaluated, so the served run refuses ${action} by ${caller.arn}: ${(error as Error).message} (simulated IAM evaluation)` };
  }
  const callerRole = access.roles.find((role) => names.getAtt(role.key, 'Arn') === caller.arn);
  const resolvedCaller = callerRole === undefined ? undefined : resolveRole(access, names, callerRole.key);
  const identityPolicies =
    resolvedCaller !== undefined && !('unresolved' in resolvedCaller)
      ? resolvedCaller.policies
      : [{ name: `the identity policy of ${caller.arn} (outside the app: taken to allow)`, policy: { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Action: '*', Resource: '*' }] } as PolicyDocument }];
  const context: Record<string, string> = {
    'aws:SecureTransport': 'true',
    'aws:RequestedRegion': names.regionOf(model.key),
    'aws:ResourceAccount': roleAccount,
    'aws:PrincipalArn': caller.arn,
    'aws:PrincipalAccount': caller.account,
    'aws:PrincipalType': caller.arn.endsWith(':root') ? 'Account' : 'AssumedRole',
    'aws:PrincipalIsAWSService': 'false',
    'aws:ViaAWSService': 'false',
  };
  const answer = await engine.evaluate({ principal: caller.arn, action, resourceArn: roleArn, resourceAccount: roleAccount, identityPolicies, resourcePolicy: trustPolicy, context });
  if (answer.error !== undefined) return { allowed: false, code: 'AccessDenied', message: `${action} of ${rolePath} (${roleArn}) by ${caller.arn} could not be evaluated, so the served run refuses it: ${answer.error} (simulated IAM evaluation)` };
  if (answer.decision === 'Allowed') return { allowed: true, role: model.key, roleArn };
  const explicit = answer.denies[0];
  const sameAccount = caller.account === roleAccount;
  const reason =
    answer.decision === 'ExplicitlyDenied' && explicit !== undefined
      ? `an explicit Deny in ${explicit.policy} (statement ${explicit.statement}) matches it`
      : !answer.resourceAllows
        ? `the trust policy of ${rolePath} does not allow ${caller.arn} ${action}` +
          ` (grant it with grantOperator(new iam.ArnPrincipal('${caller.arn}')) of the flow, or of the ordered relay, whose outbox the role reads, in its app: docs/CROSS-ACCOUNT.md)`
        : sameAccount
          ? `no policy allows it`
          : `the identity policy of ${caller.arn} does not allow ${action} on ${roleArn}: across accounts the caller's own account must allow it too`;
  return { allowed: false, code: 'AccessDenied', message: `User: ${caller.arn} is not authorized to perform: ${action} on resource: ${roleArn} because ${reason} (simulated IAM evaluation)` };
}
