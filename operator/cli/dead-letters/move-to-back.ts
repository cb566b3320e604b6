/**
 * Moving a letter of a FIFO dead-letter queue to the back of its message group (review ro13, RO13-8). SQS returns no
 * message of a group while another of it is in flight, so the letters a read keeps (they wait behind a gap, or are
 * left for the operator) hide the group's later letters, however often it reads. Sent again to the same queue (same
 * body, message attributes and group), then deleted, a kept letter goes behind them, and the next read returns what
 * it hid: nothing is ever only in flight (a crash between the two leaves the letter twice, which the plan answers as a
 * copy). The deduplication id is the original's message id and a digest of this receipt of it: an SDK retry of the one
 * send is dropped by SQS, while a move of the same letter received again (a rerun after a crash between the send and
 * the delete, within SQS's 5-minute deduplication interval) is a new message, not dropped as a resend of the first move
 * whose copy the rerun may have deleted (review ro14, RO14-1). The original is deleted only when SQS answers with a
 * message id the run never saw. What SQS sets and a send can not (when it was first sent, the queue SQS moved it
 * from) is kept in the message attributes below, so the letter reads the same after the move.
 * Real SQS only: SendMessage, DeleteMessage.
 */
import { createHash } from 'node:crypto';
import { DeleteMessageCommand, type MessageAttributeValue, type SQSClient } from '@aws-sdk/client-sqs';
import { sendOrdered } from './ordered-sends';
import type { QueueMessage } from './queue-messages';

/** The message attributes a letter moved to the back keeps what SQS said of the original in. */
export const MOVED_LETTER_ATTRIBUTE = {
  /** The original's `SentTimestamp` (epoch ms): when the letter first reached the dead-letter queue. */
  SENT_TIMESTAMP: 'iefDeadLetterSentTimestamp',
  /** The original's `DeadLetterQueueSourceArn`: SQS moved it here after maxReceiveCount, from this queue. */
  SOURCE_ARN: 'iefDeadLetterQueueSourceArn',
} as const;

/** The most message attributes SQS takes on one message. */
const MAX_MESSAGE_ATTRIBUTES = 10;

/**
 * The message attributes of `message` to send out of the dead-letter queue (to the subscriber's queue): all but the
 * move's bookkeeping ({@link MOVED_LETTER_ATTRIBUTE}), which speaks of this dead-lettering only; dead-lettered again,
 * the message reads when it came back, not when it first came (review ro14, RO14-3).
 */
export function attributesLeavingTheQueue(message: QueueMessage): Record<string, MessageAttributeValue> {
  const bookkeeping = new Set<string>(Object.values(MOVED_LETTER_ATTRIBUTE));
  return Object.fromEntries(Object.entries(message.messageAttributes).filter(([name]) => !bookkeeping.has(name)));
}

/**
 * When the letter first reached the queue (epoch ms), through any moves to the back; undefined when unknown. A message
 * SQS moved here itself (`DeadLetterQueueSourceArn` set) was never moved to the back: its own `SentTimestamp` counts.
 */
export function firstSentAt(message: QueueMessage): number | undefined {
  const carried = message.attributes.DeadLetterQueueSourceArn !== undefined ? Number.NaN : Number(message.messageAttributes[MOVED_LETTER_ATTRIBUTE.SENT_TIMESTAMP]?.StringValue);
  const sent = Number(message.attributes.SentTimestamp);
  return Number.isFinite(carried) && carried > 0 ? carried : Number.isFinite(sent) && sent > 0 ? sent : undefined;
}

/** The queue SQS moved the letter from after maxReceiveCount, through any moves to the back; undefined when none. */
export function deadLetterSourceArnOf(message: QueueMessage): string | undefined {
  return message.attributes.DeadLetterQueueSourceArn ?? message.messageAttributes[MOVED_LETTER_ATTRIBUTE.SOURCE_ARN]?.StringValue;
}

/**
 * The deduplication id of moving `message` to the back: its message id and a digest of its receipt handle, which SQS
 * gives anew on every receive. The same for every SDK retry of one send, another for each receive of the letter.
 */
export function moveDeduplicationId(message: QueueMessage): string {
  return `moved-${message.messageId}-${receiptDigest(message)}`;
}

/**
 * The deduplication id of sending `message` out of the dead-letter queue to the subscriber's queue (a redrive), per
 * receive as {@link moveDeduplicationId} is: an SDK retry of the one send is dropped by SQS, while a rerun's send of the
 * letter received again (the run died between the send and the delete, and the rerun comes within SQS's 5-minute
 * deduplication interval) is a new message, not dropped as a resend of the first, whose copy the consumer may have
 * dead-lettered again and the rerun deletes as a copy (review ro15, RO15-1). A second copy in the subscriber's queue is
 * what the fence answers.
 */
export function sendDeduplicationId(message: QueueMessage): string {
  return `sent-${message.messageId}-${receiptDigest(message)}`;
}

/** A digest of the receipt handle of `message`, which SQS gives anew on every receive (fits a 128-character deduplication id). */
function receiptDigest(message: QueueMessage): string {
  return createHash('sha256').update(message.receiptHandle).digest('hex').slice(0, 32);
}

/**
 * Sends `message` again to its queue, behind the rest of its group (`groupId`: its `MessageGroupId`, or the aggregate),
 * then deletes it. Returns the copy's message id and the message as it now stands (not held: no receipt handle).
 * `known` says whether a message id is one the run has already seen (read, moved or deleted): SQS answering the send
 * with one of them (or the original's) dropped it as a resend, so the original is kept and the move fails.
 */
export async function moveToBack(client: SQSClient, message: QueueMessage, groupId: string, known: (messageId: string) => boolean = () => false): Promise<QueueMessage> {
  const attributes: Record<string, MessageAttributeValue> = { ...message.messageAttributes };
  const sentAt = firstSentAt(message);
  const sourceArn = deadLetterSourceArnOf(message);
  const carried: Array<[string, string]> = [
    ...(sentAt === undefined ? [] : [[MOVED_LETTER_ATTRIBUTE.SENT_TIMESTAMP, String(sentAt)] as [string, string]]),
    ...(sourceArn === undefined ? [] : [[MOVED_LETTER_ATTRIBUTE.SOURCE_ARN, sourceArn] as [string, string]]),
  ];
  for (const [name, value] of carried) {
    if (attributes[name] === undefined && Object.keys(attributes).length >= MAX_MESSAGE_ATTRIBUTES) continue;
    attributes[name] = { DataType: name === MOVED_LETTER_ATTRIBUTE.SENT_TIMESTAMP ? 'Number' : 'String', StringValue: value };
  }
  const messageId = await sendOrdered(client, message.queueUrl, { body: message.body, aggregateId: groupId, deduplicationId: moveDeduplicationId(message), messageAttributes: attributes });
  if (messageId === undefined) throw new Error(`SQS did not say the message id of the letter ${message.messageId} sent to the back of its group`);
  if (messageId === message.messageId || known(messageId)) throw new Error(droppedMoveLine(message.messageId, messageId));
  await client.send(new DeleteMessageCommand({ QueueUrl: message.queueUrl, ReceiptHandle: message.receiptHandle }));
  return { queueUrl: message.queueUrl, messageId, receiptHandle: '', body: message.body, attributes: { ...(sentAt === undefined ? {} : { SentTimestamp: String(sentAt) }) }, messageAttributes: attributes };
}

/** The reason a move is refused when SQS answered its send with a message id already known (the send was dropped). */
export function droppedMoveLine(original: string, answered: string): string {
  return `SQS answered the move of the letter ${original} to the back of its group with the message id ${answered}, one this run already knows: the send was dropped as a resend, so the letter was not deleted; run the redrive again`;
}
