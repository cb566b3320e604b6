/**
 * Client-side checks of the DynamoDB TransactWriteItems limits, so a bad transaction fails with a clear message
 * before any request is sent.
 */
import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { TransactionLimitError } from '../errors';
import { describeAction, operationOf, operationsOf, tableOf } from './actions';

/** DynamoDB's maximum number of actions in one TransactWriteItems call. */
export const MAX_TRANSACTION_ACTIONS = 100;

/** Key attribute names of a table. */
export interface KeySchema {
  readonly partitionKey: string;
  readonly sortKey?: string;
}

/** Options of {@link validateTransactionLimits}. */
export interface TransactionLimitOptions {
  /** Key schemas the caller knows (the outbox table, the inbox table), by table name. Others are learnt from `Key`s. */
  readonly knownKeySchemas?: ReadonlyMap<string, KeySchema>;
  /** Describes action `index` in error messages. @default the operation and table name */
  readonly describe?: (index: number) => string;
  /** Explains what the actions are, for the count message, e.g. `99 staged writes + 1 inbox record`. */
  readonly breakdown?: string;
}

function keyNames(schema: KeySchema): string[] {
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

function identity(table: string, names: readonly string[], attributes: Readonly<Record<string, unknown>>): string | undefined {
  if (names.some((name) => attributes[name] === undefined)) return undefined;
  return [table, ...names.map((name) => `${name}=${canonicalValue(attributes[name])}`)].join('\u0000');
}

function keyAttributes(action: TransactWriteItem): Readonly<Record<string, unknown>> | undefined {
  const operation = operationOf(action);
  if (operation === undefined || operation === 'Put') return undefined;
  return action[operation]?.Key;
}

/** Learns the key schema of every table touched by a `Key`-carrying action, without overriding known schemas. */
function keySchemasOf(actions: readonly TransactWriteItem[], known: ReadonlyMap<string, KeySchema>): Map<string, string[]> {
  const schemas = new Map<string, string[]>();
  for (const [table, schema] of known) schemas.set(table, keyNames(schema));
  for (const action of actions) {
    const table = tableOf(action);
    const key = keyAttributes(action);
    if (table !== undefined && key !== undefined && !schemas.has(table)) schemas.set(table, Object.keys(key).sort());
  }
  return schemas;
}

/**
 * Throws {@link TransactionLimitError} when `actions` break a TransactWriteItems limit: no action or more than
 * {@link MAX_TRANSACTION_ACTIONS}, an action without exactly one operation, or two actions on the same item.
 *
 * The same-item check compares keys. A `Put` names no key, so it is compared only on tables whose key schema is
 * known or can be learnt from another action's `Key`; DynamoDB itself rejects the remaining cases.
 */
export function validateTransactionLimits(actions: readonly TransactWriteItem[], options: TransactionLimitOptions = {}): void {
  const describe = options.describe ?? ((index: number) => describeAction(actions[index] as TransactWriteItem));
  const breakdown = options.breakdown === undefined ? '' : ` (${options.breakdown})`;
  if (actions.length === 0) {
    throw new TransactionLimitError('a transaction needs at least 1 action, but 0 were given');
  }
  if (actions.length > MAX_TRANSACTION_ACTIONS) {
    throw new TransactionLimitError(
      `a transaction may hold at most ${MAX_TRANSACTION_ACTIONS} actions (DynamoDB TransactWriteItems limit), but ${actions.length} were given${breakdown}`,
    );
  }
  actions.forEach((action, index) => {
    const operations = operationsOf(action);
    if (operations.length !== 1) {
      throw new TransactionLimitError(
        `action ${index} must hold exactly one of Put, Update, Delete or ConditionCheck, but holds ${operations.length === 0 ? 'none' : operations.join(' and ')}`,
      );
    }
    if (tableOf(action) === undefined) {
      throw new TransactionLimitError(`action ${index} (${describe(index)}) must name a TableName`);
    }
  });
  const schemas = keySchemasOf(actions, options.knownKeySchemas ?? new Map());
  const seen = new Map<string, number>();
  actions.forEach((action, index) => {
    const table = tableOf(action) as string;
    const names = schemas.get(table);
    if (names === undefined) return;
    const attributes = operationOf(action) === 'Put' ? action.Put?.Item : keyAttributes(action);
    const id = attributes === undefined ? undefined : identity(table, names, attributes);
    if (id === undefined) return;
    const first = seen.get(id);
    if (first !== undefined) {
      const key = Object.fromEntries(names.map((name) => [name, attributes?.[name]]));
      throw new TransactionLimitError(
        `actions ${first} (${describe(first)}) and ${index} (${describe(index)}) both target the item with key ${JSON.stringify(key)} in table '${table}'; DynamoDB allows one action per item in a transaction`,
      );
    }
    seen.set(id, index);
  });
}
