/**
 * `idempotent-event-flow fence carry`: an ordered subscriber's inbox table restored to a point in time (into a new
 * table, as DynamoDB restores) or replaced holds its fences as they stood then, while its business tables keep the
 * effects of every event applied since (review ro12, RO12-4). Its fences are behind what it applied: `fence replay`
 * would send those events and they would apply twice. Before the subscriber consumes from the restored table, this
 * carries forward, from the table restored from, each fence that is further there (never one back), the inbox records
 * still live that the new table lacks (a copy is then a duplicate), the skip records and the window record it lacks;
 * then it leaves a carry record (`<subscriber>@carried`) that `fence replay` looks for (docs/ORDERED-DELIVERY.md,
 * "Restoring an inbox table").
 */
import { GetCommand, PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  deduplicationWindowKey,
  FENCE_CARRY_RECORD,
  fenceCarryKey,
  SEQUENCE_FENCE,
  SKIPPED_EVENTS,
} from '../../lambda/contract/ordered-wire-format';
import { INBOX_ITEM, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { isConditionalCheckFailed } from '../../lambda/transaction/cancellation';
import { toDocumentClient } from '../../lambda/transaction/document-client';
import type { CommandContext } from './command';
import { scanItems } from './scan-items';

/** What becomes of one fence. */
export interface FenceCarry {
  readonly aggregateId: string;
  /** The fence in the table restored from (its applied sequence). */
  readonly from: number;
  /** The fence in the restored table (0: none). */
  readonly current: number;
  /** `moved`: carried forward (written when applying); `kept`: the restored table's stands there or further; `moved-since`: it changed between the read and the write (nothing overwritten: run again). */
  readonly decision: 'moved' | 'kept' | 'moved-since';
}

/** What a carry did, or would do. */
export interface FenceCarryResult {
  readonly fences: readonly FenceCarry[];
  /** Inbox records (still live), skip records and the window record the restored table lacked. */
  readonly records: number;
}

const PK = TABLE_SCHEMA.PARTITION_KEY;

/** Puts `item` unless its key is there already; false when it was. */
async function putIfAbsent(client: DynamoDBDocumentClient, table: string, item: Record<string, unknown>): Promise<boolean> {
  try {
    await client.send(new PutCommand({ TableName: table, Item: item, ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }));
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

/**
 * Carries `subscriber`'s fences (forward only), live inbox records, skip records and window record from `fromTable`
 * into `toTable`; with `apply` false, a dry run (nothing written).
 */
export async function carryFences(context: CommandContext, subscriber: string, fromTable: string, toTable: string, apply: boolean): Promise<FenceCarryResult> {
  const client = toDocumentClient(context.client());
  const items = await scanItems(client, {
    TableName: fromTable,
    FilterExpression: 'begins_with(#pk, :records) OR #pk = :window OR (#subscriber = :subscriber AND #type IN (:fence, :skips))',
    ExpressionAttributeNames: { '#pk': PK, '#subscriber': SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE, '#type': SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE },
    ExpressionAttributeValues: {
      ':records': `${subscriber}${INBOX_ITEM.KEY_SEPARATOR}`,
      ':window': deduplicationWindowKey(subscriber),
      ':subscriber': subscriber,
      ':fence': SEQUENCE_FENCE.RECORD_TYPE_VALUE,
      ':skips': SKIPPED_EVENTS.RECORD_TYPE_VALUE,
    },
  });
  const nowSeconds = Math.floor(context.now().getTime() / 1000);
  const fences: FenceCarry[] = [];
  let records = 0;
  for (const item of items) {
    if (item[SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE] === SEQUENCE_FENCE.RECORD_TYPE_VALUE) {
      const aggregateId = String(item[SEQUENCE_FENCE.AGGREGATE_ATTRIBUTE]);
      const from = Number(item[SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE]);
      const stored = (await client.send(new GetCommand({ TableName: toTable, Key: { [PK]: item[PK] }, ConsistentRead: true }))).Item;
      const current = typeof stored?.[SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE] === 'number' ? (stored[SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE] as number) : 0;
      if (current >= from) {
        fences.push({ aggregateId, from, current, decision: 'kept' });
        continue;
      }
      if (!apply) {
        fences.push({ aggregateId, from, current, decision: 'moved' });
        continue;
      }
      try {
        // conditioned on the fence as read: a consumer already on the restored table may move it meanwhile
        await client.send(
          new PutCommand({
            TableName: toTable,
            Item: item,
            ConditionExpression: current === 0 ? 'attribute_not_exists(#pk)' : '#applied = :current',
            ExpressionAttributeNames: current === 0 ? { '#pk': PK } : { '#applied': SEQUENCE_FENCE.APPLIED_SEQUENCE_ATTRIBUTE },
            ...(current === 0 ? {} : { ExpressionAttributeValues: { ':current': current } }),
          }),
        );
        fences.push({ aggregateId, from, current, decision: 'moved' });
      } catch (error) {
        if (!isConditionalCheckFailed(error)) throw error;
        fences.push({ aggregateId, from, current, decision: 'moved-since' });
      }
      continue;
    }
    // an inbox record past its expiry proves nothing the new table needs (a copy is answered by the fence)
    const expiresAt = item[TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE];
    if (typeof expiresAt === 'number' && expiresAt < nowSeconds) continue;
    if (!apply) {
      const there = (await client.send(new GetCommand({ TableName: toTable, Key: { [PK]: item[PK] }, ConsistentRead: true }))).Item;
      if (there === undefined) records += 1;
    } else if (await putIfAbsent(client, toTable, item)) {
      records += 1;
    }
  }
  if (apply) {
    await client.send(
      new PutCommand({
        TableName: toTable,
        Item: {
          [PK]: fenceCarryKey(subscriber),
          [SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE]: FENCE_CARRY_RECORD.RECORD_TYPE_VALUE,
          [SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE]: subscriber,
          [FENCE_CARRY_RECORD.FROM_TABLE_ATTRIBUTE]: fromTable,
          [FENCE_CARRY_RECORD.TABLE_ATTRIBUTE]: toTable,
          [FENCE_CARRY_RECORD.CARRIED_AT_ATTRIBUTE]: context.now().toISOString(),
          [FENCE_CARRY_RECORD.CARRIED_BY_ATTRIBUTE]: context.user,
        },
      }),
    );
  }
  fences.sort((a, b) => a.aggregateId.localeCompare(b.aggregateId));
  return { fences, records };
}

/**
 * Whether the subscriber's inbox table holds a carry record written in it (`fence carry` ran on this table): a record
 * that names another table came with a restore or copy of a carried table, and proves nothing of this one (review
 * ro13, RO13-3).
 */
export async function fencesCarried(context: CommandContext, inboxTable: string, subscriber: string): Promise<boolean> {
  const item = (await toDocumentClient(context.client()).send(new GetCommand({ TableName: inboxTable, Key: { [PK]: fenceCarryKey(subscriber) }, ConsistentRead: true }))).Item;
  return item !== undefined && item[FENCE_CARRY_RECORD.TABLE_ATTRIBUTE] === inboxTable;
}
