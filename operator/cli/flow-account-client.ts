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
import { unloadableProfileMessage } from './flow-identity';

/** The option (parseArgs format). */
export const FLOW_PROFILE_OPTION = { 'flow-profile': { type: 'string' } } as const;

/** Its help text. */
export const FLOW_PROFILE_HELP = `  --flow-profile <profile>           a subscriber of another account: read the outbox (in the flow's account) with this
                                     AWS profile, one that assumes the role the flow's account granted (role_arn = the
                                     CrossAccountOperator<account>/RoleArn output, source_profile = your own); the
                                     subscriber's queue and inbox are reached with your own credentials; its account
                                     must be the one of the topic --subscriber-output names (refused otherwise)`;

/**
 * The flow account's DynamoDB client for `profile`, in `flowRegion` (the Region of the subscriber's topic, where the
 * flow's outbox is), at the global options' endpoint. The global `--region` is the subscriber's (its queue and inbox),
 * which for a subscriber in another Region than its flow is not the outbox's, so it never overrides the flow's.
 */
export function flowAccountClient(options: ClientOptions, profile: string, flowRegion: string): DynamoDBClient {
  return new DynamoDBClient({ profile, region: flowRegion, ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }) });
}

/** The error of an outbox table that is not there with the credentials used (its name is `ResourceNotFoundException`, as the SDK's). */
function missingOutboxError(message: string): Error {
  const error = new Error(message);
  error.name = 'ResourceNotFoundException';
  return error;
}

/**
 * Makes `client` name the outbox table when DynamoDB answers a read of it `ResourceNotFoundException` (whose message,
 * "Requested resource not found", names nothing): a table name is resolved in the account and Region of the client's
 * credentials, so a subscriber's team of another account that left out `--flow-profile` (or gave a profile of another
 * account) reads no such table. With `profile` (`--flow-profile`), a profile whose credentials can not be loaded (not
 * in the AWS config) is named too (the SDK's error does not name it). Other answers are left as they are.
 */
export function nameMissingOutbox(client: DynamoDBClient, outboxTable: string, profile: string | undefined): void {
  client.middlewareStack.add(
    (next) => async (args) => {
      try {
        return await next(args);
      } catch (error) {
        if (profile !== undefined && (error as Error).name === 'CredentialsProviderError') {
          throw new Error(unloadableProfileMessage(profile, error as Error));
        }
        if ((error as Error).name !== 'ResourceNotFoundException' || (args.input as { TableName?: unknown }).TableName !== outboxTable) throw error;
        throw missingOutboxError(
          profile === undefined
            ? `the outbox table ${outboxTable} was not found with your credentials (their account and Region); a subscriber of another account than its flow's reads the flow's outbox with --flow-profile <a profile of the role the flow's account granted>`
            : `the outbox table ${outboxTable} was not found with the profile ${profile} (--flow-profile): its credentials must be of the flow's account, in the outbox's Region, and --table the flow's outboxTable`,
        );
      }
    },
    { step: 'initialize', priority: 'high', name: 'nameMissingOutbox', override: true },
  );
}
