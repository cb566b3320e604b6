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
 * approximate counts, which lag a send by about a minute). A copy on the subscriber's dead-letter queue (kept its
 * retention from the dead-lettering, 14 days by default) or its subscription's (SNS's undelivered copies) comes back by
 * a redrive, and an aggregate subscriber's redrive is `dlq redrive --allow-reapply`: those queues must be empty too (the
 * ones the Operator output names). Checkable against AWS: the write time is the item's, the retention and the counts
 * the queues' (GetQueueAttributes).
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

/**
 * The `audit` of the JSON line `replay` writes on stderr for each event it sends to a subscriber in aggregate mode
 * without an override (an override's line is `replay-override`): who sent which event, when, to which queue, as which
 * message. The refusal of a queue that holds messages points to these lines.
 */
export const REPLAY_AUDIT = 'replay-aggregate';

/** What {@link queuedCopyRefusal} needs beyond the event. */
export interface QueuedCopyRules {
  readonly nowEpochMilliseconds: number;
  /** The subscriber's queue and how long it keeps a message. */
  readonly queue: CopyWait;
  /** Time kept to spare beyond the queue's retention (the consumer's last run, a late commit of the item). */
  readonly safetyMarginSeconds: number;
  /** What the queue holds now ({@link queueOccupancy}). */
  readonly occupancy: QueueOccupancy;
  /**
   * What the subscriber's dead-letter queues hold now (the ones its Operator output names).
   * @default none read
   */
  readonly deadLetters?: readonly DeadLetterOccupancy[];
}

/** A dead-letter queue of the subscriber and what it holds now. */
export interface DeadLetterOccupancy {
  /** Which: the subscriber's queue's, or its subscription's (SNS's undelivered copies). */
  readonly kind: 'dead-letter queue' | 'subscription dead-letter queue';
  readonly queueUrl: string;
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
 * When `event` can be replayed at the earliest by the relay's bound ({@link queuedCopyGoneAt}), as ISO-8601, while that
 * bound is what holds it back (its write time known, not later than now, and the bound not yet passed); undefined
 * otherwise. The queues' counts still decide then. `replay --json` gives it as `replayableAfter`.
 */
export function queuedCopyReplayableAfter(event: OutboxEvent, rules: Omit<QueuedCopyRules, 'occupancy' | 'deadLetters'>): string | undefined {
  const writtenAt = event.writtenAtEpochMilliseconds;
  if (writtenAt === undefined || writtenAt > rules.nowEpochMilliseconds) return undefined;
  const goneAt = queuedCopyGoneAt(writtenAt, rules);
  return rules.nowEpochMilliseconds < goneAt ? new Date(goneAt).toISOString() : undefined;
}

/** What `what` holds, said for a refusal; undefined when it holds nothing. */
function holdingOf(what: string, held: QueueOccupancy): string | undefined {
  if (!('unreadable' in held)) {
    const total = held.visible + held.inFlight + held.delayed;
    if (total === 0) return undefined;
    return `${what} holds ${total} message(s) (ApproximateNumberOfMessages ${held.visible}, ApproximateNumberOfMessagesNotVisible ${held.inFlight}, ApproximateNumberOfMessagesDelayed ${held.delayed})`;
  }
  return `the counts of ${what} could not be read (${held.unreadable})`;
}

/**
 * When the relay's copy of an event whose outbox item was written at `writtenAtEpochMilliseconds` is gone from the
 * queue at the latest: published within {@link RELAY_PUBLISH_BOUND_SECONDS}, then kept the queue's retention, plus the
 * margin.
 */
export function queuedCopyGoneAt(writtenAtEpochMilliseconds: number, rules: Pick<QueuedCopyRules, 'queue' | 'safetyMarginSeconds'>): number {
  return writtenAtEpochMilliseconds + (RELAY_PUBLISH_BOUND_SECONDS + rules.queue.retentionSeconds + rules.safetyMarginSeconds) * 1000;
}

/**
 * Why `event`, which no aggregate of the subscriber remembers, is not replayed to `subscriberName` now: a copy the
 * relay published may still be on its queue ({@link MAY_BE_QUEUED_TEXT}), its outbox item does not prove when it
 * was written, or the queue or a dead-letter queue of the subscriber holds messages (a copy an earlier replay sent, or
 * a dead-lettered one, may be one). Undefined when the relay's copy can no longer be on the queue (SQS deleted it, or
 * the consumer did) and those queues are empty: the replayed copy is the only one.
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
    // the relay's copy can no longer be on the queue; one an earlier replay or redrive sent may be, or one dead-lettered
    const holding = [holdingOf('the queue', rules.occupancy), ...(rules.deadLetters ?? []).map((each) => holdingOf(`its ${each.kind} ${each.queueUrl}`, each.occupancy))].filter(
      (part): part is string => part !== undefined,
    );
    if (holding.length === 0) return undefined;
    return (
      `${MAY_BE_QUEUED_TEXT} ${queueUrl}: the relay's copy can no longer be on the queue, but a copy an earlier replay (or redrive) sent may be, or one may be dead-lettered: ${holding.join('; ')}; ` +
      `${risk}; replay it once they are empty (the counts lag a send by about a minute); a copy on a dead-letter queue goes back with 'dlq redrive', not with a replay; ` +
      `on a queue that is never empty this does not clear: when no replay audit line ("audit":"${REPLAY_AUDIT}" or "replay-override") names this event within the queue's ` +
      `retention (${formatDuration(rules.queue.retentionSeconds)}) and no dead-letter queue holds messages, ${override}`
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
