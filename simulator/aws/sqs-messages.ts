/**
 * The shapes of what goes into and comes out of a simulated SQS queue (queue.ts): its address, a message's attributes,
 * a send and its answer, a received and a stored message. Shared with the SQS endpoint, the topic and the event source
 * mapping, which speak to a queue.
 */
import type { MessageOrigin } from '../observation/observer';

/** Where a queue is: what `Ref` (URL), `QueueName` and `Arn` resolve to locally. */
export interface QueueAddress {
  readonly name: string;
  readonly url: string;
  readonly arn: string;
}

/** An SQS message attribute, as the SQS API carries it. */
export interface SqsMessageAttribute {
  /** `String`, `Number` or `Binary`, optionally with a custom suffix (`Number.float`). */
  readonly DataType: string;
  readonly StringValue?: string;
  /** base64 */
  readonly BinaryValue?: string;
}

/** A message as one ReceiveMessage returns it. */
export interface ReceivedMessage {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  readonly md5OfBody: string;
  /** ApproximateReceiveCount, SentTimestamp, SenderId, ApproximateFirstReceiveTimestamp (+ MessageGroupId, MessageDeduplicationId, SequenceNumber on FIFO) */
  readonly attributes: Readonly<Record<string, string>>;
  readonly messageAttributes: Readonly<Record<string, SqsMessageAttribute>>;
  readonly receiveCount: number;
  readonly origin: MessageOrigin;
}

/** A message still on a queue, visible or in flight. */
export interface StoredMessage {
  readonly messageId: string;
  readonly body: string;
  readonly messageAttributes: Readonly<Record<string, SqsMessageAttribute>>;
  readonly receiveCount: number;
  /** Enqueue time, virtual epoch ms (on a standard dead-letter queue: the time it was sent to the source queue). */
  readonly sentAt: number;
  readonly origin: MessageOrigin;
}

/** What {@link SimulatedQueue.send} takes. */
export interface SendMessageInput {
  readonly body: string;
  readonly messageAttributes?: Readonly<Record<string, SqsMessageAttribute>>;
  /** Required on a FIFO queue. */
  readonly messageGroupId?: string;
  /** FIFO only. @default the SHA-256 of the body, as content-based deduplication would (the model does not say whether the queue enables it) */
  readonly messageDeduplicationId?: string;
  readonly origin: MessageOrigin;
}

/** What SendMessage answers. */
export interface SendMessageResult {
  readonly messageId: string;
  readonly md5OfBody: string;
  /** Only when the message has attributes. */
  readonly md5OfMessageAttributes?: string;
  /** FIFO only. */
  readonly sequenceNumber?: string;
}

/** `SenderId` of every simulated message: the local account id (real SQS gives the sender's account or IAM id). */
export const SIMULATED_SENDER_ID = '000000000000';
