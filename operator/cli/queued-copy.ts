/**
 * Whether a copy of an event may still be on a subscriber's queue, so that a replayed copy would be its second
 * (`replay --aggregate-table`). A subscriber in aggregate mode keeps no inbox: each aggregate remembers only the ids of
 * its last `maxProcessedMessages` applications. An event no aggregate remembers was never applied, but its copy the
 * relay published may still be on the queue (not yet received, or received and not yet deleted): both copies arrive,
 * and once newer events to its aggregate have pushed its id out of the list between them, the second is applied
 * again. The queue's own copy lives at most until the relay's latest publish plus the queue's retention: the relay
 * publishes a record within its stream's 24 hours (`relayMaximumRecordAge` is at most 23 hours), from its outbox item's
 * write (`iefWrittenAt`), and SQS deletes a message its `MessageRetentionPeriod` after it was sent. A copy an earlier
 * replay (or a redrive) sent has no such bound the command can read per event: the queue must be empty (SQS's
 * approximate counts, which lag a send by about a minute). Checkable against AWS: the write time is the item's, the
 * retention and the counts the queue's (GetQueueAttributes). A copy on the dead-letter queue comes back only by a
 * redrive, which refuses a subscriber in aggregate mode unless told (`dlq redrive --allow-reapply`).
 */
import { OUTBOX_ITEM } from '../../lambda/contract/wire-format';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { CopyWait } from './dead-letters/copy-wait';
import { queueCounts, type QueueCounts } from './dead-letters/queue-messages';
import { formatDuration } from './dead-letters/redrive-decision';
import type { OutboxEvent } from './outbox-events';

/** How long after its outbox item's write the relay may still publish an event: its stream keeps records 24 hours. */
export const RELAY_PUBLISH_BOUND_SECONDS = 86_400;

/** How every refusal of {@link queuedCopyRefusal} begins (the tests and the model match it). */
export const MAY_BE_QUEUED_TEXT = "a copy of it may still be on the subscriber's queue";

/** What {@link queuedCopyRefusal} needs beyond the event. */
export interface QueuedCopyRules {
  readonly nowEpochMilliseconds: number;
  /** The subscriber's queue and how long it keeps a message. */
  readonly queue: CopyWait;
  /** Time kept to spare beyond the queue's retention (the consumer's last run, a late commit of the item). */
  readonly safetyMarginSeconds: number;
  /** What the queue holds now ({@link queueOccupancy}). */
  readonly occupancy: QueueOccupancy;
}

/** The queue's approximate counts now, or why they could not be read. */
export type QueueOccupancy = QueueCounts | { readonly unreadable: string };

/** The counts of `queueUrl` (GetQueueAttributes); an error is kept as why they could not be read. */
export async function queueOccupancy(client: SQSClient, queueUrl: string): Promise<QueueOccupancy> {
  try {
    return await queueCounts(client, queueUrl);
  } catch (error) {
    return { unreadable: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

/**
 * When the relay's copy of an event whose outbox item was written at `writtenAtEpochMilliseconds` is gone from the
 * queue at the latest: published within {@link RELAY_PUBLISH_BOUND_SECONDS}, then kept the queue's retention, plus the
 * margin.
 */
export function queuedCopyGoneAt(writtenAtEpochMilliseconds: number, rules: Omit<QueuedCopyRules, 'nowEpochMilliseconds'>): number {
  return writtenAtEpochMilliseconds + (RELAY_PUBLISH_BOUND_SECONDS + rules.queue.retentionSeconds + rules.safetyMarginSeconds) * 1000;
}

/**
 * Why `event`, which no aggregate of the subscriber remembers, is not replayed to `subscriberName` now: a copy the
 * relay published may still be on its queue ({@link MAY_BE_QUEUED_TEXT}), its outbox item does not prove when it
 * was written, or the queue holds messages (a copy an earlier replay sent may be one). Undefined when the relay's copy
 * is gone (SQS deleted it, or the consumer did) and the queue is empty: the replayed copy is the only one.
 */
export function queuedCopyRefusal(event: OutboxEvent, subscriberName: string, rules: QueuedCopyRules): string | undefined {
  const writtenAt = event.writtenAtEpochMilliseconds;
  const now = rules.nowEpochMilliseconds;
  const risk =
    `with the replayed copy both would arrive, and the aggregate of '${subscriberName}' applies the second again once newer events have pushed the id out of its ` +
    'processedMessages (maxProcessedMessages) between them';
  const override = '--allow-reapply sends it now (when you know no copy of it is on the queue: the relay gave up on it, or SQS deleted it)';
  if (writtenAt === undefined || writtenAt > now) {
    const proof =
      writtenAt === undefined
        ? `its outbox item does not say when it was written (no ${OUTBOX_ITEM.WRITTEN_AT_ATTRIBUTE}: an older runtime, another producer, or written by hand)`
        : `its outbox item says it was written at ${new Date(writtenAt).toISOString()}, later than now (${new Date(now).toISOString()})`;
    return `${MAY_BE_QUEUED_TEXT} ${rules.queue.queueUrl}: ${proof}, so when the relay published it, and when SQS deletes that copy, can not be proven; ${risk}; ${override}`;
  }
  const goneAt = queuedCopyGoneAt(writtenAt, rules);
  const { retentionSeconds, known, queueUrl } = rules.queue;
  if (now >= goneAt) {
    // the relay's copy is gone; one an earlier replay or redrive sent may not be
    const held = rules.occupancy;
    if ('unreadable' in held) {
      return `${MAY_BE_QUEUED_TEXT} ${queueUrl}: the relay's copy is gone, but a copy an earlier replay (or redrive) sent may be there, and the queue's counts could not be read (${held.unreadable}); ${risk}; ${override}`;
    }
    const total = held.visible + held.inFlight + held.delayed;
    if (total === 0) return undefined;
    return (
      `${MAY_BE_QUEUED_TEXT} ${queueUrl}: the relay's copy is gone, but the queue holds ${total} message(s) (ApproximateNumberOfMessages ${held.visible}, ` +
      `ApproximateNumberOfMessagesNotVisible ${held.inFlight}, ApproximateNumberOfMessagesDelayed ${held.delayed}), and a copy an earlier replay (or redrive) sent may be among them; ` +
      `${risk}; replay it once the queue is empty (its consumer has taken them; the counts lag a send by about a minute), or ${override}`
    );
  }
  return (
    `${MAY_BE_QUEUED_TEXT} ${queueUrl} (not yet received, or received and not yet deleted): its outbox item was written at ${new Date(writtenAt).toISOString()} ` +
    `(${formatDuration((now - writtenAt) / 1000)} ago), the relay publishes within its stream's ${formatDuration(RELAY_PUBLISH_BOUND_SECONDS)}, and SQS keeps a message ` +
    `${formatDuration(retentionSeconds)}${known ? " (the queue's MessageRetentionPeriod)" : ' (assumed: the SQS maximum; its MessageRetentionPeriod could not be read)'}, ` +
    `so that copy may be delivered until ${new Date(goneAt).toISOString()} (with ${formatDuration(rules.safetyMarginSeconds)} to spare); ${risk}; ` +
    `replay it after then, or ${override}`
  );
}
