/**
 * Which item an action of a TransactWriteItems call targets, as a string equal for equal keys: what the
 * one-action-per-item check compares (limits.ts) and what keeps two records of one batch from committing on one item
 * at the same moment (consumer/item-locks.ts).
 */
import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { operationOf, tableOf } from './actions';

/** Key attribute names of a table. */
export interface KeySchema {
  readonly partitionKey: string;
  readonly sortKey?: string;
}

/** The key attribute names of `schema`, partition key first. */
export function keyNames(schema: KeySchema): string[] {
  return schema.sortKey === undefined ? [schema.partitionKey] : [schema.partitionKey, schema.sortKey];
}

/** A key attribute value in a form where equal DynamoDB values are equal strings. */
function canonicalValue(value: unknown): string {
  if (typeof value === 'string') return `S:${value}`;
  if (typeof value === 'number' || typeof value === 'bigint') return `N:${String(value)}`;
  if (value instanceof Uint8Array) return `B:${Buffer.from(value).toString('base64')}`;
  // lib-dynamodb's NumberValue
  if (typeof value === 'object' && value !== null && 'value' in value) return `N:${String((value as { value: unknown }).value)}`;
  return `?:${JSON.stringify(value)}`;
}

/** The identity of the item of `table` whose key attributes `names` take their values from `attributes`; undefined when one is missing. */
export function identity(table: string, names: readonly string[], attributes: Readonly<Record<string, unknown>>): string | undefined {
  if (names.some((name) => attributes[name] === undefined)) return undefined;
  return [table, ...names.map((name) => `${name}=${canonicalValue(attributes[name])}`)].join('\u0000');
}

/** The `Key` of an Update, Delete or ConditionCheck; undefined for a Put (which names its item by its attributes). */
export function keyAttributes(action: TransactWriteItem): Readonly<Record<string, unknown>> | undefined {
  const operation = operationOf(action);
  if (operation === undefined || operation === 'Put') return undefined;
  return action[operation]?.Key;
}

/**
 * Learns the key schema of every table touched by a `Key`-carrying action (its attribute names, sorted), without
 * overriding known schemas; `into` is filled and returned (pass a long-lived map to keep what was learnt).
 */
export function keySchemasOf(
  actions: readonly TransactWriteItem[],
  known: ReadonlyMap<string, KeySchema>,
  into: Map<string, string[]> = new Map(),
): Map<string, string[]> {
  for (const [table, schema] of known) if (!into.has(table)) into.set(table, keyNames(schema));
  for (const action of actions) {
    const table = tableOf(action);
    const key = keyAttributes(action);
    if (table !== undefined && key !== undefined && !into.has(table)) into.set(table, Object.keys(key).sort());
  }
  return into;
}

/**
 * The identity of the item `action` targets, when it can be told: always for an action with a `Key`, for a Put only
 * when its table's key names are in `schemas`.
 */
export function actionItemIdentity(action: TransactWriteItem, schemas: ReadonlyMap<string, readonly string[]>): string | undefined {
  const table = tableOf(action);
  if (table === undefined) return undefined;
  const key = keyAttributes(action);
  if (key !== undefined) return identity(table, Object.keys(key).sort(), key);
  const names = schemas.get(table);
  const item = operationOf(action) === 'Put' ? action.Put?.Item : undefined;
  return names === undefined || item === undefined ? undefined : identity(table, names, item);
}
