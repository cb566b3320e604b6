/**
 * The deduplication window an ordered subscriber's inbox records were written under. An inbox record lives for the
 * window in effect when its event was applied; a redeploy with a longer `deduplicationWindow` does not lengthen the
 * records written before it. So "no inbox record, younger than the window: never applied" (the ordered consumer's
 * refusal path, the redrive plan) must age an event against the smallest window that could have been in effect since
 * it was written, not the deployed one alone: else an applied event aged between the old and the new window looks
 * never applied (dead-lettered, then planned "write it again": applied twice).
 *
 * The consumer keeps the window it runs with in the subscriber's window record (`<subscriber>@window` in its inbox
 * table), and each raise: the window before and when the first consumer with the new one ran.
 */
import { PutCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DEDUPLICATION_WINDOW_RECORD, deduplicationWindowKey, SEQUENCE_FENCE } from '../contract/ordered-wire-format';
import { TABLE_SCHEMA } from '../contract/wire-format';
import { isConditionalCheckFailed } from '../transaction/cancellation';
import { readItemConsistently, type ItemRead } from '../transaction/consistent-item-read';

/**
 * How long after a raise was recorded an event is still aged against the window before it: a consumer with the old
 * window may still run an invocation that began before the redeploy (up to Lambda's longest timeout, 15 minutes), and
 * the producer's clock (the event's write time) may run ahead of the consumer's (the raise's time) by 5 minutes.
 */
export const WINDOW_RAISE_GRACE_SECONDS = 15 * 60 + 5 * 60;

/** One raise of the window: the window before it, and when the first consumer with the longer one recorded it (ISO 8601). */
export interface WindowRaise {
  readonly previousWindowSeconds: number;
  readonly changedAt: string;
}

/** A subscriber's window record, as stored. */
export interface DeduplicationWindowRecord {
  /** The window of the consumer that last wrote the record, in seconds. */
  readonly windowSeconds: number;
  /** The raises that can still matter (older ones are dropped when the record is written). */
  readonly raises: readonly WindowRaise[];
  /** Counts the record's writes; a write is conditioned on the revision it read. */
  readonly revision: number;
}

/**
 * The smallest deduplication window that could have been in effect for the inbox record of an event written at
 * `writtenAt` (epoch milliseconds; undefined: any time): the given window, the recorded one, and the window before
 * each recorded raise made after the event was written (less {@link WINDOW_RAISE_GRACE_SECONDS}). A lowered window
 * needs no entry: records written under a longer one outlive the shorter rule, and the lower window is the current one.
 * Without a record (no consumer of this runtime ran yet), the given window.
 */
export function smallestWindowSeconds(windowSeconds: number, record: DeduplicationWindowRecord | undefined, writtenAt: number | undefined): number {
  if (record === undefined) return windowSeconds;
  let smallest = Math.min(windowSeconds, record.windowSeconds);
  for (const raise of record.raises) {
    const until = Date.parse(raise.changedAt) + WINDOW_RAISE_GRACE_SECONDS * 1000;
    if (writtenAt === undefined || !(writtenAt >= until)) smallest = Math.min(smallest, raise.previousWindowSeconds);
  }
  return smallest;
}

/**
 * The record the consumer writes when its window is `windowSeconds` and the stored one is `stored`: a longer window
 * adds a raise (the window before, `now`); raises that can no longer matter are dropped (every event written before
 * one of them, plus the grace, is older than the new window: old by any rule).
 */
export function nextWindowRecord(stored: DeduplicationWindowRecord | undefined, windowSeconds: number, now: Date): DeduplicationWindowRecord {
  const nowMilliseconds = now.getTime();
  const kept = (stored?.raises ?? []).filter((raise) => !(Date.parse(raise.changedAt) + (WINDOW_RAISE_GRACE_SECONDS + windowSeconds) * 1000 <= nowMilliseconds));
  const raised = stored !== undefined && windowSeconds > stored.windowSeconds;
  return {
    windowSeconds,
    raises: raised ? [...kept, { previousWindowSeconds: stored.windowSeconds, changedAt: now.toISOString() }] : kept,
    revision: (stored?.revision ?? 0) + 1,
  };
}

/** A stored window record, or undefined when there is none or it is not one. */
function parseWindowRecord(item: Readonly<Record<string, unknown>> | undefined): DeduplicationWindowRecord | undefined {
  const windowSeconds = Number(item?.[DEDUPLICATION_WINDOW_RECORD.WINDOW_ATTRIBUTE]);
  if (item === undefined || !(windowSeconds > 0)) return undefined;
  const raises = (Array.isArray(item[DEDUPLICATION_WINDOW_RECORD.RAISES_ATTRIBUTE]) ? (item[DEDUPLICATION_WINDOW_RECORD.RAISES_ATTRIBUTE] as Record<string, unknown>[]) : [])
    .map((raise) => ({ previousWindowSeconds: Number(raise.previousWindowSeconds), changedAt: String(raise.changedAt) }))
    // a raise that can not be read counts from any time: its window applies to every event
    .map((raise) => (Number.isNaN(Date.parse(raise.changedAt)) ? { ...raise, changedAt: new Date(8.64e15).toISOString() } : raise))
    .filter((raise) => raise.previousWindowSeconds > 0);
  return { windowSeconds, raises, revision: Number(item[DEDUPLICATION_WINDOW_RECORD.REVISION_ATTRIBUTE]) || 0 };
}

/** Reads a subscriber's window record strongly consistent (`read`: the action the caller is granted on the inbox table). */
export async function readWindowRecord(client: DynamoDBDocumentClient, tableName: string, subscriberName: string, read: ItemRead): Promise<DeduplicationWindowRecord | undefined> {
  const key = { [TABLE_SCHEMA.PARTITION_KEY]: deduplicationWindowKey(subscriberName) };
  return parseWindowRecord(await readItemConsistently(client, tableName, key, read, `the deduplication window record of subscriber '${subscriberName}'`));
}

/**
 * Records the consumer's window when the stored one differs (or there is none): one strongly consistent BatchGetItem
 * (the read an ordered consumer is granted), and then, only on a change, one PutItem conditioned on the revision read
 * (another consumer's write in between: read again). `unchanged` or `recorded`.
 */
export async function recordWindow(client: DynamoDBDocumentClient, tableName: string, subscriberName: string, windowSeconds: number, now: () => Date): Promise<'unchanged' | 'recorded'> {
  const key = deduplicationWindowKey(subscriberName);
  for (let attempt = 1; ; attempt += 1) {
    const stored = await readWindowRecord(client, tableName, subscriberName, 'batch-get');
    if (stored?.windowSeconds === windowSeconds) return 'unchanged';
    const at = now();
    const next = nextWindowRecord(stored, windowSeconds, at);
    try {
      await client.send(
        new PutCommand({
          TableName: tableName,
          Item: {
            [TABLE_SCHEMA.PARTITION_KEY]: key,
            [SEQUENCE_FENCE.RECORD_TYPE_ATTRIBUTE]: DEDUPLICATION_WINDOW_RECORD.RECORD_TYPE_VALUE,
            [SEQUENCE_FENCE.SUBSCRIBER_ATTRIBUTE]: subscriberName,
            [DEDUPLICATION_WINDOW_RECORD.WINDOW_ATTRIBUTE]: next.windowSeconds,
            [DEDUPLICATION_WINDOW_RECORD.RAISES_ATTRIBUTE]: next.raises.map((raise) => ({ ...raise })),
            [DEDUPLICATION_WINDOW_RECORD.REVISION_ATTRIBUTE]: next.revision,
            [DEDUPLICATION_WINDOW_RECORD.RECORDED_AT_ATTRIBUTE]: at.toISOString(),
          },
          ...(stored === undefined
            ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': TABLE_SCHEMA.PARTITION_KEY } }
            : { ConditionExpression: '#revision = :revision', ExpressionAttributeNames: { '#revision': DEDUPLICATION_WINDOW_RECORD.REVISION_ATTRIBUTE }, ExpressionAttributeValues: { ':revision': stored.revision } }),
        }),
      );
      return 'recorded';
    } catch (error) {
      if (!isConditionalCheckFailed(error) || attempt >= 3) throw error;
    }
  }
}
