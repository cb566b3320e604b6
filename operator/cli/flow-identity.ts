/**
 * `replay --flow-profile` proves that the profile reaches the flow of the subscriber it replays to: the subscriber's
 * Operator output names the topic its subscription is on (`topicArn`), whose ARN says the flow's account and Region
 * (where the outbox is); the profile's credentials must be of that account (their `accountId`, which the AWS SDK knows
 * for a profile with `role_arn`, an SSO profile, or static keys with `aws_account_id`), and the outbox is read in that
 * Region. A profile of another environment (staging's operator role while replaying to production's subscriber) would
 * otherwise read that environment's outbox and send its events to this subscriber's queue, whose inbox has never seen
 * their ids: they would be applied, which nothing undoes.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

/** The account and Region of an SNS topic's ARN, or undefined when it is not one (a token never reaches here). */
export function topicEnvironment(topicArn: string): { account: string; region: string } | undefined {
  const match = /^arn:[^:]+:sns:([a-z0-9-]+):(\d{12}):[^:]+$/.exec(topicArn);
  return match === null ? undefined : { region: match[1]!, account: match[2]! };
}

/** The message of a `--flow-profile` whose credentials can not be loaded (the SDK's error does not name the profile). */
export function unloadableProfileMessage(profile: string, error: Error): string {
  return `--flow-profile ${profile}: no credentials could be loaded for it (${error.message}); is it a profile of your AWS config, with role_arn and source_profile?`;
}

/**
 * Why `client` (of `--flow-profile profile`) may not read the outbox of the flow whose topic is `topicArn`, or
 * undefined when its credentials are of the topic's account. Loads the credentials (assuming the role); throws the
 * named error when they can not be loaded.
 */
export async function flowProfileRefusal(client: DynamoDBClient, profile: string, subscriber: string, topicArn: string): Promise<string | undefined> {
  const flow = topicEnvironment(topicArn);
  if (flow === undefined) return `the Operator output of '${subscriber}' names the topic ${topicArn}, which is not an SNS topic ARN, so the flow's account can not be told`;
  let accountId: string | undefined;
  try {
    accountId = (await client.config.credentials()).accountId;
  } catch (error) {
    throw new Error(unloadableProfileMessage(profile, error as Error));
  }
  if (accountId === undefined || accountId === '') {
    return (
      `--flow-profile ${profile}: the account of its credentials is not known (a profile with role_arn, an SSO profile, or static keys with ` +
      `aws_account_id tell it), so it can not be proven to be of the flow of '${subscriber}' (account ${flow.account}, Region ${flow.region}, its topic ${topicArn}); nothing was read or sent`
    );
  }
  if (accountId !== flow.account) {
    return (
      `--flow-profile ${profile} reaches account ${accountId}, but '${subscriber}' subscribes to the topic ${topicArn} of account ${flow.account} ` +
      `(Region ${flow.region}): that profile would read the outbox of another flow (another environment?) and send its events to this subscriber; ` +
      `use the profile of the role account ${flow.account} granted (its CrossAccountOperator<account>/RoleArn output); nothing was read or sent`
    );
  }
  return undefined;
}
