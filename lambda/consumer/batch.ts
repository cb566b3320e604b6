/** Iterates an SQS batch and builds the partial batch response. Pure: no AWS SDK. */
import type { SQSBatchResponse, SQSRecord } from './sqs';

/** What became of one SQS record (see the outcome table in docs/DESIGN.md). */
export type RecordOutcome =
  /** The transaction committed: acknowledged. */
  | 'processed'
  /** The inbox already held the event id: acknowledged, nothing applied. */
  | 'duplicate'
  /** Sent to the dead-letter queue with its reason: acknowledged. */
  | 'dead-lettered'
  /**
   * A step's (or a lease-protected effect's) outcome is unknown: the record is blocked for an operator and the message
   * is in the dead-letter queue with the reason: acknowledged.
   */
  | 'blocked'
  /**
   * Lease/multi-step: the record was already blocked for an operator by another delivery, whose dead letter holds the
   * message: acknowledged with no dead letter and no write.
   */
  | 'already-blocked'
  /** A FIFO message not attempted because an earlier message of its group failed in this batch: reported for retry. */
  | 'skipped'
  /** Anything else: reported in `batchItemFailures`, so SQS delivers it again. */
  | 'failed';

/** Processes one record and says what became of it; should not throw (a throw counts as `failed`). */
export type RecordProcessor<TRecord extends SQSRecord> = (record: TRecord) => Promise<RecordOutcome>;

/** Options of {@link processBatch}. */
export interface BatchOptions<TRecord extends SQSRecord> {
  /** Told about a processor that threw instead of returning `failed`. @default ignored */
  readonly onUnexpectedError?: (record: TRecord, error: unknown) => void;
  /** Told about each record skipped after an earlier failure in its FIFO message group. @default ignored */
  readonly onSkipped?: (record: TRecord, groupId: string) => void;
  /** Told the outcome of every record, skipped ones included (for metrics). @default ignored */
  readonly onOutcome?: (record: TRecord, outcome: RecordOutcome) => void;
}

/** Outcomes that leave the message on the queue, reported as batch item failures. */
export const RETRIED_OUTCOMES: ReadonlySet<RecordOutcome> = new Set(['failed', 'skipped']);

/**
 * Processes the records one after another and reports every record whose outcome is `failed` (or whose processor
 * threw) as a batch item failure. On a standard queue one record's failure never affects the others.
 *
 * On a FIFO queue (records carry `MessageGroupId`), order within a group must hold: after the first failure in a
 * group, the group's later records in the batch are not attempted and are reported too (`skipped`), so they are
 * retried in order after it. Other groups go on.
 */
export async function processBatch<TRecord extends SQSRecord>(
  records: readonly TRecord[],
  processRecord: RecordProcessor<TRecord>,
  options: BatchOptions<TRecord> = {},
): Promise<SQSBatchResponse> {
  const response: SQSBatchResponse = { batchItemFailures: [] };
  const failedGroups = new Set<string>();
  for (const record of records) {
    const groupId = record.attributes?.MessageGroupId;
    let outcome: RecordOutcome;
    if (groupId !== undefined && failedGroups.has(groupId)) {
      options.onSkipped?.(record, groupId);
      outcome = 'skipped';
    } else {
      try {
        outcome = await processRecord(record);
      } catch (error) {
        options.onUnexpectedError?.(record, error);
        outcome = 'failed';
      }
    }
    options.onOutcome?.(record, outcome);
    if (RETRIED_OUTCOMES.has(outcome)) {
      response.batchItemFailures.push({ itemIdentifier: record.messageId });
      if (groupId !== undefined) failedGroups.add(groupId);
    }
  }
  return response;
}
