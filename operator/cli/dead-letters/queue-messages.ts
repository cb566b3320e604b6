/**
 * Reading a dead-letter queue without consuming it: receive every message (each hidden for a while so a receive does
 * not return it twice), then release what was not moved (visible again at once). Real SQS only: ReceiveMessage,
 * ChangeMessageVisibility, DeleteMessage, SendMessage, GetQueueAttributes, StartMessageMoveTask, ListMessageMoveTasks.
 */
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type MessageAttributeValue,
  type SQSClient,
} from '@aws-sdk/client-sqs';

/** A message received from a queue, with the receipt handle that releases or deletes it. */
export interface QueueMessage {
  readonly queueUrl: string;
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  /** System attributes: `SentTimestamp`, `ApproximateReceiveCount`, `DeadLetterQueueSourceArn`, ... */
  readonly attributes: Readonly<Record<string, string>>;
  readonly messageAttributes: Readonly<Record<string, MessageAttributeValue>>;
}

/** How long a message read for a listing stays hidden: long enough for one command to read the queue and act. */
export const READ_VISIBILITY_TIMEOUT_SECONDS = 120;

/** Most messages read from one queue by default. */
export const DEFAULT_READ_LIMIT = 1000;

/**
 * Receives up to `limit` messages of the queue, each hidden for {@link READ_VISIBILITY_TIMEOUT_SECONDS}; stops at the
 * first receive that brings nothing new. Pass them to {@link releaseMessages} (or delete them) when done.
 */
export async function receiveMessages(client: SQSClient, queueUrl: string, limit = DEFAULT_READ_LIMIT): Promise<QueueMessage[]> {
  const messages = new Map<string, QueueMessage>();
  while (messages.size < limit) {
    const response = await client.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: Math.min(10, limit - messages.size),
        VisibilityTimeout: READ_VISIBILITY_TIMEOUT_SECONDS,
        // long polling asks every SQS server, so an empty answer means an empty queue (short polling samples a few)
        WaitTimeSeconds: 1,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    const batch = response.Messages ?? [];
    const before = messages.size;
    for (const message of batch) {
      if (message.MessageId === undefined || message.ReceiptHandle === undefined || messages.has(message.MessageId)) continue;
      messages.set(message.MessageId, {
        queueUrl,
        messageId: message.MessageId,
        receiptHandle: message.ReceiptHandle,
        body: message.Body ?? '',
        attributes: { ...(message.Attributes ?? {}) },
        messageAttributes: { ...(message.MessageAttributes ?? {}) },
      });
    }
    if (messages.size === before) break;
  }
  return [...messages.values()];
}

/** Makes `messages` visible again at once. A message no longer in flight (deleted, or its hiding ran out) is skipped. */
export async function releaseMessages(client: SQSClient, messages: readonly QueueMessage[]): Promise<void> {
  for (const message of messages) {
    try {
      await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: message.queueUrl, ReceiptHandle: message.receiptHandle, VisibilityTimeout: 0 }));
    } catch (error) {
      if (!(error instanceof Error) || !/MessageNotInflight|ReceiptHandleIsInvalid/.test(error.name)) throw error;
    }
  }
}

/**
 * Sends a copy of `message` (body and message attributes) to `destinationUrl`, then deletes it from its queue: a
 * crash between the two leaves the message in both, which the inbox answers as a duplicate; never in neither.
 */
export async function moveMessage(client: SQSClient, message: QueueMessage, destinationUrl: string): Promise<string | undefined> {
  const sent = await client.send(
    new SendMessageCommand({
      QueueUrl: destinationUrl,
      MessageBody: message.body,
      ...(Object.keys(message.messageAttributes).length === 0 ? {} : { MessageAttributes: { ...message.messageAttributes } }),
    }),
  );
  await client.send(new DeleteMessageCommand({ QueueUrl: message.queueUrl, ReceiptHandle: message.receiptHandle }));
  return sent.MessageId;
}

/** A queue's messages as its counts say: visible, in flight (received, not deleted) and delayed (SQS's approximate figures). */
export interface QueueCounts {
  readonly visible: number;
  readonly inFlight: number;
  readonly delayed: number;
}

/** The queue's counts (GetQueueAttributes ApproximateNumberOfMessages, ...NotVisible, ...Delayed). */
export async function queueCounts(client: SQSClient, queueUrl: string): Promise<QueueCounts> {
  const response = await client.send(
    new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'] }),
  );
  const attributes = (response.Attributes ?? {}) as Record<string, string | undefined>;
  return {
    visible: Number(attributes.ApproximateNumberOfMessages ?? 0),
    inFlight: Number(attributes.ApproximateNumberOfMessagesNotVisible ?? 0),
    delayed: Number(attributes.ApproximateNumberOfMessagesDelayed ?? 0),
  };
}

/** The queue's ARN. */
export async function queueArnOf(client: SQSClient, queueUrl: string): Promise<string> {
  const response = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  const arn = response.Attributes?.QueueArn;
  if (arn === undefined) throw new Error(`queue ${queueUrl} did not say its ARN`);
  return arn;
}

/**
 * Where the subscriber queue `queueUrl` sends its dead letters (its RedrivePolicy's `deadLetterTargetArn`; undefined:
 * it names none) and the ARN of `deadLetterQueueUrl`, for a check that the one is the other's. Throws when either can
 * not be read.
 */
export async function redriveTargetAndArn(client: SQSClient, queueUrl: string, deadLetterQueueUrl: string): Promise<{ target: string | undefined; deadLetterArn: string }> {
  const attributes = (await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['RedrivePolicy'] }))).Attributes ?? {};
  const target = attributes.RedrivePolicy === undefined ? undefined : (JSON.parse(attributes.RedrivePolicy) as { deadLetterTargetArn?: string }).deadLetterTargetArn;
  return { target, deadLetterArn: await queueArnOf(client, deadLetterQueueUrl) };
}

