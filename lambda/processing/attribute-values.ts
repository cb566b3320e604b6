/**
 * Reading raw DynamoDB attribute values (item sizes are measured by transaction/item-size.ts).
 *
 * `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'` puts the existing item on the SDK's error in the low-level format
 * (the DocumentClient does not translate errors), so the few lines here read it without adding a dependency.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';

/** Converts one low-level attribute value to the plain value the DocumentClient would return. */
export function fromAttributeValue(value: AttributeValue): unknown {
  if (value.S !== undefined) return value.S;
  if (value.N !== undefined) return Number(value.N);
  if (value.BOOL !== undefined) return value.BOOL;
  if (value.NULL !== undefined) return null;
  if (value.M !== undefined) return fromAttributeMap(value.M);
  if (value.L !== undefined) return value.L.map(fromAttributeValue);
  if (value.SS !== undefined) return new Set(value.SS);
  if (value.NS !== undefined) return new Set(value.NS.map(Number));
  if (value.B !== undefined) return value.B;
  if (value.BS !== undefined) return new Set(value.BS);
  return undefined;
}

/** Converts a low-level item (e.g. the `Item` of a `ConditionalCheckFailedException`) to a plain object. */
export function fromAttributeMap(item: Readonly<Record<string, AttributeValue>>): Record<string, unknown> {
  const result: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) result[name] = fromAttributeValue(value);
  return result;
}
