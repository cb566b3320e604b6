/**
 * Transaction conflicts as DynamoDB answers them, for proxies in front of DynamoDB Local, which serializes transactions
 * and so never reports one. The Developer Guide, "Transaction conflict handling in DynamoDB"
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling),
 * lists when a request conflicts, and nothing else does:
 *
 * 1. a PutItem, UpdateItem or DeleteItem for an item an ongoing TransactWriteItems includes: the write fails with
 *    `TransactionConflictException`;
 * 2. a TransactWriteItems with an item of another ongoing TransactWriteItems, and
 * 3. a TransactGetItems with an item of an ongoing TransactWriteItems, BatchWriteItem, PutItem, UpdateItem or
 *    DeleteItem: the transaction fails with `TransactionCanceledException`, whose `CancellationReasons` (one per action,
 *    in request order) say `TransactionConflict` for each such item and `None` for the others.
 *
 * A request is ongoing from the moment a proxy forwards it until its reply has come back (a transaction waiting in
 * DynamoDB Local's queue is ongoing, as it is on AWS). One {@link TransactionConflicts} shared by several proxies
 * arbitrates between all their requests.
 */
import { ITEM_OPERATIONS, itemIdentity, itemReferences, type ItemOperation } from './request-items';

/** The names of a table's key attributes, or undefined for a table the caller does not know. */
export type KeySchemaResolver = (tableName: string) => Promise<readonly string[] | undefined>;

/**
 * The operations DynamoDB refuses with a transaction conflict: PutItem, UpdateItem and DeleteItem when they meet an
 * ongoing TransactWriteItems, TransactWriteItems when it meets another, TransactGetItems when it meets an ongoing write.
 */
export type ConflictingOperation = 'PutItem' | 'UpdateItem' | 'DeleteItem' | 'TransactWriteItems' | 'TransactGetItems';

/** The requests an arbiter of transaction conflicts refused so far (docs/SIMULATOR.md, "Transaction conflicts"). */
export interface TransactionConflictFigures {
  /** Requests refused with a transaction conflict. */
  readonly refused: number;
  /**
   * The same by operation, which names the rule: PutItem, UpdateItem and DeleteItem met an ongoing transaction
   * (`TransactionConflictException`); TransactWriteItems met another ongoing transaction and TransactGetItems an ongoing
   * write (`TransactionCanceledException`).
   */
  readonly byOperation: Partial<Record<ConflictingOperation, number>>;
}

/** The reply DynamoDB gives a refused request: a 400 that the SDK does not retry. */
export interface ConflictReply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/** Whether a request may go on to DynamoDB Local, and what to answer when it may not. */
export type Admission =
  /** Forward it; call `release()` once its reply has come back (or forwarding failed). */
  | { readonly admitted: true; release(): void }
  | { readonly admitted: false; readonly reply: ConflictReply };

/** How a request holds its items while it is ongoing. */
type Hold = 'transaction' | 'write';

/** How each operation takes part: the holds on its items that refuse it, and how it holds them itself. */
const PARTICIPATION: Readonly<Record<ItemOperation, { readonly refusedBy: readonly Hold[]; readonly holds?: Hold }>> = {
  PutItem: { refusedBy: ['transaction'], holds: 'write' },
  UpdateItem: { refusedBy: ['transaction'], holds: 'write' },
  DeleteItem: { refusedBy: ['transaction'], holds: 'write' },
  TransactWriteItems: { refusedBy: ['transaction'], holds: 'transaction' },
  TransactGetItems: { refusedBy: ['transaction', 'write'] },
  BatchWriteItem: { refusedBy: [], holds: 'write' },
};

const SINGLE_WRITES: ReadonlySet<string> = new Set(['PutItem', 'UpdateItem', 'DeleteItem']);

/** The message DynamoDB gives a conflicting item. */
const CONFLICT_MESSAGE = 'Transaction is ongoing for the item';

/**
 * The message of a conflict the simulator injected (fault steering: no other writer held the item), DynamoDB's with
 * that said: the runtime logs it as the record's failure, so a dead letter whose last failure it was names the
 * simulator, not the app. Apps tell a conflict by its error name, which is DynamoDB's.
 */
export const INJECTED_CONFLICT_MESSAGE = `${CONFLICT_MESSAGE} (injected by the simulator's fault steering: no other writer held the item)`;

const ADMITTED_WITHOUT_HOLD: Admission = { admitted: true, release: () => undefined };

/**
 * Whether a request of `operation` holds its items while it is ongoing (a write or a transaction that writes), so that
 * how long it stays ongoing decides which other requests meet it.
 */
export function holdsItems(operation: string): boolean {
  return isItemOperation(operation) && PARTICIPATION[operation].holds !== undefined;
}

function isItemOperation(operation: string): operation is ItemOperation {
  return (ITEM_OPERATIONS as readonly string[]).includes(operation);
}

/**
 * DynamoDB's refusal of a request of `operation` (`DynamoDB_20120810.<operation>`'s last part) whose actions conflict
 * where `conflicting` is true: `TransactionConflictException` for a single write, else `TransactionCanceledException`
 * with one reason per action. `message` is each conflicting item's (@default DynamoDB's; {@link INJECTED_CONFLICT_MESSAGE}
 * for a conflict the simulator injected).
 */
export function conflictReply(operation: string, conflicting: readonly boolean[], message: string = CONFLICT_MESSAGE): ConflictReply {
  let payload: Record<string, unknown>;
  if (SINGLE_WRITES.has(operation)) {
    payload = { __type: 'com.amazonaws.dynamodb.v20120810#TransactionConflictException', message };
  } else {
    const reasons = conflicting.map((conflict) => (conflict ? { Code: 'TransactionConflict', Message: message } : { Code: 'None' }));
    payload = {
      __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException',
      Message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${reasons.map((reason) => reason.Code).join(', ')}]`,
      CancellationReasons: reasons,
    };
  }
  const body = Buffer.from(JSON.stringify(payload));
  return { status: 400, headers: { 'content-type': 'application/x-amz-json-1.0', 'content-length': String(body.length), 'x-amzn-requestid': 'transaction-conflict' }, body };
}

/** What a DynamoDB proxy asks the arbiter: may this request go on? */
export interface ConflictArbiter {
  admit(operation: string, body: Buffer): Promise<Admission>;
}

/** The arbiter: tracks the items ongoing requests hold and refuses a request that conflicts with them. */
export class TransactionConflicts implements ConflictArbiter {
  /** Item identity → how many ongoing requests hold it, by kind of hold. */
  private readonly held = new Map<string, Record<Hold, number>>();
  /** Operation → requests of it refused. */
  private readonly refusals = new Map<string, number>();
  /** Caller (a function's key) → its requests refused. */
  private readonly refusalsByCaller = new Map<string, number>();

  /** `keySchemaOf` names each table's key attributes (a Put's key is read from its item with them). */
  public constructor(private readonly keySchemaOf: KeySchemaResolver) {}

  /**
   * Decides a request of `operation` (e.g. `TransactWriteItems`) with JSON `body` at the moment it would be forwarded.
   * Admitted requests that write hold their items until released; operations that name no item, and bodies that are
   * malformed or name a table the resolver does not know, are admitted without a hold (DynamoDB Local answers them).
   */
  public async admit(operation: string, body: Buffer): Promise<Admission> {
    if (!isItemOperation(operation)) return ADMITTED_WITHOUT_HOLD;
    const items = await this.identities(operation, body);
    if (items === undefined) return ADMITTED_WITHOUT_HOLD;
    // from here to the end, no await: the check and the hold are one step, so two requests cannot both pass
    const { refusedBy, holds } = PARTICIPATION[operation];
    const conflicting = items.map((item) => refusedBy.some((hold) => (this.held.get(item)?.[hold] ?? 0) > 0));
    if (conflicting.includes(true)) {
      this.refusals.set(operation, (this.refusals.get(operation) ?? 0) + 1);
      return { admitted: false, reply: conflictReply(operation, conflicting) };
    }
    return holds === undefined ? ADMITTED_WITHOUT_HOLD : this.hold(items, holds);
  }

  /** The arbiter as `caller` (a function's key) sees it: the same decisions, its refusals counted as its own. */
  public forCaller(caller: string): ConflictArbiter {
    return {
      admit: async (operation, body) => {
        const admission = await this.admit(operation, body);
        if (!admission.admitted) this.refusalsByCaller.set(caller, (this.refusalsByCaller.get(caller) ?? 0) + 1);
        return admission;
      },
    };
  }

  /** The requests of `caller` (see {@link forCaller}) refused so far. */
  public refusedFor(caller: string): number {
    return this.refusalsByCaller.get(caller) ?? 0;
  }

  /** What was refused so far. */
  public figures(): TransactionConflictFigures {
    let refused = 0;
    for (const count of this.refusals.values()) refused += count;
    return { refused, byOperation: Object.fromEntries(this.refusals) };
  }

  /** The identities of the request's items, in request order; undefined when any cannot be told. */
  private async identities(operation: ItemOperation, body: Buffer): Promise<string[] | undefined> {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return undefined;
    }
    const references = itemReferences(operation, parsed);
    if (references === undefined) return undefined;
    const tableNames = [...new Set(references.map((item) => item.tableName))];
    const schemas = new Map(await Promise.all(tableNames.map(async (tableName) => [tableName, await this.keySchemaOf(tableName)] as const)));
    const identities: string[] = [];
    for (const item of references) {
      const keyAttributeNames = schemas.get(item.tableName);
      const identity = keyAttributeNames === undefined ? undefined : itemIdentity(item, keyAttributeNames);
      if (identity === undefined) return undefined;
      identities.push(identity);
    }
    return identities;
  }

  private hold(items: readonly string[], hold: Hold): Admission {
    for (const item of items) {
      const holders = this.held.get(item) ?? { transaction: 0, write: 0 };
      holders[hold] += 1;
      this.held.set(item, holders);
    }
    let released = false;
    return {
      admitted: true,
      release: () => {
        if (released) return;
        released = true;
        for (const item of items) {
          const holders = this.held.get(item)!;
          holders[hold] -= 1;
          if (holders.transaction === 0 && holders.write === 0) this.held.delete(item);
        }
      },
    };
  }
}
