/**
 * Reading an ordered subscriber's FIFO dead-letter queue whole (docs/ORDERED-DELIVERY.md, "Operating"). SQS returns no
 * message of a message group (an aggregate) while another of it is in flight, so one read sees at most one receive (10
 * letters) of each aggregate: letters left in front of a group hide its later ones. A read that acts (`--yes`) deletes
 * the letters the fences' plan proves duplicates (the fence or a live inbox record holds the event, or another letter
 * of the same event is kept or sent) and sends what the fences admit, then reads again, until a round changes nothing;
 * every letter read in the run is planned in one plan, so copies of one event split across reads are planned once. A
 * read that does not act (a dry run, `fence list`) reads once. Either way it counts what it did not read (the queue's
 * approximate counts against the letters it holds). Real SQS only: ReceiveMessage, ChangeMessageVisibility,
 * DeleteMessage, SendMessage, GetQueueAttributes.
 */
import { DeleteMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { OrderedDeadLetter, OrderedRedrivePlan, PlannedDeadLetter } from '../../../lambda/ordered/redrive-plan';
import { sendOrdered } from './ordered-sends';
import { DEFAULT_READ_LIMIT, queueCounts, receiveMessages, releaseMessages, type QueueMessage } from './queue-messages';

/** What {@link readOrderedDeadLetters} is asked to do. */
export interface OrderedQueueReadRequest {
  readonly sqs: SQSClient;
  readonly deadLetterQueueUrl: string;
  /** Most letters read in the run. @default DEFAULT_READ_LIMIT */
  readonly limit?: number;
  /** The letter of a message as the plan takes it, or undefined to leave the message where it is (not selected). */
  readonly select: (message: QueueMessage) => OrderedDeadLetter | undefined;
  /** The fences' plan of the letters read (`planOrderedRedrive` against the subscriber's fences and inbox). */
  readonly plan: (letters: readonly OrderedDeadLetter[]) => Promise<OrderedRedrivePlan>;
  /**
   * The subscriber's queue, when the read acts: what the fences admit is sent there and the proven duplicates are
   * deleted, round after round. @default undefined: read once, change nothing
   */
  readonly sendTo?: string;
}

/** What a read of an ordered dead-letter queue found and did. */
export interface OrderedQueueRead {
  /** The plan of every letter read in the run (those deleted or sent included). */
  readonly plan: OrderedRedrivePlan;
  /** Every message read in the run, by message id (the latest receipt of each). */
  readonly byId: ReadonlyMap<string, QueueMessage>;
  /** Message ids sent to the subscriber's queue (and deleted here), in the order sent. */
  readonly sent: readonly string[];
  /** Message ids deleted as proven duplicates (see {@link provenDuplicates}). */
  readonly deleted: readonly string[];
  /** The messages still held (in flight): release them when done. */
  readonly held: readonly QueueMessage[];
  /** Messages read and not selected (another subscriber's, or outside the filters): left where they are. */
  readonly skipped: number;
  /** Letters of the queue the run did not read (its approximate counts less those it holds; 0 when none). */
  readonly unread: number;
}

/**
 * The letters of `plan` whose deletion loses nothing: applied (the fence holds the event at its sequence, or the
 * subscriber's live inbox record of it), a second copy of a letter sent, or a copy of a letter kept for the operator
 * (`copies`). Not those an operator's skip dropped: they are no duplicates, the operator decides.
 */
export function provenDuplicates(plan: OrderedRedrivePlan): PlannedDeadLetter[] {
  return [...plan.alreadyApplied.filter((letter) => letter.recognisedBy !== 'fence skip'), ...plan.copies];
}

/** The sentence that says how many letters a read did not read, and what reads them. */
export function unreadLine(unread: number): string {
  return (
    `${unread} letter(s) of the dead-letter queue not read: a FIFO queue returns at most 10 letters of an aggregate while they are held, so letters in front of an aggregate hide its later ones; ` +
    "'dlq redrive --yes' or 'fence redrive --yes' deletes the proven duplicates in front, sends what the fences admit and reads on. Write no reused event again until every letter is read"
  );
}

/** Reads the queue (whole, when it acts) and plans what it read. Release `held` when done. */
export async function readOrderedDeadLetters(request: OrderedQueueReadRequest): Promise<OrderedQueueRead> {
  const { sqs, deadLetterQueueUrl } = request;
  const limit = request.limit ?? DEFAULT_READ_LIMIT;
  const byId = new Map<string, QueueMessage>();
  const letters = new Map<string, OrderedDeadLetter>();
  const sent: string[] = [];
  const deleted: string[] = [];
  const done = new Set<string>();
  let held: QueueMessage[] = [];
  let skipped = new Set<string>();
  let plan: OrderedRedrivePlan;
  for (;;) {
    held = await receiveMessages(sqs, deadLetterQueueUrl, Math.max(1, limit - done.size));
    skipped = new Set<string>();
    for (const message of held) {
      byId.set(message.messageId, message);
      const letter = request.select(message);
      if (letter === undefined) skipped.add(message.messageId);
      else letters.set(message.messageId, letter);
    }
    plan = await request.plan([...letters.values()]);
    if (request.sendTo === undefined) break;
    const holding = new Set(held.map((message) => message.messageId));
    const toDelete = provenDuplicates(plan).filter((letter) => holding.has(letter.id) && !done.has(letter.id));
    const toSend = plan.ready.filter((letter) => holding.has(letter.id) && !done.has(letter.id));
    for (const letter of toSend) {
      const message = byId.get(letter.id)!;
      // the dead letter's message id as the deduplication id: unique to this copy, so SQS does not drop it as a resend
      await sendOrdered(sqs, request.sendTo, { body: message.body, aggregateId: letter.aggregateId, deduplicationId: message.messageId, messageAttributes: message.messageAttributes });
      await sqs.send(new DeleteMessageCommand({ QueueUrl: message.queueUrl, ReceiptHandle: message.receiptHandle }));
      sent.push(letter.id);
      done.add(letter.id);
    }
    for (const letter of toDelete) {
      const message = byId.get(letter.id)!;
      await sqs.send(new DeleteMessageCommand({ QueueUrl: message.queueUrl, ReceiptHandle: message.receiptHandle }));
      deleted.push(letter.id);
      done.add(letter.id);
    }
    held = held.filter((message) => !done.has(message.messageId));
    // nothing changed: a read again would return the same letters; or the run read as much as it may
    if (toSend.length + toDelete.length === 0 || done.size + held.length >= limit) break;
    // the letters kept go back in front of their groups, and the groups' next letters come after them
    await releaseMessages(sqs, held);
  }
  const counts = await queueCounts(sqs, deadLetterQueueUrl);
  const unread = Math.max(0, counts.visible + counts.inFlight + counts.delayed - held.length);
  return { plan, byId, sent, deleted, held, skipped: skipped.size, unread };
}
