/**
 * Client-side checks of the DynamoDB TransactWriteItems limits, so a bad transaction fails with a clear message
 * before any request is sent.
 */
import type { TransactWriteItem } from '@aws-sdk/lib-dynamodb';
import { TransactionLimitError } from '../errors';
import { describeAction, operationOf, operationsOf, tableOf } from './actions';
import { identity, keyAttributes, keySchemasOf, type KeySchema } from './item-identity';
import { attributeValueSize, itemSize, MAX_ITEM_BYTES, utf8Bytes } from './item-size';

/** DynamoDB's maximum number of actions in one TransactWriteItems call. */
export const MAX_TRANSACTION_ACTIONS = 100;

/** DynamoDB's limit on the aggregate size of the items in one TransactWriteItems call: 4 MB. */
export const MAX_TRANSACTION_BYTES = 4 * 1024 * 1024;

/** Options of {@link validateTransactionLimits}. */
export interface TransactionLimitOptions {
  /** Key schemas the caller knows (the outbox table, the inbox table), by table name. Others are learnt from `Key`s. */
  readonly knownKeySchemas?: ReadonlyMap<string, KeySchema>;
  /** Describes action `index` in error messages. @default the operation and table name */
  readonly describe?: (index: number) => string;
  /** Explains what the actions are, for the count message, e.g. `99 staged writes + 1 inbox record`. */
  readonly breakdown?: string;
}

const bytes = (value: number): string => value.toLocaleString('en-US');

/** A `:value` or `#name` placeholder in an expression. */
const PLACEHOLDER = /[:#][A-Za-z0-9_]+/g;

/** What one expression counts: its UTF-8 text plus every value and name it references, once per reference. */
function expressionBytes(expression: string | undefined, names: Readonly<Record<string, string>> | undefined, values: Readonly<Record<string, unknown>> | undefined): number {
  if (expression === undefined) return 0;
  let total = utf8Bytes(expression);
  for (const placeholder of expression.match(PLACEHOLDER) ?? []) {
    if (placeholder.startsWith(':')) {
      if (values !== undefined && Object.hasOwn(values, placeholder)) total += attributeValueSize(values[placeholder]);
    } else if (names !== undefined && Object.hasOwn(names, placeholder)) {
      total += utf8Bytes(names[placeholder] as string);
    }
  }
  return total;
}

/**
 * How many bytes an action counts towards the 4 MB limit of a transaction, the way DynamoDB Local counts its
 * "transaction payload" (checked to the byte in test/lambda/transaction-payload.int.test.ts): a Put its item; an
 * Update, Delete or ConditionCheck its key; and every action its expressions (`UpdateExpression`,
 * `ConditionExpression`): their UTF-8 text plus each `:value` and `#name` they reference, once per reference. A value
 * only compared in a condition therefore counts as much as one that is written.
 */
export function actionPayloadBytes(action: TransactWriteItem): number {
  return payloadBytes(action, undefined);
}

/** {@link actionPayloadBytes}, given the size of a Put's item when it is known already (`putItemSize`). */
function payloadBytes(action: TransactWriteItem, putItemSize: number | undefined): number {
  const operation = operationOf(action);
  if (operation === undefined) return 0;
  const params = action[operation] as {
    readonly Item?: Record<string, unknown>;
    readonly Key?: Record<string, unknown>;
    readonly UpdateExpression?: string;
    readonly ConditionExpression?: string;
    readonly ExpressionAttributeNames?: Record<string, string>;
    readonly ExpressionAttributeValues?: Record<string, unknown>;
  };
  const names = params.ExpressionAttributeNames;
  const values = params.ExpressionAttributeValues;
  const stored = operation === 'Put' ? (putItemSize ?? itemSize(params.Item ?? {})) : itemSize(params.Key ?? {});
  return stored + expressionBytes(params.UpdateExpression, names, values) + expressionBytes(params.ConditionExpression, names, values);
}

/**
 * Throws {@link TransactionLimitError} when an item to be written is larger than DynamoDB's item limit
 * ({@link MAX_ITEM_BYTES}, 400 KB), naming the limit, the size and `description` (e.g. `action 2 (Put on table 'T')`);
 * returns the item's size.
 */
export function assertItemFits(item: Readonly<Record<string, unknown>>, description: string): number {
  const size = itemSize(item);
  if (size > MAX_ITEM_BYTES) {
    throw new TransactionLimitError(
      `${description} writes an item of ${bytes(size)} bytes, but the DynamoDB item size limit is ${bytes(MAX_ITEM_BYTES)} bytes (400 KB)`,
    );
  }
  return size;
}

function validateSizes(actions: readonly TransactWriteItem[], describe: (index: number) => string): void {
  let total = 0;
  let largest = { index: 0, size: -1 };
  actions.forEach((action, index) => {
    const putItemSize = operationOf(action) === 'Put' ? assertItemFits(action.Put?.Item ?? {}, `action ${index} (${describe(index)})`) : undefined;
    const size = payloadBytes(action, putItemSize);
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
 * known or can be learnt from another action's `Key`; DynamoDB itself rejects the remaining cases (see
 * {@link limitErrorOf}). Item sizes follow DynamoDB's documented rules (see item-size.ts); the 4 MB total counts what
 * DynamoDB Local counts (see {@link actionPayloadBytes}). An Update's resulting item is not known before it is
 * applied, so an Update that grows an item past 400 KB is left to DynamoDB as well.
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

/** DynamoDB's messages for a transaction that breaks a limit only it can check (a ValidationException before any action). */
const REQUEST_LIMIT_MESSAGES: readonly RegExp[] = [/multiple operations on one item/i, /payload size cannot exceed/i, /size.*exceed.*4\s?MB/i];
/** DynamoDB's message for an action whose item would outgrow 400 KB (cancellation reason `ValidationError`). */
const ITEM_SIZE_MESSAGE = /item size/i;

/**
 * The {@link TransactionLimitError} for a TransactWriteItems call DynamoDB refused for a limit the checks before the
 * call could not see: two Puts of one item in a table whose key schema is unknown, an Update that grows an item past
 * 400 KB, or a payload DynamoDB counts differently. Such a transaction fails the same way on every retry. Returns
 * `undefined` for any other error.
 */
export function limitErrorOf(error: unknown, describe: (index: number) => string): TransactionLimitError | undefined {
  if (!(error instanceof Error)) return undefined;
  if (error.name === 'ValidationException' && REQUEST_LIMIT_MESSAGES.some((pattern) => pattern.test(error.message))) {
    return new TransactionLimitError(`DynamoDB refused the transaction for a TransactWriteItems limit: ${error.message}`, { cause: error });
  }
  if (error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: ReadonlyArray<{ Code?: string; Message?: string }> }).CancellationReasons ?? [];
  const index = reasons.findIndex((reason) => reason.Code === 'ValidationError' && ITEM_SIZE_MESSAGE.test(reason.Message ?? ''));
  if (index < 0) return undefined;
  return new TransactionLimitError(
    `action ${index} (${describe(index)}) would make an item larger than the DynamoDB item size limit of ${bytes(MAX_ITEM_BYTES)} bytes (400 KB): ${reasons[index]?.Message}`,
    { cause: error },
  );
}
