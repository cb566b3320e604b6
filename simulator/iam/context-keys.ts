/**
 * The request context of each simulated request, and the rule that keeps a verdict honest about it: a condition that
 * reads a context key the simulator does not fill makes the request "not evaluated", never an Allow (and never a
 * Deny either: the key may hold anything in AWS).
 *
 * A key a policy reads is one of:
 * - filled: the request carries it, with the value AWS would set (docs/SIMULATOR.md, "Request context keys", says how
 *   each is made);
 * - absent in AWS too: AWS does not set it for this kind of request (e.g. `aws:SourceArn` on a call a role makes
 *   itself, `aws:RequestTag/*` on a request that tags nothing, a `aws:PrincipalTag/<key>` the role has no tag for), so
 *   the engine evaluates the condition as AWS does, on a missing key;
 * - neither: AWS sets it and the simulator cannot know its value (`aws:SourceIp`, `aws:CurrentTime`,
 *   `aws:PrincipalOrgID`, ...): the request is not evaluated.
 */
import type { PolicyDocument, PolicyStatement } from './resolve-policy';
import { asList } from './resolve-policy';

/** The context of one request: its keys, and the keys AWS does not set for it either. */
export interface RequestContext {
  readonly values: Readonly<Record<string, string | readonly string[]>>;
  /**
   * Lower-case keys AWS does not set for this request; an entry ending in `/` or `:` stands for every key it starts
   * (a family the request carries completely, such as the role's tags).
   */
  readonly absent: readonly string[];
}

/** Keys AWS sets only for other kinds of request than any the simulator makes (tagging requests, IAM users, federation). */
const NEVER_SET = ['aws:requesttag/', 'aws:tagkeys', 'aws:username', 'aws:federatedprovider', 'aws:assumedroot', 'aws:chatbotsourcearn', 'aws:isMcpServiceAction'.toLowerCase(), 'aws:calledviaawsmcp', 'aws:viaawsmcpservice'];

/**
 * What AWS does not set on a request a role session makes itself (a function's or a pipe's SDK call): the keys of a
 * service principal acting for a resource (`aws:SourceArn`, `aws:SourceAccount`, `aws:SourceOrgID`,
 * `aws:SourceOrgPaths`, `aws:SourceOwner`, `aws:PrincipalServiceName(sList)`), the keys of a request a service forwards
 * (`aws:CalledVia*`), those of EC2, Glue, SSM and Identity Center credentials, and the role's tags it does not have.
 */
export const DIRECT_ROLE_CALL_ABSENT: readonly string[] = [
  ...NEVER_SET,
  'aws:sourcearn',
  'aws:sourceaccount',
  'aws:sourceorgid',
  'aws:sourceorgpaths',
  'aws:sourceowner',
  'aws:principalservicename',
  'aws:principalservicenameslist',
  'aws:calledvia',
  'aws:calledviafirst',
  'aws:calledvialast',
  'aws:principaltag/',
  'ec2:roledelivery',
  'ec2:sourceinstancearn',
  'aws:ec2instancesourcevpc',
  'aws:ec2instancesourceprivateipv4',
  'glue:roleassumedby',
  'glue:credentialissuingservice',
  'ssm:sourceinstancearn',
  'identitystore:userid',
];

/**
 * What AWS does not set on a request a service makes with a role's credentials (DynamoDB, SQS or SNS calling KMS for
 * the caller): as a direct call, except `aws:CalledVia*` (set by the services that forward it), which is therefore
 * not in the list.
 */
export const FORWARDED_ROLE_CALL_ABSENT: readonly string[] = DIRECT_ROLE_CALL_ABSENT.filter((key) => !key.startsWith('aws:calledvia'));

/** What a KMS request a service makes for an encrypted resource leaves out: every encryption-context key it does not set. */
export const SERVICE_KMS_REQUEST_ABSENT: readonly string[] = ['kms:encryptioncontext:'];

/** What AWS does not set on a request a service principal makes for a resource (SNS delivering to a queue). */
export const SERVICE_PRINCIPAL_ABSENT: readonly string[] = [...NEVER_SET, 'aws:principaltag/', 'aws:userid', 'lambda:sourcefunctionarn'];

/** One condition key a policy reads, and which policy. */
export interface KeyRead {
  readonly policy: string;
  readonly key: string;
}

/** True when an `Action` pattern (`*` and `?` wildcards, case-insensitive) matches `action`. */
function actionMatches(pattern: string, action: string): boolean {
  const source = pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*').replace(/\?/g, '.');
  return new RegExp(`^${source}$`, 'i').test(action);
}

/** Whether a statement can apply to `action` (its `Action` matches it, or its `NotAction` does not). */
function appliesTo(statement: PolicyStatement, action: string): boolean {
  if (statement.Action !== undefined) return asList(statement.Action).some((pattern) => actionMatches(pattern, action));
  if (statement.NotAction !== undefined) return !asList(statement.NotAction).some((pattern) => actionMatches(pattern, action));
  return false;
}

/** The policy variables (`${aws:username}`, `${aws:PrincipalTag/team, 'none'}`) in a string. */
function variablesIn(text: string): string[] {
  return [...text.matchAll(/\$\{([^}]+)\}/g)].map((match) => match[1]!.split(',')[0]!.trim()).filter((name) => !['*', '?', '$'].includes(name));
}

/** Who asks, as far as a statement's `Principal` can tell it apart: a role of the account, or a service. */
export type Asker = { readonly kind: 'role' } | { readonly kind: 'service'; readonly service: string };

/**
 * Whether a resource-policy statement's `Principal` can name the asker: a statement for services only never applies
 * to a role, nor one for other services or for AWS principals only (`*` aside) to a service. Identity policies have
 * no `Principal`: they apply.
 */
function canName(statement: PolicyStatement, asker: Asker): boolean {
  const principal = statement.Principal;
  if (principal === undefined || principal === '*' || typeof principal !== 'object' || principal === null) return true;
  const fields = principal as Record<string, unknown>;
  const listed = (field: string): readonly string[] => asList(fields[field] as string | readonly string[] | undefined);
  if (listed('AWS').includes('*')) return true;
  if (asker.kind === 'role') return Object.keys(fields).some((field) => field !== 'Service');
  return listed('Service').includes(asker.service);
}

/**
 * A condition operand's values as a list: IAM takes a scalar (a string, a number such as `NumericLessThan
 * { s3:TlsVersion: 1.2 }`, a boolean) or a list of them.
 */
function conditionValues(values: unknown): readonly unknown[] {
  return values === undefined || values === null ? [] : Array.isArray(values) ? values : [values];
}

/**
 * The context keys the statements of `policies` that can apply to `action` by `asker` read (in conditions and policy
 * variables).
 */
export function keysRead(policies: readonly { readonly name: string; readonly policy: PolicyDocument }[], action: string, asker: Asker): KeyRead[] {
  const read: KeyRead[] = [];
  for (const { name, policy } of policies) {
    for (const statement of policy.Statement) {
      if (!appliesTo(statement, action) || !canName(statement, asker)) continue;
      const texts: string[] = [...asList(statement.Resource), ...asList(statement.NotResource)];
      for (const operands of Object.values(statement.Condition ?? {})) {
        for (const [key, values] of Object.entries(operands)) {
          read.push({ policy: name, key });
          texts.push(...conditionValues(values).filter((value): value is string => typeof value === 'string'));
        }
      }
      for (const text of texts) for (const key of variablesIn(text)) read.push({ policy: name, key });
    }
  }
  return read;
}

/** The first key in `read` that the context neither carries nor knows AWS leaves out; undefined when there is none. */
export function firstUnfilledKey(read: readonly KeyRead[], context: RequestContext): KeyRead | undefined {
  const carried = new Set(Object.keys(context.values).map((key) => key.toLowerCase()));
  return read.find(({ key }) => {
    const lower = key.toLowerCase();
    if (carried.has(lower)) return false;
    return !context.absent.some((absent) => (absent.endsWith('/') || absent.endsWith(':') ? lower.startsWith(absent) : lower === absent));
  });
}
