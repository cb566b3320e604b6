/** Sending a message that retrying cannot help straight to the dead-letter queue, with its reason. */
import { SendMessageCommand, SQSClient, type MessageAttributeValue } from '@aws-sdk/client-sqs';

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

/** Longest error message kept in an attribute, in characters; attributes count towards the 256 KiB message limit. */
export const MAX_ERROR_MESSAGE_CHARACTERS = 1024;

const text = (value: string): MessageAttributeValue => ({ DataType: 'String', StringValue: value });

function truncate(value: string): string {
  return value.length <= MAX_ERROR_MESSAGE_CHARACTERS ? value : `${value.slice(0, MAX_ERROR_MESSAGE_CHARACTERS - 1)}…`;
}

/** The SQS message attributes of a dead letter. */
export function deadLetterAttributes(deadLetter: DeadLetter): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {
    [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: text(deadLetter.errorName),
    [DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE]: text(truncate(deadLetter.errorMessage || '(no message)')),
    [DEAD_LETTER_ATTRIBUTE.SUBSCRIBER]: text(deadLetter.subscriber),
    [DEAD_LETTER_ATTRIBUTE.SOURCE_MESSAGE_ID]: text(deadLetter.sourceMessageId),
  };
  if (deadLetter.approximateReceiveCount !== undefined) {
    attributes[DEAD_LETTER_ATTRIBUTE.APPROXIMATE_RECEIVE_COUNT] = { DataType: 'Number', StringValue: String(deadLetter.approximateReceiveCount) };
  }
  if (deadLetter.eventId !== undefined) attributes[DEAD_LETTER_ATTRIBUTE.EVENT_ID] = text(deadLetter.eventId);
  return attributes;
}

/** Options of {@link SqsDeadLetterPublisher}. */
export interface SqsDeadLetterPublisherOptions {
  /** URL of the dead-letter queue. */
  readonly queueUrl: string;
  /** @default a client created from the Lambda environment on first use */
  readonly client?: SQSClient;
}

/** Publishes dead letters with SQS SendMessage: the original body, and the reason as message attributes. */
export class SqsDeadLetterPublisher implements DeadLetterPublisher {
  private client?: SQSClient;

  public constructor(private readonly options: SqsDeadLetterPublisherOptions) {
    this.client = options.client;
  }

  public async publish(deadLetter: DeadLetter): Promise<void> {
    // created lazily: most invocations never dead-letter anything
    this.client ??= new SQSClient({});
    await this.client.send(
      new SendMessageCommand({ QueueUrl: this.options.queueUrl, MessageBody: deadLetter.body, MessageAttributes: deadLetterAttributes(deadLetter) }),
    );
  }
}
