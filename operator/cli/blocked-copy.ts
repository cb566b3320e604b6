/**
 * Where a blocked message is kept while its record waits for an operator, and until when. The record waits
 * indefinitely (no TTL while blocked), but unless the record keeps the body (`keepBlockedMessageBody`), the message's
 * only copy is its dead letter, and SQS deletes that once it is as old as the dead-letter queue's
 * `MessageRetentionPeriod` (14 days at most). Its age counts from when it was sent to the dead-letter queue, or, when
 * SQS moved it there itself, from when it was first sent (a standard queue keeps the enqueue timestamp): both are no
 * later than the block, so the block's time plus the retention is when the copy is gone at the latest. Pure: reads a
 * record or a listed message, calls nothing.
 */
import type { BlockedMessage } from '../blocked/blocked-messages';
import type { ProcessingRecordView } from '../../lambda/processing/processing-record';
import type { CopyWait } from './dead-letters/copy-wait';
import { formatDuration } from './dead-letters/redrive-decision';

/** How long before its dead letter is deleted `blocked list` warns about a blocked message: 2 days. */
export const EXPIRY_WARNING_SECONDS = 2 * 86_400;

/** When SQS deletes the dead letter of a message blocked at `blockedAt` (ISO-8601) at the latest, or undefined when that time is unreadable. */
export function deadLetterExpiresBy(blockedAt: string, retention: CopyWait): string | undefined {
  const at = Date.parse(blockedAt);
  return Number.isFinite(at) ? new Date(at + retention.retentionSeconds * 1000).toISOString() : undefined;
}

/** How the retention was learnt, in words. */
function retentionSource(retention: CopyWait): string {
  return retention.known
    ? `its MessageRetentionPeriod of ${formatDuration(retention.retentionSeconds)}`
    : `assumed: the SQS maximum retention of ${formatDuration(retention.retentionSeconds)}; pass --dead-letter-queue to read it`;
}

/** Where `record`'s message is kept, for `blocked show`. */
export function blockedCopyText(record: ProcessingRecordView, retention: CopyWait): string {
  if (record.blocked?.body !== undefined) return 'kept on the record (keepBlockedMessageBody): it does not expire while the record is blocked';
  const by = record.blocked === undefined ? undefined : deadLetterExpiresBy(record.blocked.at, retention);
  return `the dead letter in the subscriber's dead-letter queue, deleted by SQS by ${by ?? '(unknown)'} at the latest (${retentionSource(retention)})`;
}

/**
 * The warning for a listed message whose dead letter, its only copy unless the record keeps the body, is deleted within
 * {@link EXPIRY_WARNING_SECONDS} or was already, or undefined.
 */
export function expiryWarning(message: BlockedMessage, retention: CopyWait, nowEpochMilliseconds: number): string | undefined {
  const by = deadLetterExpiresBy(message.blockedAt, retention);
  if (by === undefined) return undefined;
  const leftSeconds = (Date.parse(by) - nowEpochMilliseconds) / 1000;
  if (leftSeconds > EXPIRY_WARNING_SECONDS) return undefined;
  const what = `event '${message.eventId}' of subscriber '${message.subscriber}': its dead letter, the message's only copy,`;
  return leftSeconds > 0
    ? `${what} is deleted by SQS by ${by} at the latest (in ${formatDuration(leftSeconds)}): resolve the record and redrive it before then`
    : `${what} was deleted by SQS by ${by} at the latest (${retentionSource(retention)}), unless it was redriven: look for it with 'dlq show'`;
}
