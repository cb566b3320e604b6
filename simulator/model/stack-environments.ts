/**
 * The account and Region each stack of a run is deployed to, when the app's stacks span several (issue 41, a subscriber
 * in another account or Region: docs/CROSS-ACCOUNT.md). Each resource then lives in its stack's environment: its ARN
 * carries that account and Region, `AWS::AccountId` and `AWS::Region` of its template resolve to them, and IAM decides
 * a request across accounts as AWS does (../iam/access-control.ts). A run whose stacks all share one explicit
 * environment is placed in it too (its templates carry that account and Region: a key policy's root delegation, a
 * `kms:ViaService` of its Region). Only a run of environment-agnostic stacks has none: its resources are in the
 * simulator's local account and the run's Region.
 */
import type { AssemblyStack } from './assembly-manifest';
import type { ResourceKey } from './modelled-resource';

/** One stack's environment. */
export interface StackEnvironment {
  readonly account: string;
  readonly region: string;
}

/** The environments of a run's stacks, by stack name. */
export type StackEnvironments = ReadonlyMap<string, StackEnvironment>;

/** The stack name of a resource key (`<stack>/<logical id>`). */
export function stackOfKey(key: ResourceKey): string {
  const slash = key.indexOf('/');
  return slash < 0 ? key : key.slice(0, slash);
}

/** `aws://<account>/<region>`, split; undefined when it is not one. */
function parseEnvironment(environment: string | undefined): { readonly account: string; readonly region: string } | undefined {
  const match = /^aws:\/\/([^/]+)\/(.+)$/.exec(environment ?? '');
  return match === null ? undefined : { account: match[1]!, region: match[2]! };
}

/** The error of an app whose stacks cannot be placed in environments. */
export class EnvironmentPlacementError extends Error {
  public override readonly name = 'EnvironmentPlacementError';
}

/** The account id every local ARN and queue URL carries (DynamoDB Local uses the same): a stack's when none is known. */
export const LOCAL_ACCOUNT_ID = '000000000000';

/**
 * The environment of each stack when any stack names its account or Region; undefined when every stack is
 * environment-agnostic (`unknown-account` and `unknown-region`, or no environment). When the known accounts and Regions
 * are one each, an environment-agnostic stack (or part) takes that one (the local account, or `region`, when none is
 * known). A stack whose account or Region is not known beside stacks of several environments is refused: nothing says
 * where it would deploy (the constructs refuse such an app at synth too).
 * @param region the Region of a stack when no stack names one (the run's)
 */
export function stackEnvironments(stacks: readonly AssemblyStack[], describe: (stack: AssemblyStack) => string, region = 'us-east-1'): StackEnvironments | undefined {
  const parsed = stacks.map((stack) => ({ stack, environment: parseEnvironment(stack.environment) }));
  const known = (values: Array<string | undefined>, unknown: string) => new Set(values.filter((value): value is string => value !== undefined && value !== unknown));
  const accounts = known(parsed.map(({ environment }) => environment?.account), 'unknown-account');
  const regions = known(parsed.map(({ environment }) => environment?.region), 'unknown-region');
  if (accounts.size === 0 && regions.size === 0) return undefined;
  if (accounts.size <= 1 && regions.size <= 1) {
    const account = [...accounts][0] ?? LOCAL_ACCOUNT_ID;
    const placed = { account, region: [...regions][0] ?? region };
    return new Map(parsed.map(({ stack }) => [stack.stackName, placed]));
  }
  const unplaced = parsed.filter(({ environment }) => environment === undefined || environment.account === 'unknown-account' || environment.region === 'unknown-region');
  if (unplaced.length > 0) {
    throw new EnvironmentPlacementError(
      `the stacks are in ${accounts.size} accounts and ${regions.size} Regions, but ${unplaced.map(({ stack }) => `${describe(stack)} (${stack.environment ?? 'no environment'})`).join(', ')} ` +
        'names no account or Region: set env: { account, region } on every stack of an app that spans environments (docs/CROSS-ACCOUNT.md)',
    );
  }
  return new Map(parsed.map(({ stack, environment }) => [stack.stackName, environment!]));
}

/** The one Region every stack of `environments` is in; undefined when none is placed or they span several. */
export function singleRegionOf(environments: StackEnvironments | undefined): string | undefined {
  const regions = new Set([...(environments?.values() ?? [])].map((environment) => environment.region));
  return regions.size === 1 ? [...regions][0] : undefined;
}
