/**
 * What an operator needs to know of one dead letter: which queue it is on, why it is there, which event it carries
 * and since when. Pure: reads a received message, calls nothing.
 */
import { DEAD_LETTER_ATTRIBUTE } from '../../../lambda/consumer/dead-letter';
import { parseEnvelope, type EventEnvelope } from '../../../lambda/envelope';
import type { QueueMessage } from './queue-messages';
import { deadLetterSourceArnOf, firstSentAt } from './move-to-back';

/** The three kinds of dead-letter queue of a flow. */
export type DeadLetterQueueKind =
  /** a subscriber queue's dead-letter queue: the runtime's dead letters (with `ief*` reason attributes) and SQS's redrive after maxReceiveCount */
  | 'queue'
  /** a subscription's dead-letter queue: what SNS could not deliver to the subscriber queue */
  | 'subscription'
  /** the relay's (pipe's) dead-letter queue: metadata of stream batches the pipe gave up on, not the events */
  | 'relay';

/** Reasons of dead letters that carry no `iefErrorName`. */
export const DEAD_LETTER_REASON = {
  /** SQS moved it after `maxReceiveCount` receives (the function failed or timed out that often). */
  MAX_RECEIVE_COUNT: 'MaxReceiveCountExceeded',
  /** SNS could not deliver it to the subscriber queue (queue policy, KMS key policy, a deleted queue). */
  SNS_DELIVERY_FAILED: 'SnsDeliveryFailed',
  /** The runtime blocked it for an operator (lease and multi-step). */
  BLOCKED: 'MessageBlockedError',
} as const;

/** Where a relay dead letter points in the stream. */
export interface RelayBatch {
  readonly condition?: string;
  readonly shardId?: string;
  readonly startSequenceNumber?: string;
  readonly endSequenceNumber?: string;
  readonly approximateArrivalOfFirstRecord?: string;
  readonly approximateArrivalOfLastRecord?: string;
  readonly batchSize?: number;
}

/** One dead letter, as listed and shown. */
export interface DeadLetterView {
  readonly queueKind: DeadLetterQueueKind;
  readonly queueUrl: string;
  readonly messageId: string;
  /**
   * Why it is on this queue now: `iefErrorName` of a dead letter the runtime sent, or one of the runtime's `DEAD_LETTER_REASON`,
   * or the pipe's condition for a relay dead letter.
   */
  readonly reason: string;
  /** `iefErrorMessage` of a dead letter the runtime sent. */
  readonly errorMessage?: string;
  /**
   * The runtime's reason of an earlier dead letter of this message, when SQS moved it here after maxReceiveCount: a
   * redrive (ours, or a message move task) sends a dead letter back with its `ief*` attributes, and SQS's own move keeps
   * them, but they say why it was dead-lettered before, not now.
   */
  readonly previousReason?: string;
  /** `iefErrorMessage` of that earlier dead letter. */
  readonly previousErrorMessage?: string;
  /** `iefSubscriber`: the subscriber whose consumer dead-lettered it. */
  readonly subscriber?: string;
  readonly eventId?: string;
  readonly eventType?: string;
  /** The envelope's `time` (ISO-8601). */
  readonly eventTime?: string;
  /** When it was sent to the queue it was first on (SQS keeps it through a standard queue's redrive), epoch ms. */
  readonly sentAtEpochMilliseconds?: number;
  /** The envelope, when the body is one. */
  readonly envelope?: EventEnvelope;
  /** Why the body is not an envelope (relay dead letters never are). */
  readonly envelopeError?: string;
  readonly relayBatch?: RelayBatch;
  /** Every message attribute, as text. */
  readonly attributes: Readonly<Record<string, string>>;
  readonly body: string;
}

function attributeText(message: QueueMessage): Record<string, string> {
  return Object.fromEntries(Object.entries(message.messageAttributes).map(([name, value]) => [name, value.StringValue ?? (value.BinaryValue === undefined ? '' : '(binary)')]));
}

function relayBatchOf(body: string): RelayBatch | undefined {
  try {
    const parsed = JSON.parse(body) as { requestContext?: { condition?: string }; DDBStreamBatchInfo?: Omit<RelayBatch, 'condition'> };
    if (parsed.DDBStreamBatchInfo === undefined) return undefined;
    return { ...(parsed.requestContext?.condition !== undefined ? { condition: parsed.requestContext.condition } : {}), ...parsed.DDBStreamBatchInfo };
  } catch {
    return undefined;
  }
}

/**
 * Why a dead letter of a subscriber or subscription queue is there. Only SQS sets the system attribute
 * `DeadLetterQueueSourceArn`, when it moves a message after maxReceiveCount; the runtime sends its dead letters with
 * SendMessage, which cannot set it. So a message that has it was moved by SQS, and any `iefErrorName` it carries is the
 * reason of an earlier dead letter that was redriven since (by `dlq redrive` or a message move task, both of which keep
 * message attributes): the previous reason, not the current one.
 */
function reasonOf(
  message: QueueMessage,
  attributes: Readonly<Record<string, string>>,
  queueKind: DeadLetterQueueKind,
): Pick<DeadLetterView, 'reason' | 'errorMessage' | 'previousReason' | 'previousErrorMessage'> {
  const errorName = attributes[DEAD_LETTER_ATTRIBUTE.ERROR_NAME];
  const errorMessage = attributes[DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE];
  // kept through a move to the back of its group by a redrive (move-to-back.ts), which a send can not set
  const movedBySqs = deadLetterSourceArnOf(message) !== undefined;
  if (errorName !== undefined && !movedBySqs) return { reason: errorName, ...(errorMessage !== undefined ? { errorMessage } : {}) };
  const reason = queueKind === 'subscription' ? DEAD_LETTER_REASON.SNS_DELIVERY_FAILED : DEAD_LETTER_REASON.MAX_RECEIVE_COUNT;
  if (errorName === undefined) return { reason };
  return { reason, previousReason: errorName, ...(errorMessage !== undefined ? { previousErrorMessage: errorMessage } : {}) };
}

/** Reads a received dead letter of a queue of `queueKind`. */
export function deadLetterView(message: QueueMessage, queueKind: DeadLetterQueueKind): DeadLetterView {
  const attributes = attributeText(message);
  const sentAt = firstSentAt(message) ?? Number.NaN;
  const common = {
    queueKind,
    queueUrl: message.queueUrl,
    messageId: message.messageId,
    attributes,
    body: message.body,
    ...(Number.isFinite(sentAt) && sentAt > 0 ? { sentAtEpochMilliseconds: sentAt } : {}),
  };
  if (queueKind === 'relay') {
    const relayBatch = relayBatchOf(message.body);
    return { ...common, reason: relayBatch?.condition ?? 'RelayGaveUp', ...(relayBatch !== undefined ? { relayBatch } : {}), envelopeError: 'a relay dead letter holds stream batch metadata, not the events' };
  }
  let envelope: EventEnvelope | undefined;
  let envelopeError: string | undefined;
  try {
    envelope = parseEnvelope(message.body);
  } catch (error) {
    envelopeError = (error as Error).message;
  }
  const eventId = envelope?.id ?? attributes[DEAD_LETTER_ATTRIBUTE.EVENT_ID];
  const subscriber = attributes[DEAD_LETTER_ATTRIBUTE.SUBSCRIBER];
  return {
    ...common,
    ...reasonOf(message, attributes, queueKind),
    ...(subscriber !== undefined ? { subscriber } : {}),
    ...(eventId !== undefined ? { eventId } : {}),
    ...(envelope !== undefined ? { envelope, eventType: envelope.type, ...(envelope.time !== undefined ? { eventTime: envelope.time } : {}) } : {}),
    ...(envelopeError !== undefined ? { envelopeError } : {}),
  };
}

/**
 * The earliest moment the event could have been applied (and its dedup record written): its `time`, or the time it
 * was first sent, whichever is earlier. Undefined when neither is known.
 */
export function earliestApplicationEpochMilliseconds(view: DeadLetterView): number | undefined {
  const times = [view.eventTime === undefined ? Number.NaN : Date.parse(view.eventTime), view.sentAtEpochMilliseconds ?? Number.NaN].filter(Number.isFinite);
  return times.length === 0 ? undefined : Math.min(...times);
}
