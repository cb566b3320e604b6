/**
 * Duplicates answered before any write: one eventually consistent BatchGetItem per batch reads the inbox (or
 * processing) records of the batch's event ids, and a message whose record is live and carries the same payload
 * fingerprint is acknowledged as a duplicate without running the handler or sending a write. The conditional write
 * stays the arbiter: a record the read did not see (not yet visible, expired, another mode's, in flight) leaves the
 * message to the mode's normal path, which decides as before.
 */
import { BatchGetCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { PayloadMismatchError } from '../errors';
import type { Logger } from '../logger';
import { MAX_PARTITION_KEY_BYTES, utf8Bytes } from '../transaction/item-size';
import { INBOX_ITEM, PROCESSING_RECORD, RECORD_STATUS, recordKey, TABLE_SCHEMA } from '../contract/wire-format';
import { ORDERED_INBOX_ITEM } from '../contract/ordered-wire-format';
import { orderedPositionOf } from '../ordered/ordered-position';

/** BatchGetItem reads at most 100 keys per request. */
export const MAX_KEYS_PER_BATCH_GET = 100;

/** Which live records prove that a message was applied, per mode. */
export type AppliedRecordKind =
  /** Transactional mode: an inbox record, or a COMPLETED processing record (the mode changed after it completed). */
  | 'inbox-or-completed'
  /** Lease and multi-step modes: a COMPLETED processing record only. */
  | 'completed';

/** Where a consumer's records are, and which of them prove a message applied. */
export interface KnownRecordsSource {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  readonly subscriberName: string;
  readonly accepts: AppliedRecordKind;
}

/** The live record that proves an event applied: its payload fingerprint. */
export interface AppliedRecord {
  readonly fingerprint: string;
  /**
   * The sequence an ordered subscriber applied the event at (its inbox record's `orderedSequence`), when the record has
   * one: a copy at another sequence is not answered by the read (see {@link KnownRecords.recognise}).
   */
  readonly orderedSequence?: number;
  /** Known from a record of this batch ({@link KnownRecords.remember}), not from the read. */
  readonly fromBatch?: boolean;
  /** For a record of this batch: the sequence its message carried, read only when asked (ordered subscribers). */
  readonly orderedSequenceOfMessage?: () => number | undefined;
}

/** The record, when it is live as of `nowEpochSeconds` and proves its event applied under `accepts`; else undefined. */
export function appliedRecordOf(item: Readonly<Record<string, unknown>>, accepts: AppliedRecordKind, nowEpochSeconds: number): AppliedRecord | undefined {
  const expiresAt = item[TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE];
  const fingerprint = item[INBOX_ITEM.FINGERPRINT_ATTRIBUTE];
  // as the claim's condition says: a record whose expiresAt has passed counts as absent (see inbox.ts)
  if (typeof expiresAt !== 'number' || expiresAt < nowEpochSeconds || typeof fingerprint !== 'string') return undefined;
  const isProcessingRecord = item[PROCESSING_RECORD.RECORD_TYPE_ATTRIBUTE] === PROCESSING_RECORD.RECORD_TYPE_VALUE;
  if (isProcessingRecord) return item[PROCESSING_RECORD.STATUS_ATTRIBUTE] === RECORD_STATUS.COMPLETED ? { fingerprint } : undefined;
  const orderedSequence = item[ORDERED_INBOX_ITEM.SEQUENCE_ATTRIBUTE];
  if (accepts !== 'inbox-or-completed') return undefined;
  return typeof orderedSequence === 'number' ? { fingerprint, orderedSequence } : { fingerprint };
}

/**
 * The ordered sequence of the envelope in an SQS body, for {@link KnownRecords.recognise}: read only when the live
 * record is an ordered subscriber's; undefined when the body carries no valid ordered position (the ordered consumer's
 * own parse dead-letters that).
 */
export function orderedSequenceOf(body: string): number | undefined {
  try {
    return orderedPositionOf(body).sequence;
  } catch {
    return undefined;
  }
}

/** What one batch knows to be applied already: read once before the batch, added to as its messages are applied. */
export class KnownRecords {
  private readonly applied = new Map<string, AppliedRecord>();
  private recognisedFromBatch = 0;
  /** The read under way ({@link KnownRecords.reading}); resolved (never rejected) once its answer is in. */
  private pending: Promise<void> = Promise.resolve();

  private constructor(private readonly subscriberName: string) {}

  /** Nothing read: only what the batch's own records add ({@link KnownRecords.remember}), for later copies in it. */
  public static none(subscriberName: string): KnownRecords {
    return new KnownRecords(subscriberName);
  }

  /** How many messages {@link KnownRecords.recognise} answered from an earlier record of this batch, not from the read. */
  public get copiesRecognisedInBatch(): number {
    return this.recognisedFromBatch;
  }

  /**
   * Reads the records of `eventIds` (eventually consistent, 100 keys per request, the requests concurrently). A read that
   * fails, or keys DynamoDB leaves unprocessed, only mean less is known: it is logged, and those messages go their
   * normal path.
   */
  public static async read(source: KnownRecordsSource, eventIds: readonly string[], now: Date, logger: Logger): Promise<KnownRecords> {
    const known = KnownRecords.reading(source, eventIds, now, logger);
    await known.settled();
    return known;
  }

  /**
   * Starts the read of {@link KnownRecords.read} and returns at once: what the batch's own records add is known at once,
   * what the read finds once {@link KnownRecords.settled} resolves (a record of the batch that waits for the read awaits
   * it before {@link KnownRecords.recognise}). The read never replaces what the batch's records added meanwhile.
   */
  public static reading(source: KnownRecordsSource, eventIds: readonly string[], now: Date, logger: Logger): KnownRecords {
    const known = new KnownRecords(source.subscriberName);
    known.pending = known.load(source, eventIds, now, logger);
    return known;
  }

  /** Resolves once the read (if any) has answered or failed; never rejects. */
  public settled(): Promise<void> {
    return this.pending;
  }

  private async load(source: KnownRecordsSource, eventIds: readonly string[], now: Date, logger: Logger): Promise<void> {
    // an id too long for a key would make DynamoDB refuse the whole read; its own path dead-letters it
    const unique = [...new Set(eventIds)].filter((id) => utf8Bytes(recordKey(source.subscriberName, id)) <= MAX_PARTITION_KEY_BYTES);
    const nowEpochSeconds = Math.floor(now.getTime() / 1000);
    if (unique.length === 0) return;
    const chunks: string[][] = [];
    for (let start = 0; start < unique.length; start += MAX_KEYS_PER_BATCH_GET) chunks.push(unique.slice(start, start + MAX_KEYS_PER_BATCH_GET));
    await Promise.all(
      chunks.map(async (ids) => {
        try {
          const response = await source.client.send(
            new BatchGetCommand({
              RequestItems: {
                [source.tableName]: {
                  Keys: ids.map((id) => ({ [TABLE_SCHEMA.PARTITION_KEY]: recordKey(source.subscriberName, id) })),
                  ProjectionExpression: '#eventId, #fingerprint, #expiresAt, #recordType, #status, #orderedSequence',
                  ExpressionAttributeNames: {
                    '#eventId': INBOX_ITEM.EVENT_ID_ATTRIBUTE,
                    '#fingerprint': INBOX_ITEM.FINGERPRINT_ATTRIBUTE,
                    '#expiresAt': TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE,
                    '#recordType': PROCESSING_RECORD.RECORD_TYPE_ATTRIBUTE,
                    '#status': PROCESSING_RECORD.STATUS_ATTRIBUTE,
                    '#orderedSequence': ORDERED_INBOX_ITEM.SEQUENCE_ATTRIBUTE,
                  },
                },
              },
            }),
          );
          for (const item of response.Responses?.[source.tableName] ?? []) {
            const eventId = item[INBOX_ITEM.EVENT_ID_ATTRIBUTE];
            const record = appliedRecordOf(item, source.accepts, nowEpochSeconds);
            // what a record of this batch added meanwhile is the newer news
            if (typeof eventId === 'string' && record !== undefined && !this.applied.has(eventId)) this.applied.set(eventId, record);
          }
        } catch (error) {
          logger.warn('batch read of known records failed', {
            error,
            detail: `${ids.length} messages go the write path instead (the conditional write decides as before); check that the function may call dynamodb:BatchGetItem on '${source.tableName}'`,
          });
        }
      }),
    );
  }

  /**
   * `duplicate` when `eventId` is known applied with this `fingerprint`; undefined when it is not known (the normal
   * path decides). `orderedSequence`: the sequence the delivered event carries ({@link orderedSequenceOf}), asked only
   * when the record is an ordered subscriber's; an ordered
   * subscriber's record of the event at another sequence (a command retried after an outbox restore wrote the applied
   * event again, further on: review r38, R38-9) is left to the ordered consumer, whose fence must pass it.
   *
   * @throws PayloadMismatchError when it is known applied with another fingerprint (the id was reused)
   */
  public recognise(eventId: string, fingerprint: string, orderedSequence?: () => number | undefined): 'duplicate' | undefined {
    const record = this.applied.get(eventId);
    if (record === undefined) return undefined;
    const recordedSequence = record.orderedSequence ?? record.orderedSequenceOfMessage?.();
    if (recordedSequence !== undefined && orderedSequence !== undefined && recordedSequence !== orderedSequence()) return undefined;
    if (record.fingerprint !== fingerprint) {
      throw new PayloadMismatchError({ eventId, storedFingerprint: record.fingerprint, receivedFingerprint: fingerprint, subscriber: this.subscriberName });
    }
    if (record.fromBatch === true) this.recognisedFromBatch += 1;
    return 'duplicate';
  }

  /**
   * Records that `eventId` was just applied (or found applied) with `fingerprint`, for later copies in the batch.
   * `orderedSequence`: the sequence its message carried, read only when a later copy asks (an ordered subscriber's
   * rewrite of the event at another sequence is then left to the fence, as for a record the read found: R8b-2).
   */
  public remember(eventId: string, fingerprint: string, orderedSequence?: () => number | undefined): void {
    this.applied.set(eventId, { fingerprint, fromBatch: true, ...(orderedSequence === undefined ? {} : { orderedSequenceOfMessage: orderedSequence }) });
  }
}
