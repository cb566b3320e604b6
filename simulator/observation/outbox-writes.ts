/**
 * Which outbox events a DynamoDB request DynamoDB applied wrote: the event ids of the outbox items it put (the runtime's
 * wire format: an item with the event id attribute, `OUTBOX_ITEM.EVENT_ID_ATTRIBUTE`, which `Outbox` and
 * `OrderedOutbox` write on every event's item). The simulator hears every request of the functions it runs, so it knows
 * which function wrote each event: the dual-write check charges a producer with its own events only, not with those of
 * another producer or a subscriber that publishes events on the same outbox.
 */
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';

type AttributeMap = Readonly<Record<string, { readonly S?: string } | undefined>>;

interface WriteRequest {
  readonly Item?: AttributeMap;
  readonly TransactItems?: readonly { readonly Put?: { readonly Item?: AttributeMap } }[];
  readonly RequestItems?: Readonly<Record<string, readonly { readonly PutRequest?: { readonly Item?: AttributeMap } }[]>>;
}

/** The items a `PutItem`, `TransactWriteItems` or `BatchWriteItem` request puts; none for another operation or a body that is not one. */
function putItems(operation: string, body: Buffer): (AttributeMap | undefined)[] {
  if (operation !== 'PutItem' && operation !== 'TransactWriteItems' && operation !== 'BatchWriteItem') return [];
  let request: WriteRequest;
  try {
    request = JSON.parse(body.toString('utf8')) as WriteRequest;
  } catch {
    return [];
  }
  if (typeof request !== 'object' || request === null) return [];
  if (operation === 'PutItem') return [request.Item];
  if (operation === 'TransactWriteItems') return Array.isArray(request.TransactItems) ? request.TransactItems.map((action) => action?.Put?.Item) : [];
  const tables = typeof request.RequestItems === 'object' && request.RequestItems !== null ? Object.values(request.RequestItems) : [];
  return tables.flatMap((writes) => (Array.isArray(writes) ? writes.map((write) => write?.PutRequest?.Item) : []));
}

/** The event ids of the outbox items an applied request of `operation` with `body` put, in request order. */
export function writtenOutboxEvents(operation: string, body: Buffer): string[] {
  return putItems(operation, body).flatMap((item) => {
    const eventId = item?.[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]?.S;
    return typeof eventId === 'string' ? [eventId] : [];
  });
}

/** The tables a `PutItem`, `UpdateItem`, `DeleteItem`, `TransactWriteItems` or `BatchWriteItem` request writes, in request order, once each. */
export function writtenTables(operation: string, body: Buffer): string[] {
  let request: { TableName?: unknown; TransactItems?: unknown; RequestItems?: unknown };
  try {
    request = JSON.parse(body.toString('utf8')) as typeof request;
  } catch {
    return [];
  }
  if (typeof request !== 'object' || request === null) return [];
  const names: unknown[] = [];
  if (operation === 'TransactWriteItems' && Array.isArray(request.TransactItems)) {
    for (const action of request.TransactItems as Record<string, { TableName?: unknown } | undefined>[]) {
      for (const part of Object.values(action ?? {})) names.push(part?.TableName);
    }
  } else if (operation === 'BatchWriteItem' && typeof request.RequestItems === 'object' && request.RequestItems !== null) {
    names.push(...Object.keys(request.RequestItems));
  } else {
    names.push(request.TableName);
  }
  return [...new Set(names.filter((name): name is string => typeof name === 'string'))];
}

type KeyValue = Readonly<Record<string, unknown>>;

/** One item as `businessItems` names it: its table and its key attributes, in name order. */
function itemName(table: string, key: KeyValue): string {
  return `${table} ${JSON.stringify(Object.fromEntries(Object.keys(key).sort().map((name) => [name, key[name]])))}`;
}

/**
 * The items a `TransactWriteItems` request acts on outside the outbox (the business items: not an item with the event
 * id attribute), each named by its table and key (a Put's key read from its item with `keyNames` of its table): `written`,
 * those its Put, Update and Delete actions write; `refused`, those whose condition refused it, from the cancellation
 * reasons of DynamoDB's refusal (`refusal`, the reply's body; none when it was applied or refused for another reason).
 * None for another operation, or a body that is not one.
 */
export function businessItems(operation: string, body: Buffer, keyNames: (table: string) => readonly string[], refusal?: Buffer): { written: string[]; refused: string[] } {
  const none = { written: [], refused: [] };
  if (operation !== 'TransactWriteItems') return none;
  let actions: unknown;
  try {
    actions = (JSON.parse(body.toString('utf8')) as { TransactItems?: unknown }).TransactItems;
  } catch {
    return none;
  }
  if (!Array.isArray(actions)) return none;
  let reasons: unknown[] = [];
  if (refusal !== undefined) {
    try {
      const parsed = (JSON.parse(refusal.toString('utf8')) as { CancellationReasons?: unknown }).CancellationReasons;
      if (Array.isArray(parsed)) reasons = parsed;
    } catch {
      // not a cancellation: no item refused it
    }
  }
  const written: string[] = [];
  const refused: string[] = [];
  actions.forEach((action: Record<string, { TableName?: unknown; Item?: Record<string, unknown>; Key?: KeyValue } | undefined> | null, index) => {
    const [kind, part] = Object.entries(action ?? {})[0] ?? [];
    if (kind === undefined || part === undefined || typeof part.TableName !== 'string') return;
    if (part.Item?.[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE] !== undefined) return;
    const names = keyNames(part.TableName);
    const key = kind === 'Put' ? (part.Item !== undefined && names.length > 0 && names.every((name) => part.Item![name] !== undefined) ? Object.fromEntries(names.map((name) => [name, part.Item![name]])) : undefined) : part.Key;
    if (key === undefined || typeof key !== 'object') return;
    const name = itemName(part.TableName, key);
    if (kind === 'Put' || kind === 'Update' || kind === 'Delete') written.push(name);
    if ((reasons[index] as { Code?: unknown } | undefined)?.Code === 'ConditionalCheckFailed') refused.push(name);
  });
  return { written, refused };
}

/** A request of an invocation that put outbox events, as the ledger books it (observation/ledger.ts). */
export interface OutboxRequest {
  readonly operation: string;
  /** The tables it writes. */
  readonly tables: readonly string[];
  /** The outbox events it puts, in request order. */
  readonly eventIds: readonly string[];
  /** Whether DynamoDB applied it (false: refused, e.g. its condition failed because the event was there already). */
  readonly applied: boolean;
  /** The fault the simulator injected on it: `lose-response` or `crash-after` (applied, unseen by the invocation). @default none */
  readonly fault?: string;
  /** The items it writes outside the outbox, each as its table and key (see {@link businessItems}). @default none */
  readonly items?: readonly string[];
  /** Of {@link items}, those whose condition refused it (`ConditionalCheckFailed`). @default none (applied, or refused otherwise) */
  readonly refusedItems?: readonly string[];
}
