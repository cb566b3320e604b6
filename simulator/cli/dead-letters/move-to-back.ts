/**
 * Moving a letter of a FIFO dead-letter queue to the back of its message group (review ro13, RO13-8). SQS returns no
 * message of a group while another of it is in flight, so the letters a read keeps (they wait behind a gap, or are
 * left for the operator) hide the group's later letters, however often it reads. Sent again to the same queue (same
 * body, message attributes and group), then deleted, a kept letter goes behind them, and the next read returns what
 * it hid: nothing is ever only in flight (a crash between the two leaves the letter twice, which the plan answers as a
 * copy; the deduplication id, derived from the original's message id, lets SQS drop a second move of it within its
 * 5-minute deduplication interval). What SQS sets and a send can not (when it was first sent, the queue SQS moved it
 * from) is kept in the message attributes below, so the letter reads the same after the move.
 * Real SQS only: SendMessage, DeleteMessage.
 */
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

/** When the letter first reached the queue (epoch ms), through any moves to the back; undefined when unknown. */
export function firstSentAt(message: QueueMessage): number | undefined {
  const carried = Number(message.messageAttributes[MOVED_LETTER_ATTRIBUTE.SENT_TIMESTAMP]?.StringValue);
  const sent = Number(message.attributes.SentTimestamp);
  return Number.isFinite(carried) && carried > 0 ? carried : Number.isFinite(sent) && sent > 0 ? sent : undefined;
}

/** The queue SQS moved the letter from after maxReceiveCount, through any moves to the back; undefined when none. */
export function deadLetterSourceArnOf(message: QueueMessage): string | undefined {
  return message.attributes.DeadLetterQueueSourceArn ?? message.messageAttributes[MOVED_LETTER_ATTRIBUTE.SOURCE_ARN]?.StringValue;
}

/**
 * Sends `message` again to its queue, behind the rest of its group (`groupId`: its `MessageGroupId`, or the aggregate),
 * then deletes it. Returns the copy's message id and the message as it now stands (not held: no receipt handle).
 */
export async function moveToBack(client: SQSClient, message: QueueMessage, groupId: string): Promise<QueueMessage> {
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
  const messageId = await sendOrdered(client, message.queueUrl, { body: message.body, aggregateId: groupId, deduplicationId: `moved-${message.messageId}`, messageAttributes: attributes });
  if (messageId === undefined) throw new Error(`SQS did not say the message id of the letter ${message.messageId} sent to the back of its group`);
  await client.send(new DeleteMessageCommand({ QueueUrl: message.queueUrl, ReceiptHandle: message.receiptHandle }));
  return { queueUrl: message.queueUrl, messageId, receiptHandle: '', body: message.body, attributes: { ...(sentAt === undefined ? {} : { SentTimestamp: String(sentAt) }) }, messageAttributes: attributes };
}
