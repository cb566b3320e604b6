/**
 * The event Lambda passes to a function an SQS event source mapping invokes, built from received messages, in the
 * shape of https://docs.aws.amazon.com/lambda/latest/dg/with-sqs.html ("Example standard queue message event"):
 * message attributes use Lambda's camel-case shape (`stringValue`, `binaryValue`, `stringListValues`,
 * `binaryListValues`, `dataType`), not the SQS API's.
 */
import type { ReceivedMessage, SqsMessageAttribute } from '../aws/sqs-messages';
import { md5OfMessageAttributes } from '../aws/sqs-md5';

/** A message attribute as Lambda delivers it. */
export interface LambdaSqsMessageAttribute {
  readonly stringValue?: string;
  /** base64 */
  readonly binaryValue?: string;
  /** Always empty: SQS reserves the list types. */
  readonly stringListValues: readonly string[];
  readonly binaryListValues: readonly string[];
  readonly dataType: string;
}

/** One record of the event. */
export interface LambdaSqsRecord {
  readonly messageId: string;
  readonly receiptHandle: string;
  readonly body: string;
  /** `ApproximateReceiveCount`, `SentTimestamp`, `SenderId`, `ApproximateFirstReceiveTimestamp` (+ FIFO ones). */
  readonly attributes: Readonly<Record<string, string>>;
  readonly messageAttributes: Readonly<Record<string, LambdaSqsMessageAttribute>>;
  /** Only when the message has attributes. */
  readonly md5OfMessageAttributes?: string;
  readonly md5OfBody: string;
  readonly eventSource: 'aws:sqs';
  readonly eventSourceARN: string;
  readonly awsRegion: string;
}

/** The event: `{ Records }`. */
export interface LambdaSqsEvent {
  readonly Records: readonly LambdaSqsRecord[];
}

/** The record of one received message of the queue `queueArn`. */
export function lambdaSqsRecord(message: ReceivedMessage, queueArn: string, region: string): LambdaSqsRecord {
  const md5OfAttributes = md5OfMessageAttributes(message.messageAttributes);
  return {
    messageId: message.messageId,
    receiptHandle: message.receiptHandle,
    body: message.body,
    attributes: { ...message.attributes, ApproximateReceiveCount: String(message.receiveCount) },
    messageAttributes: Object.fromEntries(Object.entries(message.messageAttributes).map(([name, attribute]) => [name, lambdaMessageAttribute(attribute)])),
    ...(md5OfAttributes === undefined ? {} : { md5OfMessageAttributes: md5OfAttributes }),
    md5OfBody: message.md5OfBody,
    eventSource: 'aws:sqs',
    eventSourceARN: queueArn,
    awsRegion: region,
  };
}

/** The event for a batch of received messages, in order. */
export function lambdaSqsEvent(messages: readonly ReceivedMessage[], queueArn: string, region: string): LambdaSqsEvent {
  return { Records: messages.map((message) => lambdaSqsRecord(message, queueArn, region)) };
}

function lambdaMessageAttribute(attribute: SqsMessageAttribute): LambdaSqsMessageAttribute {
  return {
    ...(attribute.StringValue === undefined ? {} : { stringValue: attribute.StringValue }),
    ...(attribute.BinaryValue === undefined ? {} : { binaryValue: attribute.BinaryValue }),
    stringListValues: [],
    binaryListValues: [],
    dataType: attribute.DataType,
  };
}
