/**
 * What an ordered subscriber's FIFO dead-letter queue holds of the sequences a `fence skip` would pass: an event there
 * (or in flight there) is not lost, and skipped, the aggregate would apply its later events while the letter could
 * only be dropped or applied out of sequence. Read once, as `fence list` reads it (`readOrderedDeadLetters`, changing
 * nothing): the letters of the aggregate at a skipped sequence, and how many letters the read could not see (hidden
 * behind ten of their group, or in flight), any of which may be one. Real SQS only: ReceiveMessage,
 * ChangeMessageVisibility, GetQueueAttributes.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { OrderedDeadLetter, OrderedRedrivePlan, PlannedDeadLetter } from '../../ordered/redrive-plan';
import type { QueueMessage } from './queue-messages';
import { readOrderedDeadLetters } from './ordered-queue-read';
import { releaseMessages } from './queue-messages';

/** A letter of the aggregate at a sequence the skip passes. */
export interface SkippedDeadLetter {
  /** Its SQS message id. */
  readonly messageId: string;
  /** Its sequence; absent for a letter of the aggregate's group whose body is no ordered event (it may be any). */
  readonly sequence?: number;
  readonly eventId?: string;
}

/** What the dead-letter queue holds of a skip. */
export interface SkipDeadLetters {
  /** The letters of the aggregate at a sequence of (from, to], by sequence. */
  readonly letters: readonly SkippedDeadLetter[];
  /** Letters of the queue the read did not see (see `OrderedQueueRead.unread`): 0 proves the list whole. */
  readonly unread: number;
}

/** What {@link skipDeadLetters} is asked. */
export interface SkipDeadLettersRequest {
  readonly sqs: SQSClient;
  readonly deadLetterQueueUrl: string;
  /** The subscriber's letters (`deadLetterOf`): another subscriber's are not read as its own. */
  readonly select: (message: QueueMessage) => OrderedDeadLetter | undefined;
  /** The fences' plan, as `fence list` plans (it places each letter at its aggregate and sequence). */
  readonly plan: (letters: readonly OrderedDeadLetter[]) => Promise<OrderedRedrivePlan>;
  readonly aggregateId: string;
  readonly from: number;
  readonly to: number;
}

/** Reads the dead-letter queue once (consuming nothing) and says what it holds of the skip of (from, to]. */
export async function skipDeadLetters(request: SkipDeadLettersRequest): Promise<SkipDeadLetters> {
  const { sqs, aggregateId, from, to } = request;
  const read = await readOrderedDeadLetters({ sqs, deadLetterQueueUrl: request.deadLetterQueueUrl, select: request.select, plan: request.plan });
  try {
    const { plan } = read;
    const placed = new Map<string, PlannedDeadLetter>();
    for (const letter of [...plan.redrive, ...plan.alreadyApplied, ...plan.reused, ...plan.unproven, ...plan.copies]) placed.set(letter.id, letter);
    const inRange: SkippedDeadLetter[] = [...placed.values()]
      .filter((letter) => letter.aggregateId === aggregateId && letter.sequence > from && letter.sequence <= to)
      .map((letter) => ({ messageId: letter.id, sequence: letter.sequence, ...(letter.eventId === undefined ? {} : { eventId: letter.eventId }) }));
    // a letter of the aggregate's group that is no ordered event: its sequence can not be told, it may be a skipped one
    const unplaced: SkippedDeadLetter[] = plan.unordered.filter((letter) => read.byId.get(letter.id)?.attributes.MessageGroupId === aggregateId).map((letter) => ({ messageId: letter.id }));
    const letters = [...inRange, ...unplaced].sort((a, b) => (a.sequence ?? Infinity) - (b.sequence ?? Infinity) || (a.messageId < b.messageId ? -1 : a.messageId > b.messageId ? 1 : 0));
    return { letters, unread: read.unread };
  } finally {
    await releaseMessages(sqs, read.held);
  }
}
