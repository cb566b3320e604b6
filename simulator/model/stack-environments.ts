/**
 * The account and Region each stack of a run is deployed to, when the app's stacks span several (issue 41, a subscriber
 * in another account or Region: docs/CROSS-ACCOUNT.md). Each resource then lives in its stack's environment: its ARN
 * carries that account and Region, `AWS::AccountId` and `AWS::Region` of its template resolve to them, and IAM decides
 * a request across accounts as AWS does (../iam/access-control.ts). A run of one environment has none: its resources
 * are in the simulator's local account and the run's Region, as before.
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

/**
 * The environment of each stack when the known accounts or Regions of `stacks` differ; undefined when they are one
 * environment (environment-agnostic parts, `unknown-account` and `unknown-region`, match any). A stack whose account or
 * Region is not known beside stacks of several environments is refused: nothing says where it would deploy (the
 * constructs refuse such an app at synth too).
 */
export function stackEnvironments(stacks: readonly AssemblyStack[], describe: (stack: AssemblyStack) => string): StackEnvironments | undefined {
  const parsed = stacks.map((stack) => ({ stack, environment: parseEnvironment(stack.environment) }));
  const known = (values: Array<string | undefined>, unknown: string) => new Set(values.filter((value): value is string => value !== undefined && value !== unknown));
  const accounts = known(parsed.map(({ environment }) => environment?.account), 'unknown-account');
  const regions = known(parsed.map(({ environment }) => environment?.region), 'unknown-region');
  if (accounts.size <= 1 && regions.size <= 1) return undefined;
  const unplaced = parsed.filter(({ environment }) => environment === undefined || environment.account === 'unknown-account' || environment.region === 'unknown-region');
  if (unplaced.length > 0) {
    throw new EnvironmentPlacementError(
      `the stacks are in ${accounts.size} accounts and ${regions.size} Regions, but ${unplaced.map(({ stack }) => `${describe(stack)} (${stack.environment ?? 'no environment'})`).join(', ')} ` +
        'names no account or Region: set env: { account, region } on every stack of an app that spans environments (docs/CROSS-ACCOUNT.md)',
    );
  }
  return new Map(parsed.map(({ stack, environment }) => [stack.stackName, environment!]));
}
