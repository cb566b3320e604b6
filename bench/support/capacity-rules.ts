/**
 * The capacity AWS documents for what the bench measures, beyond the plain "1 WCU per started KB" of `item-size.ts`
 * (Amazon DynamoDB Developer Guide: "DynamoDB read and write operations", "Amazon DynamoDB Transactions: How it works"
 * (capacity management), "Global secondary indexes" (provisioned throughput considerations)):
 *
 * - reads: 1 RCU per started 4 KB of the item for a strongly consistent GetItem, half that for an eventually
 *   consistent one; a read of an item that does not exist still consumes it (counted here as one 4 KB unit);
 * - a conditional write whose condition fails still consumes write capacity, by the size of the item: "an existing
 *   item in the table or a new one you're attempting to create or update" (the guide's example: existing 300 KB, new
 *   310 KB, charged 310), so here the larger of the stored item and, for a Put, the item sent. For a failed
 *   UpdateItem the updated item is never built, so the stored item's size is used (at least 1 WCU);
 * - a transactional write costs 2 WCU per started KB of each item, and that capacity is consumed even when the
 *   transaction is cancelled (a condition check failed): a cancelled transaction is charged like a committed one,
 *   each item at its stored size (or, for a Put, the larger of stored and sent);
 * - a write that puts an item into a global secondary index, or removes it, or changes its projection there, costs
 *   index write capacity by the size of the index entry: 1 write to put it in or take it out, 2 when an index key
 *   attribute changes (delete + put), 1 when only projected attributes change, 0 when the item is in the index neither
 *   before nor after.
 */
import { itemSize, writeUnits, type WireItem } from './item-size';

/** A global secondary index as DescribeTable reports it. */
export interface IndexShape {
  readonly name: string;
  readonly keyAttributes: readonly string[];
  readonly projection: string;
  readonly nonKeyAttributes: readonly string[];
}

/** The key attributes and indexes of a table. */
export interface TableShape {
  readonly keyAttributes: readonly string[];
  readonly indexes: readonly IndexShape[];
}

const READ_OPERATIONS: ReadonlySet<string> = new Set(['GetItem', 'Query', 'Scan', 'BatchGetItem', 'TransactGetItems']);

export function isReadOperation(op: string): boolean {
  return READ_OPERATIONS.has(op);
}

/** Read capacity units of reading an item of `bytes` (0 when it does not exist): 1 per started 4 KB, halved if eventually consistent. */
export function readUnits(bytes: number, consistent: boolean): number {
  const units = Math.max(1, Math.ceil(bytes / 4096));
  return consistent ? units : units / 2;
}

/** Write capacity units of a conditional write that failed (or of an item of a cancelled transaction). */
export function failedWriteUnits(stored: WireItem | undefined, sent: WireItem | undefined, transactional: boolean): number {
  return writeUnits(Math.max(itemSize(stored), itemSize(sent)), transactional);
}

/** The entry of `item` in `index`, or undefined when the item is not in it (a sparse index: a key attribute missing). */
function indexEntry(shape: TableShape, index: IndexShape, item: WireItem | undefined): WireItem | undefined {
  if (item === undefined || index.keyAttributes.some((name) => item[name] === undefined)) return undefined;
  if (index.projection === 'ALL') return item;
  const kept = new Set([...shape.keyAttributes, ...index.keyAttributes, ...(index.projection === 'INCLUDE' ? index.nonKeyAttributes : [])]);
  return Object.fromEntries(Object.entries(item).filter(([name]) => kept.has(name)));
}

const sameValue = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);

/** Index write capacity units of a table write that turned `before` into `after`, over every index of the table. */
export function indexWriteUnits(shape: TableShape, before: WireItem | undefined, after: WireItem | undefined): number {
  let units = 0;
  for (const index of shape.indexes) {
    const old = indexEntry(shape, index, before);
    const next = indexEntry(shape, index, after);
    if (old === undefined && next === undefined) continue;
    if (old === undefined) units += writeUnits(itemSize(next), false);
    else if (next === undefined) units += writeUnits(itemSize(old), false);
    else if (index.keyAttributes.some((name) => !sameValue(old[name], next[name]))) units += writeUnits(itemSize(old), false) + writeUnits(itemSize(next), false);
    else if (!sameValue(canonical(old), canonical(next))) units += writeUnits(Math.max(itemSize(old), itemSize(next)), false);
  }
  return units;
}

/** The item with its attributes in name order, so two equal items compare equal. */
function canonical(item: WireItem): WireItem {
  return Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
