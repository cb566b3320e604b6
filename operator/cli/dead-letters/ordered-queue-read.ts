/**
 * Reading an ordered subscriber's FIFO dead-letter queue whole (docs/ORDERED-DELIVERY.md, "Operating"). SQS returns no
 * message of a message group (an aggregate) while another of it is in flight, so one read sees at most one receive (10
 * letters) of each aggregate: letters left in front of a group hide its later ones. A read that acts (`--yes`) deletes
 * the letters the fences' plan proves duplicates (the fence or a live inbox record holds the event, or another letter
 * of the same event is kept or sent) and sends what the fences admit, then reads again, until a round changes nothing;
 * every letter read in the run is planned in one plan, so copies of one event split across reads are planned once. A
 * read that does not act (a dry run, `fence list`) reads once. A letter first read after the run sent a letter of the
 * same event (aggregate and event id) is that event dead-lettered again (the consumer still rejects it): it is kept,
 * reported in `returned`, and left out of the plan, so it is never deleted as a copy of the letter sent nor sent again
 * (review ro13, RO13-4). Either way it counts what it did not read (the queue's
 * approximate counts against the letters it holds). Real SQS only: ReceiveMessage, ChangeMessageVisibility,
 * DeleteMessage, SendMessage, GetQueueAttributes.
 */
import { DeleteMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { attributesLeavingTheQueue, moveToBack, sendDeduplicationId } from './move-to-back';
import { orderedPositionOf } from '../../../lambda/ordered/ordered-position';
import type { OrderedDeadLetter, OrderedRedrivePlan, PlannedDeadLetter } from '../../ordered/redrive-plan';
import { sendOrdered } from './ordered-sends';
import { DEFAULT_READ_LIMIT, queueCounts, receiveMessages, releaseMessages, type QueueCounts, type QueueMessage } from './queue-messages';

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
  /**
   * Message ids of letters first read after the run sent a letter of the same event (aggregate and event id, or
   * aggregate and sequence when the body has no event id): the event dead-lettered again. Kept in the dead-letter queue
   * and left out of `plan`.
   */
  readonly returned: readonly string[];
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

/** The sentence that says what became of the letters dead-lettered again after the run sent their event (`returned`). */
export function returnedLine(count: number): string {
  return (
    `${count} letter(s) dead-lettered again after this redrive sent their event: the consumer still rejects it; left in the dead-letter queue (never deleted as a copy: it is the event's only letter). ` +
    "Fix what rejects it (see the letter's reason with 'dlq show'), then redrive again"
  );
}

/** The sentence that says how many letters a read did not read, and what reads them. */
export function unreadLine(unread: number): string {
  return (
    `${unread} letter(s) of the dead-letter queue not read: a FIFO queue returns at most 10 letters of an aggregate while they are held, so letters in front of an aggregate hide its later ones; ` +
    "'dlq redrive --yes' or 'fence redrive --yes' deletes the proven duplicates in front, sends what the fences admit, moves the letters it keeps to the back of their groups and reads on. Write no reused event again until every letter is read"
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
  // when each message was first read, and, per event sent, how many messages had been read when it was sent: a message
  // first read later is not a copy the run saw before the send
  const firstRead = new Map<string, number>();
  const sentWhen = new Map<string, number>();
  const returned = new Set<string>();
  // letters this run moved to the back of their groups (their new message ids)
  const movedCopies = new Set<string>();
  let held: QueueMessage[] = [];
  let skipped = new Set<string>();
  // every message read and not selected (left where it is, never moved): known to be in the queue, not unread
  const everSkipped = new Set<string>();
  let plan: OrderedRedrivePlan;
  for (;;) {
    held = await receiveMessages(sqs, deadLetterQueueUrl, Math.max(1, limit - done.size));
    skipped = new Set<string>();
    for (const message of held) {
      byId.set(message.messageId, message);
      if (!firstRead.has(message.messageId)) firstRead.set(message.messageId, firstRead.size);
      const letter = request.select(message);
      if (letter === undefined) {
        skipped.add(message.messageId);
        everSkipped.add(message.messageId);
      }
      else {
        const sentAt = sentWhen.get(eventKey(letter.body) ?? '');
        if (sentAt !== undefined && firstRead.get(message.messageId)! >= sentAt) returned.add(message.messageId);
        else letters.set(message.messageId, letter);
      }
    }
    // the letters deleted as duplicates last: a letter of the same event still in the queue (kept, or moved to the back
    // under a new id) comes first in the plan, so it is never taken for a copy of a letter deleted already (review ro14, RO14-1)
    for (const id of deleted) {
      const letter = letters.get(id);
      if (letter === undefined) continue;
      letters.delete(id);
      letters.set(id, letter);
    }
    plan = await request.plan([...letters.values()]);
    if (request.sendTo === undefined) break;
    const holding = new Set(held.map((message) => message.messageId));
    const toDelete = provenDuplicates(plan).filter((letter) => holding.has(letter.id) && !done.has(letter.id));
    // per aggregate, the ready letters held now up to the first one not held (moved to the back, not read again yet):
    // one after it sent now would reach the consumer before it (review ro13, RO13-8)
    const stopped = new Set<string>();
    const toSend = plan.ready.filter((letter) => {
      if (done.has(letter.id) || stopped.has(letter.aggregateId)) return false;
      if (holding.has(letter.id)) return true;
      stopped.add(letter.aggregateId);
      return false;
    });
    for (const letter of toSend) {
      const message = byId.get(letter.id)!;
      // per receive of the letter: an SDK retry is dropped, a rerun's send after a crash before the delete is not
      await sendOrdered(sqs, request.sendTo, { body: message.body, aggregateId: letter.aggregateId, deduplicationId: sendDeduplicationId(message), messageAttributes: attributesLeavingTheQueue(message) });
      await sqs.send(new DeleteMessageCommand({ QueueUrl: message.queueUrl, ReceiptHandle: message.receiptHandle }));
      sent.push(letter.id);
      done.add(letter.id);
      const key = eventKey(message.body);
      if (key !== undefined && !sentWhen.has(key)) sentWhen.set(key, firstRead.size);
    }
    for (const letter of toDelete) {
      const message = byId.get(letter.id)!;
      await sqs.send(new DeleteMessageCommand({ QueueUrl: message.queueUrl, ReceiptHandle: message.receiptHandle }));
      deleted.push(letter.id);
      done.add(letter.id);
    }
    held = held.filter((message) => !done.has(message.messageId));
    // a letter held now that the run has not moved to the back yet (read in an earlier round that sent something, it
    // was released in front of its group and hides the same letters again: review of the ordered model, seed -353768204);
    // a selected one only: those not selected are never moved, and would make every round fresh (review ro15, RO15-2)
    const fresh = held.some((message) => (letters.has(message.messageId) || returned.has(message.messageId)) && !movedCopies.has(message.messageId));
    // nothing changed while letters are unread: the letters kept may hide them (an aggregate's next event behind ten
    // that wait for it: review ro13, RO13-8). Moved to the back of their groups, the next read returns what they hid;
    // only while each round reads a letter the run had not read (every letter is read, none is moved twice in vain)
    if (toSend.length + toDelete.length === 0 && done.size + held.length < limit && fresh && (await unreadOf(sqs, deadLetterQueueUrl, letters, held, done, returned, everSkipped)) > 0) {
      await moveKeptToBack(held);
      held = [];
      continue;
    }
    // nothing changed: a read again would return the same letters; or the run read as much as it may
    if (toSend.length + toDelete.length === 0 || done.size + held.length >= limit) break;
    // the letters kept go back in front of their groups, and the groups' next letters come after them
    await releaseMessages(sqs, held);
  }
  // the queue's counts less the letters the run read that are still there and not held (released, or moved to the back)
  const counts = lessKnown(await queueCounts(sqs, deadLetterQueueUrl), knownInQueue(letters, held, done, returned, everSkipped).size - held.length);
  const unread = Math.max(0, counts.visible + counts.inFlight + counts.delayed - held.length);
  return { plan, byId, sent, deleted, held, returned: [...returned], skipped: skipped.size, unread };

  /** Sends the letters kept (not another subscriber's: released) to the back of their groups, each under its new id. */
  async function moveKeptToBack(round: readonly QueueMessage[]): Promise<void> {
    const kept = round.filter((message) => letters.has(message.messageId) || returned.has(message.messageId));
    await releaseMessages(sqs, round.filter((message) => !kept.includes(message)));
    for (const message of kept) {
      const copy = await moveToBack(sqs, message, message.attributes.MessageGroupId ?? groupOf(message.body) ?? message.messageId, (id) => firstRead.has(id) || done.has(id));
      movedCopies.add(copy.messageId);
      byId.delete(message.messageId);
      byId.set(copy.messageId, copy);
      firstRead.set(copy.messageId, firstRead.get(message.messageId)!);
      if (returned.delete(message.messageId)) returned.add(copy.messageId);
      if (letters.delete(message.messageId)) {
        const letter = request.select(copy);
        if (letter !== undefined) letters.set(copy.messageId, letter);
      }
    }
  }
}

/**
 * The message ids of the letters the run read that are still in the queue: held now, released, moved to the back (not
 * sent or deleted), or not selected (`skipped`: left where they are, review ro15, RO15-2).
 */
function knownInQueue(
  letters: ReadonlyMap<string, OrderedDeadLetter>,
  held: readonly QueueMessage[],
  done: ReadonlySet<string>,
  returned: ReadonlySet<string>,
  skipped: ReadonlySet<string>,
): Set<string> {
  const known = new Set([...held.map((message) => message.messageId), ...returned, ...skipped]);
  for (const id of letters.keys()) if (!done.has(id)) known.add(id);
  return known;
}

/** Letters of the queue the run did not read (see {@link knownInQueue}). */
async function unreadOf(
  sqs: SQSClient,
  queueUrl: string,
  letters: ReadonlyMap<string, OrderedDeadLetter>,
  held: readonly QueueMessage[],
  done: ReadonlySet<string>,
  returned: ReadonlySet<string>,
  skipped: ReadonlySet<string>,
): Promise<number> {
  const counts = await queueCounts(sqs, queueUrl);
  return Math.max(0, counts.visible + counts.inFlight + counts.delayed - knownInQueue(letters, held, done, returned, skipped).size);
}

/** `counts` less `known` visible letters (read by the run, not held now). */
function lessKnown(counts: QueueCounts, known: number): QueueCounts {
  return { ...counts, visible: Math.max(0, counts.visible - known) };
}

/** The aggregate of a letter's body (its message group), when it is an ordered event. */
function groupOf(body: string): string | undefined {
  try {
    return orderedPositionOf(body).aggregateId;
  } catch {
    return undefined;
  }
}

/** The event a letter holds: its aggregate and event id (or sequence, without an id); undefined when not an ordered event. */
function eventKey(body: string): string | undefined {
  try {
    const { aggregateId, sequence } = orderedPositionOf(body);
    const id = (JSON.parse(body) as { id?: unknown }).id;
    return JSON.stringify([aggregateId, typeof id === 'string' ? id : `#${sequence}`]);
  } catch {
    return undefined;
  }
}
