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
  /** Anything else: reported in `batchItemFailures`, so SQS delivers it again. */
  | 'failed';

/** Processes one record and says what became of it; should not throw (a throw counts as `failed`). */
export type RecordProcessor<TRecord extends SQSRecord> = (record: TRecord) => Promise<RecordOutcome>;

/**
 * Processes the records one after another and reports every record whose outcome is `failed` (or whose processor
 * threw) as a batch item failure. One record's failure never affects the others.
 *
 * @param onUnexpectedError told about a processor that threw instead of returning `failed`
 */
export async function processBatch<TRecord extends SQSRecord>(
  records: readonly TRecord[],
  processRecord: RecordProcessor<TRecord>,
  onUnexpectedError: (record: TRecord, error: unknown) => void = () => undefined,
): Promise<SQSBatchResponse> {
  const response: SQSBatchResponse = { batchItemFailures: [] };
  for (const record of records) {
    let outcome: RecordOutcome;
    try {
      outcome = await processRecord(record);
    } catch (error) {
      onUnexpectedError(record, error);
      outcome = 'failed';
    }
    if (outcome === 'failed') response.batchItemFailures.push({ itemIdentifier: record.messageId });
  }
  return response;
}
