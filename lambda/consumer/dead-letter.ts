/**
 * Sending a message that retrying cannot help straight to the dead-letter queue, with its reason. `@aws-sdk/client-sqs`
 * is loaded on the first send, not at import: this module is on every consumer's cold start, and most invocations never
 * dead-letter anything.
 */
import { createHash } from 'node:crypto';
import type { MessageAttributeValue, SQSClient } from '@aws-sdk/client-sqs';

/** A message to dead-letter, with why. */
export interface DeadLetter {
  /** The original SQS message body, unchanged, so it can be redriven as is. */
  readonly body: string;
  /** Name of the error that made the message permanent, e.g. `MalformedEnvelopeError` or `PermanentError`. */
  readonly errorName: string;
  readonly errorMessage: string;
  readonly subscriber: string;
  /** The SQS message id of the message on the consumer queue. */
  readonly sourceMessageId: string;
  /** How often SQS had delivered the message, when Lambda said. */
  readonly approximateReceiveCount?: number;
  /** The envelope id, when the body parsed. */
  readonly eventId?: string;
  /**
   * The message's group on its FIFO queue (an ordered subscriber's: the aggregate), kept as the dead letter's group on
   * a FIFO dead-letter queue, so the aggregate's dead letters stay in its order there.
   * @default none: on a FIFO dead-letter queue the event id is the group (else the source message id)
   */
  readonly messageGroupId?: string;
  /**
   * The receipt handle of the receive that dead-letters the message: what makes the dead letter's FIFO deduplication
   * id one per receive (`fifoDeduplicationId`).
   * @default none: the receive count stands for the receive
   */
  readonly receiptHandle?: string;
}

/** Sends dead letters somewhere durable. Throws when it could not; the consumer then leaves the message on the queue. */
export interface DeadLetterPublisher {
  publish(deadLetter: DeadLetter): Promise<void>;
}

/** Names of the SQS message attributes that carry a dead letter's reason. */
export const DEAD_LETTER_ATTRIBUTE = {
  ERROR_NAME: 'iefErrorName',
  ERROR_MESSAGE: 'iefErrorMessage',
  SUBSCRIBER: 'iefSubscriber',
  SOURCE_MESSAGE_ID: 'iefSourceMessageId',
  APPROXIMATE_RECEIVE_COUNT: 'iefApproximateReceiveCount',
  EVENT_ID: 'iefEventId',
} as const;

/**
 * Longest string attribute value kept (the error message, and any other), in characters; attributes count towards the
 * queue's message size limit together with the unchanged body.
 */
export const MAX_ERROR_MESSAGE_CHARACTERS = 1024;

/**
 * What SQS refuses in a message attribute: characters outside XML 1.0's (`#x9 | #xA | #xD | #x20-#xD7FF |
 * #xE000-#xFFFD | #x10000-#x10FFFF`), so other control characters, U+FFFE and U+FFFF, and unpaired surrogates.
 */
const NOT_ALLOWED_BY_SQS = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Cuts `value` to the bound, never between the two halves of a surrogate pair. */
function truncate(value: string): string {
  if (value.length <= MAX_ERROR_MESSAGE_CHARACTERS) return value;
  let end = MAX_ERROR_MESSAGE_CHARACTERS - 1;
  const last = value.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1; // a high surrogate whose partner would be cut off
  return `${value.slice(0, end)}…`;
}

/** A String attribute SQS accepts: its disallowed characters replaced by U+FFFD, bounded, and never empty. */
function text(value: string, empty = '(empty)'): MessageAttributeValue {
  const allowed = truncate(value.replace(NOT_ALLOWED_BY_SQS, '\uFFFD'));
  return { DataType: 'String', StringValue: allowed === '' ? empty : allowed };
}

/** The SQS message attributes of a dead letter. */
export function deadLetterAttributes(deadLetter: DeadLetter): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {
    [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: text(deadLetter.errorName),
    [DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE]: text(deadLetter.errorMessage, '(no message)'),
    [DEAD_LETTER_ATTRIBUTE.SUBSCRIBER]: text(deadLetter.subscriber),
    [DEAD_LETTER_ATTRIBUTE.SOURCE_MESSAGE_ID]: text(deadLetter.sourceMessageId),
  };
  if (deadLetter.approximateReceiveCount !== undefined) {
    attributes[DEAD_LETTER_ATTRIBUTE.APPROXIMATE_RECEIVE_COUNT] = { DataType: 'Number', StringValue: String(deadLetter.approximateReceiveCount) };
  }
  if (deadLetter.eventId !== undefined) attributes[DEAD_LETTER_ATTRIBUTE.EVENT_ID] = text(deadLetter.eventId);
  return attributes;
}

/** The suffix of every FIFO queue's name (SQS refuses a FIFO queue named otherwise). */
const FIFO_QUEUE_SUFFIX = '.fifo';

/** Whether the queue at `queueUrl` is a FIFO queue: its name, the URL's last segment, ends with `.fifo`. */
export function isFifoQueueUrl(queueUrl: string): boolean {
  return (queueUrl.split('?')[0]!.split('/').pop() ?? '').endsWith(FIFO_QUEUE_SUFFIX);
}

/**
 * The `MessageDeduplicationId` of a dead letter on a FIFO dead-letter queue (which has no content-based deduplication:
 * SQS refuses a send without one): the SHA-256 (hex, 64 characters) of the event id, the source message id and the
 * receive (its receipt handle, else its receive count). One per receive, deterministic within it: the SDK's retries of
 * one send (an answer lost) carry the same id, so SQS keeps one dead letter. Not the event id alone: SQS drops a
 * second message with a deduplication id it saw in the last 5 minutes, even one deleted since, so an event redriven
 * and dead-lettered again within 5 minutes would be accepted, not enqueued, and its source message deleted: lost. A
 * consumer that dies between the send and the delete sends a second dead letter at its next receive (a copy, which the
 * inbox or the fence recognises when both are redriven), never none.
 */
export function fifoDeduplicationId(deadLetter: DeadLetter): string {
  const receive = deadLetter.receiptHandle ?? `receive ${deadLetter.approximateReceiveCount ?? 'unknown'}`;
  return createHash('sha256').update(JSON.stringify([deadLetter.eventId ?? null, deadLetter.sourceMessageId, receive])).digest('hex');
}

/** What a FIFO dead-letter queue needs on a send: the group (the source's, else the event id) and a deduplication id. */
function fifoParameters(deadLetter: DeadLetter): { MessageGroupId: string; MessageDeduplicationId: string } {
  const group = deadLetter.messageGroupId ?? deadLetter.eventId ?? deadLetter.sourceMessageId;
  return { MessageGroupId: group, MessageDeduplicationId: fifoDeduplicationId(deadLetter) };
}

/** Options of {@link SqsDeadLetterPublisher}. */
export interface SqsDeadLetterPublisherOptions {
  /** URL of the dead-letter queue. */
  readonly queueUrl: string;
  /**
   * @default a client created on first use the way the runtime creates its DynamoDB client: region, credentials and
   *   endpoint from the environment (`AWS_ENDPOINT_URL_SQS` honoured), sending to that endpoint rather than to the
   *   queue URL's host
   */
  readonly client?: SQSClient;
}

/**
 * Publishes dead letters with SQS SendMessage: the original body, and the reason as message attributes. To a FIFO queue
 * (an ordered subscriber's dead-letter queue) with the source message's group (its aggregate) and a deduplication id
 * per receive (`fifoDeduplicationId`), which SQS requires of every send to a FIFO queue without content-based
 * deduplication.
 */
export class SqsDeadLetterPublisher implements DeadLetterPublisher {
  private client?: SQSClient;

  public constructor(private readonly options: SqsDeadLetterPublisherOptions) {
    this.client = options.client;
  }

  public async publish(deadLetter: DeadLetter): Promise<void> {
    const { SendMessageCommand, SQSClient: Client } = await import('@aws-sdk/client-sqs');
    // the queue URL names the queue; the endpoint comes from the environment, as for every other client of the runtime
    // (by default the SDK would send to the URL's host instead, ignoring AWS_ENDPOINT_URL_SQS, and warn on every send)
    this.client ??= new Client({ useQueueUrlAsEndpoint: false });
    await this.client.send(
      new SendMessageCommand({
        QueueUrl: this.options.queueUrl,
        MessageBody: deadLetter.body,
        MessageAttributes: deadLetterAttributes(deadLetter),
        ...(isFifoQueueUrl(this.options.queueUrl) ? fifoParameters(deadLetter) : {}),
      }),
    );
  }
}
