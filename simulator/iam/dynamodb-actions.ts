/**
 * What one DynamoDB API request asks IAM for, as the DynamoDB Developer Guide's "Actions, resources, and condition keys
 * for Amazon DynamoDB" lists it: the action of the operation on the table (or index) it names; each action inside a
 * `TransactWriteItems` / `TransactGetItems` separately (`Put` → `dynamodb:PutItem`, `Update` → `UpdateItem`, `Delete`
 * → `DeleteItem`, `ConditionCheck` → `ConditionCheckItem`, `Get` → `GetItem`); `BatchWriteItem` / `BatchGetItem` once
 * per table they name; `Query` and `Scan` on `table/<name>/index/<index>` when they name an index.
 */
import { WRITE_OPERATIONS } from '../aws/request-items';

/** One authorization a request needs. */
export interface DynamoDbAccess {
  /** `dynamodb:<Action>` */
  readonly action: string;
  readonly tableName: string;
  /** The index a `Query` or `Scan` reads. */
  readonly indexName?: string;
  /** Whether it writes (decides the KMS request for a table under a customer-managed key). */
  readonly writes: boolean;
  /** The operation's parameters for this access: the whole input, a transaction item's `Put`/`Update`/..., or a batch's `RequestItems` entry of this table. */
  readonly parameters: Readonly<Record<string, unknown>>;
  /** `TransactWriteItems` / `TransactGetItems` for an item of a transaction. */
  readonly enclosingOperation?: string;
}

const TRANSACT_ACTIONS: Readonly<Record<string, string>> = { Put: 'PutItem', Update: 'UpdateItem', Delete: 'DeleteItem', ConditionCheck: 'ConditionCheckItem', Get: 'GetItem' };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The accesses `operation` with `body` (DynamoDB JSON) needs; none for an operation that names no table, or a body that is not JSON. */
export function dynamoDbAccesses(operation: string, body: Buffer | string): DynamoDbAccess[] {
  let input: unknown;
  try {
    input = JSON.parse(typeof body === 'string' ? body : body.toString('utf8'));
  } catch {
    return [];
  }
  if (!isObject(input)) return [];
  if (operation === 'TransactWriteItems' || operation === 'TransactGetItems') {
    const items = Array.isArray(input.TransactItems) ? input.TransactItems : [];
    return items.flatMap((item): DynamoDbAccess[] => {
      if (!isObject(item)) return [];
      return Object.entries(item).flatMap(([kind, request]) => {
        const action = TRANSACT_ACTIONS[kind];
        if (action === undefined || !isObject(request) || typeof request.TableName !== 'string') return [];
        return [{ action: `dynamodb:${action}`, tableName: request.TableName, writes: kind !== 'Get' && kind !== 'ConditionCheck', parameters: request, enclosingOperation: operation }];
      });
    });
  }
  if (operation === 'BatchWriteItem' || operation === 'BatchGetItem') {
    const requestItems = isObject(input.RequestItems) ? input.RequestItems : {};
    return Object.entries(requestItems).map(([tableName, requests]) => ({
      action: `dynamodb:${operation}`,
      tableName,
      writes: operation === 'BatchWriteItem',
      parameters: { ...input, RequestItems: { [tableName]: requests } },
    }));
  }
  if (typeof input.TableName !== 'string') return [];
  const indexName = (operation === 'Query' || operation === 'Scan') && typeof input.IndexName === 'string' ? input.IndexName : undefined;
  return [{ action: `dynamodb:${operation}`, tableName: input.TableName, ...(indexName === undefined ? {} : { indexName }), writes: WRITE_OPERATIONS.has(operation), parameters: input }];
}
