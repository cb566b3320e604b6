/**
 * Reading raw DynamoDB attribute values and measuring item sizes.
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

function numberSizeBytes(value: number): number {
  // DynamoDB stores up to 38 significant digits in about (digits / 2) + 1 bytes, at most 21
  const digits = String(Math.abs(value)).replace(/e.*$/i, '').replace('.', '').replace(/^0+/, '').length;
  return Math.min(21, Math.ceil(Math.max(digits, 1) / 2) + 1);
}

/**
 * The size DynamoDB counts for a plain value, in bytes (the rules of "Item sizes and formats": strings in UTF-8,
 * 3 bytes per list or map plus 1 per element, map keys as strings). Used to keep a record far below the 400 KB limit.
 */
export function attributeSizeBytes(value: unknown): number {
  if (value === undefined) return 0;
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value, 'utf8');
  if (typeof value === 'number' || typeof value === 'bigint') return numberSizeBytes(Number(value));
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) {
    let total = 0;
    for (const element of value) total += attributeSizeBytes(element);
    return total;
  }
  if (Array.isArray(value)) return value.reduce<number>((total, element) => total + 1 + attributeSizeBytes(element), 3);
  if (typeof value === 'object') {
    let total = 3;
    for (const [key, element] of Object.entries(value as Record<string, unknown>)) {
      if (element === undefined) continue;
      total += 1 + Buffer.byteLength(key, 'utf8') + attributeSizeBytes(element);
    }
    return total;
  }
  return Buffer.byteLength(String(value), 'utf8');
}
