/**
 * Where a flow's topic and a subscriber are deployed, and whether they are in different AWS environments (account or
 * Region). CDK can pass no token between stacks of different environments, SNS needs a topic grant for a subscriber of
 * another account, and the subscription of a queue of another Region is created in the topic's Region
 * (docs/CROSS-ACCOUNT.md).
 */
import { Token } from 'aws-cdk-lib';
import { validationError } from './validation-error';

/** An AWS environment as CDK knows it at synth: account and Region, each a literal or a token (environment-agnostic). */
export interface AwsEnvironment {
  readonly account: string;
  readonly region: string;
}

/** How two environments relate: the same (or both unknown), or differing in account, Region or both. */
export interface EnvironmentCrossing {
  /** Whether the accounts differ (both known). */
  readonly crossAccount: boolean;
  /** Whether the Regions differ (both known). */
  readonly crossRegion: boolean;
}

/** `aws://account/region`, `unknown-...` for a part known only at deploy time. */
export function describeEnvironment(env: AwsEnvironment): string {
  const part = (value: string, what: string) => (Token.isUnresolved(value) ? `unknown-${what}` : value);
  return `aws://${part(env.account, 'account')}/${part(env.region, 'region')}`;
}

/**
 * Compares the flow's environment with the subscriber's, part by part. A part unknown on both sides is taken to be the
 * same (as CDK does for two environment-agnostic stacks), except a Region unknown on both sides of two accounts, which
 * fails naming both stacks and `env.region`. Fails naming both environments and what to set, when a part
 * is known on one side only and the rest does not already say they differ: CDK can then neither refer from one to the
 * other nor tell whether a topic grant or a Region is needed.
 *
 * @param owner e.g. `Subscriber 'Ledger'`
 * @param flowWhat e.g. `the flow Payments/Payments`
 * @param subscriberStackName the stack to name in the message
 */
export function compareEnvironments(owner: string, flowWhat: string, flow: AwsEnvironment, subscriberStackName: string, subscriber: AwsEnvironment): EnvironmentCrossing {
  const known = (value: string) => !Token.isUnresolved(value);
  const unknownOnOneSide = (['account', 'region'] as const).filter((part) => known(flow[part]) !== known(subscriber[part]));
  if (unknownOnOneSide.length > 0) {
    throw validationError(
      `${owner}: its stack ${subscriberStackName} is in ${describeEnvironment(subscriber)} and ${flowWhat} in ${describeEnvironment(flow)}; ` +
        `the ${unknownOnOneSide.join(' and ')} must be known on both sides (or on neither) for a subscriber to join a flow: ` +
        'set env: { account, region } on both stacks (a subscriber in another account or Region than its flow needs both environments explicit)',
    );
  }
  const crossAccount = known(flow.account) && flow.account !== subscriber.account;
  // Across accounts nothing makes two deploy-time Regions one: each account's deployment takes its own (its profile,
  // its pipeline stage), and the subscription would name a topic, the grant a queue, of a Region the other is not in.
  if (crossAccount && !known(flow.region)) {
    throw validationError(
      `${owner}: its stack ${subscriberStackName} is in ${describeEnvironment(subscriber)} and ${flowWhat} in ${describeEnvironment(flow)}; ` +
        'the Region is unknown on both sides of a subscriber in another account: set env.region on both stacks (env: { account, region })',
    );
  }
  return {
    crossAccount,
    crossRegion: known(flow.region) && flow.region !== subscriber.region,
  };
}

/** Whether the environments differ at all. */
export function isCrossEnvironment(crossing: EnvironmentCrossing): boolean {
  return crossing.crossAccount || crossing.crossRegion;
}
