/**
 * The operator's DynamoDB access under IAM: when a scenario names the role its operator works under
 * (`operatorRole`), the operator pass's `BlockedMessages` calls go through a proxy that authorizes each one under that
 * role's policies, as the `blocked` CLI run by that role would be in AWS. A denial is an `access-denied` violation
 * like any other, and the call fails with `AccessDeniedException`.
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import type { TransactionConflicts } from '../aws/transaction-conflicts';
import { startDynamoDbProxy } from '../faults/dynamodb-proxy';
import { resourcesNamed, shownName } from '../model/find-resource';
import type { AccessModel } from '../model/access-model';
import type { FlowAccess } from './flow-access';

/** Thrown when the scenario's operator role names no role of the app, or several. */
export class OperatorRoleNotFoundError extends Error {
  public override readonly name = 'OperatorRoleNotFoundError';
}

/** A DynamoDB client whose calls are authorized under the operator's role; `stop()` closes its proxy. */
export interface OperatorClient {
  readonly client: DynamoDBClient;
  stop(): Promise<void>;
}

/**
 * Starts the operator's client for the role `reference` names (construct path, a trailing part of it, or logical id).
 * Its requests meet the functions' in `transactionConflicts`, the run's arbiter, when given.
 */
export async function startOperatorClient(
  access: AccessModel,
  flowAccess: FlowAccess,
  reference: string,
  config: DynamoDBClientConfig & { readonly endpoint: string },
  transactionConflicts?: TransactionConflicts,
): Promise<OperatorClient> {
  const matches = resourcesNamed(access.roles, reference);
  if (matches.length !== 1) {
    const known = access.roles.map(shownName).join(', ') || '(none)';
    throw new OperatorRoleNotFoundError(
      matches.length === 0
        ? `scenario operatorRole '${reference}' names no role of the app; its roles are: ${known}`
        : `scenario operatorRole '${reference}' names ${matches.length} roles (${matches.map(shownName).join(', ')}); give more of the construct path`,
    );
  }
  const proxy = await startDynamoDbProxy(config.endpoint, { authorize: flowAccess.dynamoDbCheck(matches[0]!.key), transactionConflicts });
  const client = new DynamoDBClient({ ...config, endpoint: proxy.endpoint, maxAttempts: 1 });
  return {
    client,
    stop: async () => {
      client.destroy();
      await proxy.stop();
    },
  };
}
