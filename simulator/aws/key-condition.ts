/**
 * The partition key value a DynamoDB `Query` names, as DynamoDB reads its key condition: an equality of the partition
 * key in `KeyConditionExpression` (`#name` resolved through `ExpressionAttributeNames`) or the legacy `KeyConditions`
 * `EQ`. Shared by the IAM context (`dynamodb:LeadingKeys`) and fault steering (a Query of a contended item).
 */

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A key attribute's value as DynamoDB compares keys: the string of an `S`, `N` or `B` value; undefined for any other. */
export function keyValue(attribute: unknown): string | undefined {
  if (!isObject(attribute)) return undefined;
  for (const type of ['S', 'N', 'B'] as const) if (typeof attribute[type] === 'string') return attribute[type] as string;
  return undefined;
}

/** `token` (an expression's attribute name, `#name` a placeholder) resolved through `names` (`ExpressionAttributeNames`). */
export function resolveName(token: string, names: unknown): string {
  return token.startsWith('#') && isObject(names) && typeof names[token] === 'string' ? (names[token] as string) : token;
}

/** The value (see {@link keyValue}) a `Query` sets `partitionKey` equal to, from `KeyConditionExpression` or the legacy `KeyConditions`; undefined when it sets none. */
export function queriedPartitionValue(parameters: Readonly<Record<string, unknown>>, partitionKey: string): string | undefined {
  if (typeof parameters.KeyConditionExpression === 'string') {
    for (const part of parameters.KeyConditionExpression.split(/\s+and\s+/i)) {
      const match = /^\s*\(?\s*([#\w.-]+)\s*=\s*(:[\w-]+)\s*\)?\s*$/.exec(part);
      if (match === null || resolveName(match[1]!, parameters.ExpressionAttributeNames) !== partitionKey) continue;
      const values = parameters.ExpressionAttributeValues;
      return isObject(values) ? keyValue(values[match[2]!]) : undefined;
    }
    return undefined;
  }
  const condition = isObject(parameters.KeyConditions) ? parameters.KeyConditions[partitionKey] : undefined;
  if (!isObject(condition) || condition.ComparisonOperator !== 'EQ' || !Array.isArray(condition.AttributeValueList)) return undefined;
  return keyValue(condition.AttributeValueList[0]);
}
