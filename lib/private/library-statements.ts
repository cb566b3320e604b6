/**
 * Marks the statements the library adds to identity policies with the library's Sid (lambda/contract/statement-ids.ts),
 * so a reader of the policy (the simulator's IAM report, an auditor in the IAM console) can tell them from the user's.
 *
 * IAM wants a Sid unique within a policy, so the Sid is numbered per principal and origin; a statement equal to one the
 * principal already holds from the library (the same actions, resources and conditions) gets that one's Sid, so the
 * two render identically and CDK writes them once. A statement with a Sid is never merged with another by
 * `@aws-cdk/aws-iam:minimizePolicies` (CDK merges only statements without one), so a user's statement and the library's
 * stay apart. A statement already marked keeps its Sid: a grant method that calls another (grantAppendOrderedEvents
 * calls grantAppendEvents) leaves the inner method's statements named by it.
 */
import { Token, TokenComparison } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import { librarySid } from '../../lambda/contract/statement-ids';

/** Per principal: the Sid given to each distinct statement, and how many each origin has given. Shared by every copy of this module. */
interface PrincipalSids {
  readonly byStatement: Map<string, string>;
  readonly perOrigin: Map<string, number>;
}
const REGISTRY_KEY = Symbol.for('idempotent-event-flow.library-statement-sids');
const registry: WeakMap<object, PrincipalSids> = ((globalThis as Record<symbol, unknown>)[REGISTRY_KEY] ??= new WeakMap()) as WeakMap<object, PrincipalSids>;

/** Gives `statement`, added to `principal`'s policy, the library's Sid for `origin` (see the module comment). */
export function markLibraryStatement(origin: string, principal: iam.IPrincipal, statement: iam.PolicyStatement): void {
  if (statement.sid !== undefined) return;
  let sids = registry.get(principal);
  if (sids === undefined) {
    sids = { byStatement: new Map(), perOrigin: new Map() };
    registry.set(principal, sids);
  }
  const content = JSON.stringify(statement.toStatementJson());
  let sid = sids.byStatement.get(content);
  if (sid === undefined) {
    const ordinal = (sids.perOrigin.get(origin) ?? 0) + 1;
    sids.perOrigin.set(origin, ordinal);
    sid = librarySid(origin, ordinal);
    sids.byStatement.set(content, sid);
  }
  statement.sid = sid;
}

/** Marks the statements `grants` added to `grantee`'s policies as the library's, from `origin`; returns the first grant. */
export function markLibraryGrant<T extends iam.Grant | undefined>(origin: string, grantee: iam.IGrantable, grant: T, ...more: (iam.Grant | undefined)[]): T {
  for (const each of [grant, ...more]) {
    for (const statement of each?.principalStatements ?? []) markLibraryStatement(origin, grantee.grantPrincipal, statement);
  }
  return grant;
}

/** `iam.Grant.addToPrincipal`, the statement marked as the library's, from `origin`. */
export function libraryGrant(origin: string, options: iam.GrantOnPrincipalOptions): iam.Grant {
  return markLibraryGrant(origin, options.grantee, iam.Grant.addToPrincipal(options));
}

/**
 * What `iam.Grant.addToPrincipalOrResource` does, the principal's statement marked as the library's, from `origin`: the
 * statement goes to the principal's policy, and also to the resource's policy when the principal may be in another
 * account. (aws-cdk-lib's own returns only the resource's statement then, so the principal's could not be marked.)
 */
export function libraryGrantOrResource(origin: string, options: iam.GrantWithResourceOptions): iam.Grant {
  const onPrincipal = libraryGrant(origin, options);
  const principalAccount = options.grantee.grantPrincipal.principalAccount;
  const accounts = principalAccount === undefined ? undefined : Token.compareStrings(options.resource.env.account, principalAccount);
  if (onPrincipal.success && (accounts === TokenComparison.SAME || accounts === TokenComparison.BOTH_UNRESOLVED)) return onPrincipal;
  const statement = new iam.PolicyStatement({
    actions: options.actions,
    resources: options.resourceSelfArns ?? options.resourceArns,
    principals: [options.grantee.grantPrincipal],
    conditions: options.conditions,
  });
  return onPrincipal.combine(iam.Grant.addStatementToResourcePolicy({ ...options, statement }));
}
