/**
 * Reading committed events back from the outbox table, for a replay: by id (GetItem), or by the time range of their
 * envelope's `time` (a Scan of the outbox items; the outbox keeps events for its retention, then its TTL removes them).
 */
import { GetCommand, ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { parseEnvelope, type EventEnvelope } from '../../lambda/envelope';
import { outboxKeyValue } from '../../lambda/producer/outbox-item';
import { OUTBOX_ITEM, TABLE_SCHEMA } from '../../lambda/contract/wire-format';

/** An event as the outbox holds it: the envelope, and the exact JSON the relay publishes as the message body. */
export interface OutboxEvent {
  readonly envelope: EventEnvelope;
  /** The body the relay delivers (the outbox item's envelope attribute, unchanged). */
  readonly body: string;
  /** When the producer wrote the outbox item (`iefWrittenAt`), epoch ms; undefined on items of older runtimes. */
  readonly writtenAtEpochMilliseconds?: number;
  /** When the outbox's TTL removes the item (its TTL attribute, `expiresAt` on the flow's own table), epoch seconds; undefined on an item without one. */
  readonly expiresAtEpochSeconds?: number;
}

/**
 * Whether `event`'s outbox item is past its TTL at `nowEpochMilliseconds`: past the outbox's retention, which the
 * payload bucket's lifecycle counts on, so a replay does not send it. DynamoDB deletes such an item only "typically
 * within a few days", and reads return it until then, so reading it proves nothing.
 */
export function pastRetention(event: Pick<OutboxEvent, 'expiresAtEpochSeconds'>, nowEpochMilliseconds: number): boolean {
  return event.expiresAtEpochSeconds !== undefined && event.expiresAtEpochSeconds * 1000 <= nowEpochMilliseconds;
}

/** How the output names events past the outbox's TTL (`replay`, and `fence replay` with ', nothing sent'). */
export const PAST_RETENTION_TEXT = "past the outbox's retention (its TTL passed; DynamoDB deletes such items within days), not replayed";

/** Where the outbox items are. */
export interface OutboxLocation {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** @default 'pk' */
  readonly partitionKeyName?: string;
  /** The sort key, for a table that has one (outbox items use the same value on both). @default none */
  readonly sortKeyName?: string;
  /**
   * The record type of the items that hold events: the standard outbox items, or an ordered outbox's history items
   * (`ORDERED_OUTBOX_ITEM.HISTORY_RECORD_TYPE_VALUE`, one per event under the same key).
   * @default OUTBOX_ITEM.RECORD_TYPE_VALUE
   */
  readonly recordType?: string;
  /** The attribute the table's TTL reads (see `outboxTimeToLive`); null: its items never expire. @default 'expiresAt' */
  readonly timeToLiveAttributeName?: string | null;
}

function eventOf(item: Record<string, unknown> | undefined, recordType: string, timeToLiveAttributeName: string | null): OutboxEvent | undefined {
  const body = item?.[OUTBOX_ITEM.ENVELOPE_ATTRIBUTE];
  if (item?.[OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE] !== recordType || typeof body !== 'string') return undefined;
  const writtenAt = item[OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE];
  const expiresAt = timeToLiveAttributeName === null ? undefined : item[timeToLiveAttributeName];
  return {
    envelope: parseEnvelope(body),
    body,
    ...(typeof writtenAt === 'number' && Number.isFinite(writtenAt) ? { writtenAtEpochMilliseconds: writtenAt } : {}),
    ...(typeof expiresAt === 'number' && Number.isFinite(expiresAt) ? { expiresAtEpochSeconds: expiresAt } : {}),
  };
}

/**
 * The earliest moment `event` could have been applied (and a subscriber's dedup record written): the earlier of its
 * `time` and when its outbox item was written (`iefWrittenAt`). An event can not be applied before its item exists,
 * whatever `time` says, so a producer's date never makes an event look younger than its item. `from` names the write
 * time when it is the one taken, for messages.
 *
 * `unknown` says why the age can not be proven (the caller refuses, or sends only on an explicit, audited override):
 * the item does not say when it was written (an older runtime, a producer in another language, an item written by
 * hand: its `time` is only the producer's word, and an item written 31 days ago may say 20), or it says it was
 * written later than now (a clock or a producer that lies; its `time` proves nothing then either).
 */
export function earliestApplication(event: OutboxEvent, nowEpochMilliseconds: number): { epochMilliseconds: number; from?: string } | { unknown: string } {
  const writtenAt = event.writtenAtEpochMilliseconds;
  if (writtenAt === undefined) {
    return {
      unknown:
        `its outbox item does not say when it was written (no ${OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE}: an older runtime, another producer, or written by hand), ` +
        "and its time is only its producer's word, which may make it look younger than its item: its age against the deduplication window can not be proven " +
        '(--allow-expired sends it, with an audit line)',
    };
  }
  if (writtenAt > nowEpochMilliseconds) {
    return {
      unknown:
        `its outbox item says it was written at ${new Date(writtenAt).toISOString()}, later than now (${new Date(nowEpochMilliseconds).toISOString()}): ` +
        'a write time that lies proves no age, and neither does its time, so its age against the deduplication window can not be proven ' +
        '(--allow-expired sends it, with an audit line)',
    };
  }
  const time = event.envelope.time === undefined ? Number.NaN : Date.parse(event.envelope.time);
  if (!(time <= writtenAt)) return { epochMilliseconds: writtenAt, from: 'when its outbox item was written' };
  return { epochMilliseconds: time };
}

/** The outbox's events of `eventIds`, in that order; ids it does not hold (never written, or past the outbox TTL) are in `missing`. */
export async function outboxEventsById(location: OutboxLocation, eventIds: readonly string[]): Promise<{ events: OutboxEvent[]; missing: string[] }> {
  const events: OutboxEvent[] = [];
  const missing: string[] = [];
  for (const eventId of eventIds) {
    const key: Record<string, string> = { [location.partitionKeyName ?? 'pk']: outboxKeyValue(eventId) };
    if (location.sortKeyName !== undefined) key[location.sortKeyName] = outboxKeyValue(eventId);
    const response = await location.client.send(new GetCommand({ TableName: location.tableName, Key: key, ConsistentRead: true }));
    const event = eventOf(response.Item, location.recordType ?? OUTBOX_ITEM.RECORD_TYPE_VALUE, location.timeToLiveAttributeName ?? TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE);
    if (event === undefined) missing.push(eventId);
    else events.push(event);
  }
  return { events, missing };
}

/** The outbox's events whose `time` is in `[sinceEpochMs, untilEpochMs)` (and of `types`, if any), oldest first. */
export async function outboxEventsInRange(
  location: OutboxLocation,
  range: { readonly sinceEpochMs: number; readonly untilEpochMs: number; readonly types: readonly string[] },
): Promise<OutboxEvent[]> {
  const events: OutboxEvent[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await location.client.send(
      new ScanCommand({
        TableName: location.tableName,
        FilterExpression: '#recordType = :outbox',
        ExpressionAttributeNames: { '#recordType': OUTBOX_ITEM.RECORD_TYPE_ATTRIBUTE },
        ExpressionAttributeValues: { ':outbox': location.recordType ?? OUTBOX_ITEM.RECORD_TYPE_VALUE },
        ExclusiveStartKey: startKey,
        ConsistentRead: true,
      }),
    );
    for (const item of page.Items ?? []) {
      const event = eventOf(item, location.recordType ?? OUTBOX_ITEM.RECORD_TYPE_VALUE, location.timeToLiveAttributeName ?? TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE);
      const time = event?.envelope.time === undefined ? Number.NaN : Date.parse(event.envelope.time);
      if (event === undefined || !(time >= range.sinceEpochMs && time < range.untilEpochMs)) continue;
      if (range.types.length > 0 && !range.types.includes(event.envelope.type)) continue;
      events.push(event);
    }
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return events.sort((a, b) => Date.parse(a.envelope.time as string) - Date.parse(b.envelope.time as string) || (a.envelope.id < b.envelope.id ? -1 : 1));
}
