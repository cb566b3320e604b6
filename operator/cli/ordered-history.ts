/**
 * An aggregate's ordered items in one outbox table, as `fence replay` and `fence skip` read them: its head (or the head
 * an operator carried over) and its history items, each with its generation. A table whose head went back (a restore,
 * a carry that set a head back) holds two generations, or two events under one sequence: the history a fence follows
 * is the chain of items its condition admits one after another ({@link followedHistory}), never "the item at each
 * sequence".
 */
import { ORDERED_OUTBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import { fenceAdmits } from '../../lambda/ordered/sequence-fence';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import type { CommandContext } from './command';
import { outboxTimeToLiveAttribute } from './outbox-ttl-attribute';
import { scanItems } from './scan-items';

/** One history item: the event and where it stands. */
export interface HistoryItem {
  readonly eventId: string;
  readonly type: string;
  readonly sequence: number;
  /** 0 when the item has none. */
  readonly generation: number;
  /** The sequence its generation started at (0 when it has none). */
  readonly generationBase: number;
  /** The envelope as written. */
  readonly body: string;
  /** When the producer's runtime wrote it (epoch milliseconds), when the item says. */
  readonly writtenAt?: number;
  /** When the outbox's TTL removes it (its TTL attribute), epoch seconds; undefined on an item without one. */
  readonly expiresAtEpochSeconds?: number;
}

/** The aggregate's head as the table holds it (written by a producer or carried over by an operator). */
export interface HeadItem {
  readonly sequence: number;
  readonly generation: number;
  readonly generationBase: number;
}

/** The aggregate's ordered items in the table. */
export interface AggregateHistory {
  readonly head?: HeadItem;
  /** Why the items' TTL could not be read (outbox-ttl-attribute.ts): their `expiresAtEpochSeconds` is then not known. */
  readonly timeToLiveUnknown?: string;
  /** By sequence, then generation. */
  readonly items: readonly HistoryItem[];
}

const numberOf = (item: Record<string, unknown>, attribute: string): number => (typeof item[attribute] === 'number' ? (item[attribute] as number) : 0);

/**
 * Reads the aggregate's head and history items (one strongly consistent Scan, whatever the table's key names).
 *
 * @param timeToLiveAttribute the outbox's TTL attribute when the output or a flag names it @default the table's (DescribeTimeToLive)
 */
export async function readAggregateHistory(context: CommandContext, outboxTable: string, aggregateId: string, timeToLiveAttribute?: string): Promise<AggregateHistory> {
  const items = await scanItems(toDocumentClient(context.client()), {
    TableName: outboxTable,
    FilterExpression: '#aggregate = :aggregate AND #type IN (:head, :carried, :history)',
    ExpressionAttributeNames: { '#type': OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE, '#aggregate': ORDERED_OUTBOX_ITEM.AGGREGATE_ATTRIBUTE },
    ExpressionAttributeValues: {
      ':head': ORDERED_OUTBOX_ITEM.HEAD_RECORD_TYPE_VALUE,
      ':carried': ORDERED_OUTBOX_ITEM.CARRIED_HEAD_RECORD_TYPE_VALUE,
      ':history': ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE,
      ':aggregate': aggregateId,
    },
  });
  const ttl = await outboxTimeToLiveAttribute(context.client(), outboxTable, timeToLiveAttribute);
  const timeToLive = 'attribute' in ttl ? ttl.attribute : undefined;
  const headItem = items.find((item) => item[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE] !== ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE);
  const history = items
    .filter((item) => item[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE] === ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE)
    .map(
      (item): HistoryItem => ({
        eventId: String(item[OUTBOX_ITEM.EVENT_ID_ATTRIBUTE]),
        type: String(item[OUTBOX_ITEM.EVENT_TYPE_ATTRIBUTE]),
        sequence: numberOf(item, ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE),
        generation: numberOf(item, ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE),
        generationBase: numberOf(item, ORDERED_OUTBOX_ITEM.GENERATION_BASE_ATTRIBUTE),
        body: String(item[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE]),
        ...(typeof item[OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE] === 'number' ? { writtenAt: item[OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE] as number } : {}),
        ...(timeToLive !== undefined && typeof item[timeToLive] === 'number' && Number.isFinite(item[timeToLive]) ? { expiresAtEpochSeconds: item[timeToLive] as number } : {}),
      }),
    )
    .sort((a, b) => a.sequence - b.sequence || a.generation - b.generation || a.eventId.localeCompare(b.eventId));
  const head =
    headItem === undefined || typeof headItem[ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE] !== 'number'
      ? undefined
      : {
          sequence: numberOf(headItem, ORDERED_OUTBOX_ITEM.SEQUENCE_ATTRIBUTE),
          generation: numberOf(headItem, ORDERED_OUTBOX_ITEM.GENERATION_ATTRIBUTE),
          generationBase: numberOf(headItem, ORDERED_OUTBOX_ITEM.GENERATION_BASE_ATTRIBUTE),
        };
  return { ...(head === undefined ? {} : { head }), ...('unknown' in ttl ? { timeToLiveUnknown: ttl.unknown } : {}), items: history };
}

/** Where a fence stands: its sequence (0: none) and generation (absent: 0). */
export interface FencePoint {
  readonly appliedSequence: number;
  readonly appliedGeneration?: number;
}

/** What the history holds for a fence: the chain it admits, and why the chain ends where it does. */
export interface FollowedHistory {
  /** The items the fence takes one after another from where it stands, in sequence. */
  readonly chain: readonly HistoryItem[];
  /**
   * Why the chain stops before the table's last sequence: `missing` (no item at the next sequence: past the outbox's
   * event retention, or never written), `other-history` (only items the fence refuses: another generation, the history
   * of another table or of a head that went back), `two-events` (two items the fence would both take: the head went
   * back within one generation, a restore without the heads carried over). Absent when nothing follows.
   */
  readonly stop?: { readonly reason: 'missing' | 'other-history' | 'two-events'; readonly sequence: number; readonly items: readonly HistoryItem[] };
  /** Items at or after the fence that the chain does not take (another generation), for the operator to see. */
  readonly notFollowed: readonly HistoryItem[];
}

/** The chain of `items` the fence admits from `fence` on (the fence's own condition, {@link fenceAdmits}), and why it stops. */
export function followedHistory(fence: FencePoint, items: readonly HistoryItem[]): FollowedHistory {
  const chain: HistoryItem[] = [];
  let point: FencePoint = fence;
  let stop: FollowedHistory['stop'];
  const last = items.reduce((highest, item) => Math.max(highest, item.sequence), 0);
  while (point.appliedSequence < last) {
    const sequence = point.appliedSequence + 1;
    const atSequence = items.filter((item) => item.sequence === sequence);
    const admitted = atSequence.filter((item) => fenceAdmits(point, item));
    if (admitted.length !== 1) {
      stop = { reason: admitted.length > 1 ? 'two-events' : atSequence.length === 0 ? 'missing' : 'other-history', sequence, items: admitted.length > 1 ? admitted : atSequence };
      break;
    }
    const next = admitted[0]!;
    chain.push(next);
    point = { appliedSequence: next.sequence, appliedGeneration: next.generation };
  }
  const taken = new Set(chain.map((item) => item.eventId));
  const notFollowed = items.filter((item) => item.sequence > fence.appliedSequence && !taken.has(item.eventId));
  return { chain, ...(stop === undefined ? {} : { stop }), notFollowed };
}
