/**
 * The roles and resource policies of the templates, resolved to policy documents with the run's local names (what
 * IAM evaluates a request against), and the permissions a role's policies grant (what the least-privilege figures
 * compare with the requests made).
 */
import { libraryStatementOrigin } from '../../lambda/contract/statement-ids';
import type { AccessModel, TemplatePolicy } from '../model/access-model';
import type { ResourceKey } from '../model/flow-model';
import { resolveValue, UnresolvableValueError } from '../model/intrinsics';
import type { GrantedPermission } from './access-types';
import type { IamNames } from './iam-names';
import { asList, resolvePolicy, statementId, type PolicyDocument } from './resolve-policy';

/** Services whose requests the simulator makes, so whose unused permissions it can judge. */
const JUDGED_SERVICES = new Set(['dynamodb', 'sqs', 'sns', 'kms']);

/** The key policy CloudFormation gives a key without `KeyPolicy`: the account's IAM policies decide. */
function defaultKeyPolicy(accountId: string): PolicyDocument {
  return { Version: '2012-10-17', Statement: [{ Effect: 'Allow', Principal: { AWS: `arn:aws:iam::${accountId}:root` }, Action: 'kms:*', Resource: '*' }] };
}

/** A role of the templates with its policies resolved. */
export interface ResolvedRole {
  readonly path: string;
  readonly arn: string;
  readonly policies: readonly { readonly name: string; readonly policy: PolicyDocument }[];
  readonly unevaluatedManagedPolicies: readonly string[];
  /** The permissions boundary, resolved, or the ARN of one from outside the app. */
  readonly boundary?: { readonly name: string; readonly policy: PolicyDocument } | { readonly external: string };
  readonly tags: Readonly<Record<string, string>>;
}

/** The construct path of a resource (without its trailing `/Resource`), else its key. */
export function pathOr(resource: { readonly constructPath?: string; readonly key: ResourceKey } | undefined, key: ResourceKey): string {
  let path = resource?.constructPath ?? key;
  // an L2 construct's CloudFormation resource is its `Resource` child (a function's, two levels down)
  while (path.endsWith('/Resource')) path = path.slice(0, -'/Resource'.length);
  return path;
}

/** Resolves the role `key` of the templates, or says why its policies can not be evaluated. */
export function resolveRole(access: AccessModel, names: IamNames, key: ResourceKey): ResolvedRole | { readonly unresolved: string } {
  let role: ResolvedRole | { readonly unresolved: string };
  const model = access.roles.find((candidate) => candidate.key === key);
  const path = pathOr(model, key);
  if (model === undefined) role = { unresolved: `role ${key} is not in the templates` };
  else {
    try {
      const boundary = model.permissionsBoundary;
      role = {
        path,
        arn: names.getAtt(key, 'Arn')!,
        policies: model.policies.map((policy) => ({ name: policy.name, policy: resolvePolicy(policy, names) })),
        unevaluatedManagedPolicies: model.unevaluatedManagedPolicies,
        ...(boundary === undefined ? {} : { boundary: 'external' in boundary ? boundary : { name: boundary.policy.name, policy: resolvePolicy(boundary.policy, names) } }),
        tags: Object.fromEntries(Object.entries(model.tags ?? {}).map(([tag, value]) => [tag, resolveValue(value, model.stackName, names, `tag ${tag} of role ${path}`)])),
      };
    } catch (error) {
      if (!(error instanceof UnresolvableValueError) && !(error instanceof Error)) throw error;
      role = { unresolved: `the policies of role ${path} are not evaluated: ${error.message}` };
    }
  }
  return role;
}

/** Resolves the resource policy (or key policy) of `key`, undefined when it has none, or says why it can not be evaluated. */
export function resolveResourcePolicy(access: AccessModel, names: IamNames, key: ResourceKey, describedKey: string): PolicyDocument | { readonly unresolved: string } | undefined {
  const keyModel = access.keys.find((candidate) => candidate.key === key);
  const policies: readonly TemplatePolicy[] = keyModel !== undefined ? [keyModel.keyPolicy] : (access.resourcePolicies[key] ?? []);
  let resolved: PolicyDocument | { readonly unresolved: string } | undefined;
  try {
    const documents = policies.filter((policy) => policy.document !== undefined).map((policy) => resolvePolicy(policy, names));
    if (keyModel !== undefined && documents.length === 0) resolved = defaultKeyPolicy(names.accountOf(key));
    else if (documents.length > 0) resolved = { Version: '2012-10-17', Statement: documents.flatMap((document) => document.Statement) };
  } catch (error) {
    resolved = { unresolved: `the policy of ${describedKey} is not evaluated: ${error instanceof Error ? error.message : String(error)}` };
  }
  return resolved;
}

/** `grantedBy` of a permission whose statement the library did not write (no library Sid). */
export const GRANTED_BY_USER = 'you';

/** Who added a statement, from its Sid: the library (named by its grant method or construct) or the user. */
export function grantedBy(sid: string | undefined): string {
  const origin = libraryStatementOrigin(sid);
  return origin === undefined ? GRANTED_BY_USER : `idempotent-event-flow's ${origin}`;
}

/** The dynamodb/sqs/sns/kms permissions a role's Allow statements grant, each with who granted it. */
export function grantedPermissions(role: ResolvedRole): GrantedPermission[] {
  return role.policies.flatMap(({ name, policy }) =>
    policy.Statement.flatMap((statement, index) => {
      if (statement.Effect !== 'Allow' || statement.Action === undefined || statement.Resource === undefined) return [];
      const id = statementId(statement, index);
      const by = grantedBy(statement.Sid);
      return asList(statement.Action)
        .filter((action) => JUDGED_SERVICES.has(action.split(':')[0]!.toLowerCase()))
        .flatMap((action) => asList(statement.Resource).map((resource) => ({ policy: name, statement: id, action, resource, grantedBy: by })));
    }),
  );
}
