/**
 * What an ordered subscriber holds of one event, read as its consumer decides: a live inbox record (the event was
 * applied), or an operator's `fence skip` that dropped it (docs/ORDERED-DELIVERY.md, "Restoring the outbox table").
 * The redrive plan asks it for every dead letter at or below the fence: the fence keeps only its own sequence's event
 * id, so below it nothing else tells an applied event from a never-applied one whose sequence another event took.
 */
import { GetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { toDocumentClient, type DynamoDBClientLike } from '../../lambda/transaction/document-client';
import { recordKey, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { findSkip } from '../../lambda/ordered/skipped-events';
import type { OrderedPosition } from '../../lambda/ordered/ordered-position';
import { readWindowRecord, smallestWindowSeconds, type DeduplicationWindowRecord } from '../../lambda/ordered/deduplication-window';

/**
 * What the subscriber holds of an event: `applied` (a live inbox record), `skipped` (a fence skip dropped it), nothing
 * (undefined: no record, and the event is young enough that a record of an application would still be live: never
 * applied), or `{ unproven }`: no record, but the event's age does not prove it was never applied (older than the
 * deduplication window, whose record may have expired; no write time; a write time later than now; or no window
 * given), with why.
 */
export type OrderedEventRecord = 'applied' | 'skipped' | { readonly unproven: string } | undefined;

/**
 * How much younger than the deduplication window an unrecorded event must be, from its write time, to be called never
 * applied: slack for the producer's clock running ahead of the consumer's (whose clock dates the record's expiry).
 */
export const ORDERED_AGE_MARGIN_SECONDS = 300;

/** Reads what a subscriber holds of an event (`OrderedEventRecords` does, on the inbox table). */
export interface IOrderedEventRecords {
  /** What the subscriber holds of the event `eventId` at `position`. */
  find(position: OrderedPosition, eventId: string): Promise<OrderedEventRecord>;
}

/** Options of {@link OrderedEventRecords}. */
export interface OrderedEventRecordsOptions {
  readonly client: DynamoDBClientLike;
  /** The subscriber's inbox table (its records, fences and skip records). */
  readonly tableName: string;
  readonly subscriberName: string;
  /** @default the system clock */
  readonly now?: () => Date;
  /**
   * The subscriber's deduplication window (its inbox records' lifetime), in seconds. An event without a live record is
   * called never applied only while younger than it by 5 minutes of clock slack, aged as the consumer ages
   * it: from its write time (`iefwrittenat`), never from its producer's `time`. When the subscriber's window record
   * shows a smaller window (raised since the event was written, or the deployed one), that one.
   * @default none: no age proves a record would still be live, so every event without one is unproven
   */
  readonly deduplicationWindowSeconds?: number;
}

/** Reads a subscriber's inbox record of an event (strongly consistent; an expired record counts as absent, as the inbox's condition does), then its skip record. */
export class OrderedEventRecords implements IOrderedEventRecords {
  private readonly client: DynamoDBDocumentClient;
  private window: Promise<DeduplicationWindowRecord | undefined> | undefined;

  public constructor(private readonly options: OrderedEventRecordsOptions) {
    this.client = toDocumentClient(options.client);
  }

  public async find(position: OrderedPosition, eventId: string): Promise<OrderedEventRecord> {
    const { tableName, subscriberName } = this.options;
    const item = (await this.client.send(new GetCommand({ TableName: tableName, Key: { [TABLE_SCHEMA.PARTITION_KEY]: recordKey(subscriberName, eventId) }, ConsistentRead: true }))).Item;
    const nowMilliseconds = (this.options.now ?? (() => new Date()))().getTime();
    const nowSeconds = Math.floor(nowMilliseconds / 1000);
    const expiresAt = item?.[TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE];
    if (item !== undefined && !(typeof expiresAt === 'number' && expiresAt < nowSeconds)) return 'applied';
    if ((await findSkip(this.client, tableName, subscriberName, position, eventId, position.writtenAt)) !== undefined) return 'skipped';
    const given = this.options.deduplicationWindowSeconds;
    // the smallest window the event's record could have been written under: a raise does not lengthen older records
    const smallest = given === undefined ? undefined : smallestWindowSeconds(given, await this.windowRecord(), position.writtenAt);
    const unproven = unprovenAge(position.writtenAt, nowMilliseconds, smallest, smallest !== undefined && given !== undefined && smallest < given);
    return unproven === undefined ? undefined : { unproven };
  }

  /** The subscriber's window record, read once (GetItem, strongly consistent). */
  private windowRecord(): Promise<DeduplicationWindowRecord | undefined> {
    this.window ??= readWindowRecord(this.client, this.options.tableName, this.options.subscriberName, 'get');
    return this.window;
  }
}

/**
 * Why the absence of an inbox record does not prove an event written at `writtenAt` never applied (review r8b,
 * R8b-10: the outbox's history outlives the inbox's records); undefined when it does: the event is younger than the
 * window by the margin, so the record of an application (dated from the application, after the write) would be live.
 * `raised`: the window given is the one before a raise (the smallest its record could have been written under).
 */
export function unprovenAge(writtenAt: number | undefined, nowEpochMilliseconds: number, deduplicationWindowSeconds: number | undefined, raised = false): string | undefined {
  if (deduplicationWindowSeconds === undefined) return "no inbox record of it, and without the subscriber's deduplication window its age proves nothing: a record of an application may have expired";
  if (writtenAt === undefined) {
    return "no inbox record of it, and its envelope does not say when it was written (no iefwrittenat: an older runtime, another producer, by hand); its time is only its producer's word, so its age can not be proven and a record of an application may have expired";
  }
  if (writtenAt > nowEpochMilliseconds) {
    return `no inbox record of it, and its envelope says it was written at ${new Date(writtenAt).toISOString()}, later than now: a write time that lies proves no age, so a record of an application may have expired`;
  }
  const ageSeconds = (nowEpochMilliseconds - writtenAt) / 1000;
  if (ageSeconds + ORDERED_AGE_MARGIN_SECONDS < deduplicationWindowSeconds) return undefined;
  const window = raised
    ? `the deduplication window its inbox record could have been written under (${deduplicationWindowSeconds} s, the window before a raise made since it was written, less ${ORDERED_AGE_MARGIN_SECONDS} s of clock slack)`
    : `the subscriber's deduplication window (${deduplicationWindowSeconds} s, less ${ORDERED_AGE_MARGIN_SECONDS} s of clock slack)`;
  return `no inbox record of it, but it was written ${Math.floor(ageSeconds)} s ago, older than ${window}: a record of an application would have expired by now`;
}
