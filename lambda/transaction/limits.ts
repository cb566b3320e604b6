/**
 * Client-side checks of the DynamoDB TransactWriteItems limits, so a bad transaction fails with a clear message
 * before any request is sent.
 */
import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { TransactionLimitError } from '../errors';
import { describeAction, operationOf, operationsOf, tableOf } from './actions';
import { itemSize, MAX_ITEM_BYTES } from './item-size';

/** DynamoDB's maximum number of actions in one TransactWriteItems call. */
export const MAX_TRANSACTION_ACTIONS = 100;

/** DynamoDB's limit on the aggregate size of the items in one TransactWriteItems call: 4 MB. */
export const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;

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

const bytes = (value: number): string => value.toLocaleString('en-US');

/**
 * How many bytes of item an action carries, as far as the request shows: a Put its whole item; an Update its key and
 * expression values; a Delete or ConditionCheck its key. For an Update that is a lower bound of the item it leaves
 * (the item may hold more), so the 4 MB check can pass a transaction that DynamoDB still rejects, never the reverse.
 */
export function actionItemBytes(action: TransactWriteItem): number {
  const operation = operationOf(action);
  if (operation === 'Put') return itemSize(action.Put?.Item ?? {});
  if (operation === 'Update') return itemSize(action.Update?.Key ?? {}) + itemSize(action.Update?.ExpressionAttributeValues ?? {});
  if (operation === undefined) return 0;
  return itemSize(action[operation]?.Key ?? {});
}

/**
 * Throws {@link TransactionLimitError} when an item to be written is larger than DynamoDB's item limit
 * ({@link MAX_ITEM_BYTES}, 400 KB), naming the limit, the size and `description` (e.g. `action 2 (Put on table 'T')`).
 */
export function assertItemFits(item: Readonly<Record<string, unknown>>, description: string): void {
  const size = itemSize(item);
  if (size > MAX_ITEM_BYTES) {
    throw new TransactionLimitError(
      `${description} writes an item of ${bytes(size)} bytes, but the DynamoDB item size limit is ${bytes(MAX_ITEM_BYTES)} bytes (400 KB)`,
    );
  }
}

function validateSizes(actions: readonly TransactWriteItem[], describe: (index: number) => string): void {
  let total = 0;
  let largest = { index: 0, size: -1 };
  actions.forEach((action, index) => {
    if (operationOf(action) === 'Put') assertItemFits(action.Put?.Item ?? {}, `action ${index} (${describe(index)})`);
    const size = actionItemBytes(action);
    total += size;
    if (size > largest.size) largest = { index, size };
  });
  if (total > MAX_TRANSACTION_BYTES) {
    throw new TransactionLimitError(
      `the items of a transaction may add up to at most ${bytes(MAX_TRANSACTION_BYTES)} bytes (4 MB, DynamoDB TransactWriteItems limit), ` +
        `but these add up to at least ${bytes(total)} bytes; the largest is action ${largest.index} (${describe(largest.index)}) with ${bytes(largest.size)} bytes`,
    );
  }
}

/**
 * Throws {@link TransactionLimitError} when `actions` break a TransactWriteItems limit: no action or more than
 * {@link MAX_TRANSACTION_ACTIONS}, an action without exactly one operation, two actions on the same item, a Put of an
 * item over the 400 KB item limit, or items that add up to more than {@link MAX_TRANSACTION_BYTES} (4 MB).
 *
 * The same-item check compares keys. A `Put` names no key, so it is compared only on tables whose key schema is
 * known or can be learnt from another action's `Key`; DynamoDB itself rejects the remaining cases. Sizes follow
 * DynamoDB's documented rules (see item-size.ts); an Update counts only what the request shows (see
 * {@link actionItemBytes}).
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
  validateSizes(actions, describe);
}
