/**
 * `--flow-profile`: the DynamoDB client of the flow's account, for a command whose subscriber is in another account
 * (docs/CROSS-ACCOUNT.md, "Operating a subscriber of another account"). `replay` reads the outbox, which is in the
 * flow's account, through the role the flow's account granted to the subscriber's (`flow.grantOperator`), and sends to
 * the subscriber's queue with the operator's own credentials. The profile is an AWS shared-config profile with
 * `role_arn` (the `CrossAccountOperator<account>/RoleArn` output of the flow's stack) and `source_profile` (or
 * `credential_source`): the SDK's own credential providers assume the role (STS AssumeRole) and renew it, as the AWS
 * CLI does with the same profile. No dependency beyond the DynamoDB client's own.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { ClientOptions } from './command';

/** The option (parseArgs format). */
export const FLOW_PROFILE_OPTION = { 'flow-profile': { type: 'string' } } as const;

/** Its help text. */
export const FLOW_PROFILE_HELP = `  --flow-profile <profile>           a subscriber of another account: read the outbox (in the flow's account) with this
                                     AWS profile, one that assumes the role the flow's account granted (role_arn = the
                                     CrossAccountOperator<account>/RoleArn output, source_profile = your own); the
                                     subscriber's queue and inbox are reached with your own credentials`;

/** The flow account's DynamoDB client for `profile`, at the global options' Region and endpoint. */
export function flowAccountClient(options: ClientOptions, profile: string): DynamoDBClient {
  return new DynamoDBClient({ profile, ...(options.region === undefined ? {} : { region: options.region }), ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }) });
}
