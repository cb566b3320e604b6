/**
 * Which items a DynamoDB request names, read from its JSON body: one reference per item, in request order (the order
 * of `TransactItems`, so the index of a reference is the index of its `CancellationReasons` entry). An item is named by
 * its table and key: `Key` for Update, Delete, ConditionCheck and Get, the key attributes of `Item` for a Put (which
 * needs the table's key schema: see {@link itemIdentity}).
 */

/** The operations whose items {@link itemReferences} reads. */
export const ITEM_OPERATIONS = ['PutItem', 'UpdateItem', 'DeleteItem', 'TransactWriteItems', 'TransactGetItems', 'BatchWriteItem'] as const;

/** The DynamoDB operations that write: what the IAM evaluation, the run's observation and its checks count as a write. */
export const WRITE_OPERATIONS: ReadonlySet<string> = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

/** An operation whose items {@link itemReferences} reads. */
export type ItemOperation = (typeof ITEM_OPERATIONS)[number];

/** One item a request names: the table, and the attributes its key is read from. */
export interface ItemReference {
  readonly tableName: string;
  /** The action's `Key`, or its `Item` (a Put), in DynamoDB JSON (`{ pk: { S: 'a' } }`). */
  readonly attributes: Readonly<Record<string, unknown>>;
}

type JsonObject = Readonly<Record<string, unknown>>;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `{ TableName, <attributesField> }` → a reference; undefined when either is missing. */
function reference(action: unknown, attributesField: 'Key' | 'Item'): ItemReference | undefined {
  if (!isObject(action)) return undefined;
  const { TableName: tableName, [attributesField]: attributes } = action;
  return typeof tableName === 'string' && isObject(attributes) ? { tableName, attributes } : undefined;
}

/** The one member of a `TransactItems` entry that names its item (`Put`, `Update`, ...), as a reference. */
function transactItem(entry: unknown, actions: readonly string[]): ItemReference | undefined {
  if (!isObject(entry)) return undefined;
  const present = actions.filter((action) => entry[action] !== undefined);
  if (present.length !== 1) return undefined;
  const action = present[0]!;
  return reference(entry[action], action === 'Put' ? 'Item' : 'Key');
}

/** Every reference, or undefined when one of them is malformed. */
function allOrNothing(references: readonly (ItemReference | undefined)[]): ItemReference[] | undefined {
  return references.every((item): item is ItemReference => item !== undefined) ? [...references] : undefined;
}

/** The items of `BatchWriteItem`'s `RequestItems`: each `PutRequest`'s `Item`, each `DeleteRequest`'s `Key`. */
function batchWriteItems(requestItems: unknown): ItemReference[] | undefined {
  if (!isObject(requestItems)) return undefined;
  const references: ItemReference[] = [];
  for (const [tableName, requests] of Object.entries(requestItems)) {
    if (!Array.isArray(requests)) return undefined;
    for (const request of requests as unknown[]) {
      if (!isObject(request)) return undefined;
      const { PutRequest: put, DeleteRequest: remove } = request;
      const attributes = isObject(put) ? put.Item : isObject(remove) ? remove.Key : undefined;
      if (!isObject(attributes)) return undefined;
      references.push({ tableName, attributes });
    }
  }
  return references;
}

/**
 * The items of a request of `operation` with the parsed JSON `body`, in request order; undefined when the body does not
 * have the operation's shape (DynamoDB then answers it with its own validation error).
 */
export function itemReferences(operation: ItemOperation, body: unknown): ItemReference[] | undefined {
  if (!isObject(body)) return undefined;
  switch (operation) {
    case 'PutItem':
      return allOrNothing([reference(body, 'Item')]);
    case 'UpdateItem':
    case 'DeleteItem':
      return allOrNothing([reference(body, 'Key')]);
    case 'TransactWriteItems':
    case 'TransactGetItems': {
      const actions = operation === 'TransactWriteItems' ? ['Put', 'Update', 'Delete', 'ConditionCheck'] : ['Get'];
      const items = body.TransactItems;
      return Array.isArray(items) && items.length > 0 ? allOrNothing(items.map((entry: unknown) => transactItem(entry, actions))) : undefined;
    }
    case 'BatchWriteItem':
      return batchWriteItems(body.RequestItems);
  }
}

/**
 * A DynamoDB number in one spelling per value (`1`, `1.0`, `+1` and `10e-1` name the same key), or undefined when it
 * is not a number. Key attributes are compared as DynamoDB compares them: by value.
 */
export function canonicalNumber(text: string): string | undefined {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (match === null) return undefined;
  const [, sign, whole = '', fraction = '', exponent = '0'] = match;
  if (whole === '' && fraction === '') return undefined;
  const digits = `${whole}${fraction}`.replace(/^0+/, '');
  if (digits === '') return '0';
  const significant = digits.replace(/0+$/, '');
  const power = Number(exponent) - fraction.length + (digits.length - significant.length);
  return `${sign === '-' ? '-' : ''}${significant}e${power}`;
}

/** A key attribute's value in one spelling per value; undefined unless it is an S, N or B value. */
function canonicalKeyValue(value: unknown): string | undefined {
  if (!isObject(value)) return undefined;
  const types = Object.keys(value);
  if (types.length !== 1) return undefined;
  const type = types[0]!;
  const scalar = value[type];
  if (typeof scalar !== 'string' || !['S', 'N', 'B'].includes(type)) return undefined;
  const spelled = type === 'N' ? canonicalNumber(scalar) : scalar;
  return spelled === undefined ? undefined : `${type}:${spelled}`;
}

/**
 * The identity of a referenced item: its table and the values of its key attributes (`keyAttributeNames`, from the
 * table's key schema), by attribute name, so two references to one item have the same identity whatever else they
 * carry. Undefined when a key attribute is missing or not an S, N or B value.
 */
export function itemIdentity(item: ItemReference, keyAttributeNames: readonly string[]): string | undefined {
  const key: [string, string][] = [];
  for (const name of [...keyAttributeNames].sort()) {
    const value = canonicalKeyValue(item.attributes[name]);
    if (value === undefined) return undefined;
    key.push([name, value]);
  }
  return JSON.stringify([item.tableName, key]);
}
