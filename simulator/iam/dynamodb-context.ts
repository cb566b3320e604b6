/**
 * DynamoDB's own condition keys of one request, filled from its parameters as DynamoDB fills them (DynamoDB Developer
 * Guide, "Using IAM policy conditions for fine-grained access control"; which key each action can carry is the
 * Service Authorization Reference's "Actions, resources, and condition keys for Amazon DynamoDB"):
 * - `dynamodb:LeadingKeys`: the partition key values the request names: the item's (`PutItem`, a transaction's `Put`),
 *   the key's (`GetItem`, `UpdateItem`, `DeleteItem`, `ConditionCheck`), every item's and key's of a batch, and the
 *   value a `Query` on the table sets its partition key equal to (`KeyConditionExpression` or `KeyConditions`);
 * - `dynamodb:Attributes`: the top-level attribute names of the item a `PutItem` (or a batch of puts) writes, or of the
 *   projection (`ProjectionExpression`, `AttributesToGet`) a read asks for;
 * - `dynamodb:Select`, `dynamodb:ReturnValues`, `dynamodb:ReturnConsumedCapacity`: the parameters, when the request
 *   sets them;
 * - `dynamodb:EnclosingOperation`: `TransactWriteItems` / `TransactGetItems` for a transaction's item.
 * A key the action cannot carry is absent, as in AWS. A key it can carry that the request leaves to a default the
 * guide does not say is set (no `Select`, no projection, an `UpdateItem`'s attributes, a `Query` on an index) is not
 * filled: a condition reading it makes the request "not evaluated" (./context-keys.ts).
 */
import type { TableKeys } from '../model/access-model';
import type { DynamoDbAccess } from './dynamodb-actions';
import type { RequestContext } from './context-keys';
import { keyValue, queriedPartitionValue, resolveName } from '../aws/key-condition';

/** Every DynamoDB condition key a data-plane request may carry (lower-case). */
const DYNAMODB_KEYS = [
  'dynamodb:attributes',
  'dynamodb:enclosingoperation',
  'dynamodb:leadingkeys',
  'dynamodb:returnconsumedcapacity',
  'dynamodb:returnvalues',
  'dynamodb:select',
  'dynamodb:fulltablescan',
  'dynamodb:firstpartitionkeyvalues',
  'dynamodb:secondpartitionkeyvalues',
  'dynamodb:thirdpartitionkeyvalues',
  'dynamodb:fourthpartitionkeyvalues',
] as const;

/** The keys each action can carry (Service Authorization Reference); every other DynamoDB key is absent for it. */
const KEYS_OF_ACTION: Readonly<Record<string, readonly string[]>> = {
  PutItem: ['attributes', 'enclosingoperation', 'leadingkeys', 'returnconsumedcapacity', 'returnvalues'],
  UpdateItem: ['attributes', 'enclosingoperation', 'leadingkeys', 'returnconsumedcapacity', 'returnvalues'],
  DeleteItem: ['attributes', 'enclosingoperation', 'leadingkeys', 'returnconsumedcapacity', 'returnvalues'],
  GetItem: ['attributes', 'enclosingoperation', 'leadingkeys', 'returnconsumedcapacity', 'select'],
  ConditionCheckItem: ['attributes', 'leadingkeys', 'returnconsumedcapacity', 'returnvalues'],
  Query: ['attributes', 'leadingkeys', 'returnconsumedcapacity', 'returnvalues', 'select'],
  Scan: ['attributes', 'returnconsumedcapacity', 'returnvalues', 'select', 'fulltablescan'],
  BatchWriteItem: ['attributes', 'leadingkeys', 'returnconsumedcapacity'],
  BatchGetItem: ['attributes', 'leadingkeys', 'returnconsumedcapacity', 'select'],
};

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The partition key values of items or keys; undefined when one lacks it. */
function partitionValues(records: readonly unknown[], partitionKey: string): string[] | undefined {
  const values: string[] = [];
  for (const record of records) {
    const value = isObject(record) ? keyValue(record[partitionKey]) : undefined;
    if (value === undefined) return undefined;
    values.push(value);
  }
  return values;
}

/** The top-level attribute names of a projection, or undefined when the request asks for none. */
function projectedNames(parameters: Readonly<Record<string, unknown>>): string[] | undefined {
  if (typeof parameters.ProjectionExpression === 'string') {
    return [...new Set(parameters.ProjectionExpression.split(',').map((path) => resolveName(path.trim().split(/[.[]/)[0]!, parameters.ExpressionAttributeNames)))];
  }
  if (Array.isArray(parameters.AttributesToGet)) return parameters.AttributesToGet.filter((name): name is string => typeof name === 'string');
  return undefined;
}

/** The requests of a batch for the access's table (`RequestItems[table]`). */
function batchEntry(access: DynamoDbAccess): unknown {
  const items = access.parameters.RequestItems;
  return isObject(items) ? items[access.tableName] : undefined;
}

function leadingKeys(operation: string, access: DynamoDbAccess, keys: TableKeys | undefined): string[] | undefined {
  if (keys === undefined) return undefined;
  const { parameters } = access;
  switch (operation) {
    case 'PutItem':
      return partitionValues([parameters.Item], keys.partitionKey);
    case 'GetItem':
    case 'UpdateItem':
    case 'DeleteItem':
    case 'ConditionCheckItem':
      return partitionValues([parameters.Key], keys.partitionKey);
    case 'Query': {
      if (access.indexName !== undefined) return undefined;
      const value = queriedPartitionValue(parameters, keys.partitionKey);
      return value === undefined ? undefined : [value];
    }
    case 'BatchWriteItem': {
      const requests = batchEntry(access);
      if (!Array.isArray(requests)) return undefined;
      return partitionValues(
        requests.map((request) => (isObject(request) && isObject(request.PutRequest) ? request.PutRequest.Item : isObject(request) && isObject(request.DeleteRequest) ? request.DeleteRequest.Key : undefined)),
        keys.partitionKey,
      );
    }
    case 'BatchGetItem': {
      const entry = batchEntry(access);
      return isObject(entry) && Array.isArray(entry.Keys) ? partitionValues(entry.Keys, keys.partitionKey) : undefined;
    }
    default:
      return undefined;
  }
}

function attributes(operation: string, access: DynamoDbAccess): string[] | undefined {
  const { parameters } = access;
  switch (operation) {
    case 'PutItem':
      return isObject(parameters.Item) ? Object.keys(parameters.Item) : undefined;
    case 'GetItem':
    case 'Query':
    case 'Scan':
      return projectedNames(parameters);
    case 'BatchGetItem': {
      const entry = batchEntry(access);
      return isObject(entry) ? projectedNames(entry) : undefined;
    }
    case 'BatchWriteItem': {
      const requests = batchEntry(access);
      if (!Array.isArray(requests) || !requests.every((request) => isObject(request) && isObject(request.PutRequest) && isObject(request.PutRequest.Item))) return undefined;
      return [...new Set(requests.flatMap((request) => Object.keys(((request as Record<string, Record<string, unknown>>).PutRequest!.Item as Record<string, unknown>) ?? {})))];
    }
    default:
      return undefined;
  }
}

/** DynamoDB's condition keys of one access (see the module comment). */
export function dynamoDbContext(access: DynamoDbAccess, keys: TableKeys | undefined): RequestContext {
  const operation = access.action.slice('dynamodb:'.length);
  const carried = KEYS_OF_ACTION[operation] ?? [];
  const values: Record<string, string | readonly string[]> = {};
  const fill = (name: string, value: string | readonly string[] | undefined): void => {
    if (value !== undefined && carried.includes(name.toLowerCase())) values[`dynamodb:${name}`] = value;
  };
  fill('LeadingKeys', leadingKeys(operation, access, keys));
  fill('Attributes', attributes(operation, access));
  for (const parameter of ['Select', 'ReturnValues', 'ReturnConsumedCapacity'] as const) {
    const value = access.parameters[parameter];
    fill(parameter, typeof value === 'string' ? value : undefined);
  }
  if (access.enclosingOperation !== undefined) fill('EnclosingOperation', access.enclosingOperation);
  const absent: string[] = DYNAMODB_KEYS.filter((key) => !carried.includes(key.slice('dynamodb:'.length)));
  // only a transaction's items carry EnclosingOperation
  if (access.enclosingOperation === undefined) absent.push('dynamodb:enclosingoperation');
  return { values, absent };
}
