/**
 * Reads what is in a subscriber's dead-letter queues at the end of a run and says why each message is there: the
 * runtime's own reason (the `iefErrorName`/`iefErrorMessage` attributes it sends with every dead letter), or, for a
 * message SQS moved after `maxReceiveCount` receives, the last failure the run recorded for it. A message with neither
 * is unexplained.
 */
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import { eventIdOf } from '../aws/message-ids';
import type { SimulatedQueue } from '../aws/queue';
import type { StoredMessage } from '../aws/sqs-messages';
import type { RunLedger } from '../observation/ledger';

/** One dead letter and why it is there. */
export interface DeadLetterFinding {
  readonly queueName: string;
  readonly messageId: string;
  /** The envelope id of the event it carries, when known. */
  readonly eventId?: string;
  /** Why it is there; undefined when nothing explains it. */
  readonly explanation?: string;
  /**
   * The error the runtime rejected the message with for good (it dead-lettered it at once: a `PermanentError`, a
   * schema or envelope error); undefined for a blocked message, one SQS or SNS moved, or one the runtime did not send.
   */
  readonly rejectedWith?: string;
}

/** How the explanation of a dead letter SQS moved after `maxReceiveCount` receives begins (checks tell such dead letters by it). */
export const MOVED_BY_SQS = 'moved by SQS after ';

/** The runtime's reason for a dead letter that is not a rejection: the message waits for an operator. */
const BLOCKED_ERROR_NAME = 'MessageBlockedError';

/** The error name of a dead letter the runtime sent as a permanent rejection, else undefined. */
function rejectionOf(message: StoredMessage): string | undefined {
  const errorName = message.messageAttributes[DEAD_LETTER_ATTRIBUTE.ERROR_NAME]?.StringValue;
  if (errorName === undefined || message.origin.via !== 'send-message' || errorName === BLOCKED_ERROR_NAME) return undefined;
  return errorName;
}

function explain(message: StoredMessage, ledger: RunLedger): string | undefined {
  const attribute = (name: string): string | undefined => message.messageAttributes[name]?.StringValue;
  // a message SQS moved keeps the attributes it had on the consumer queue: a `iefErrorName` there is the reason of an
  // earlier dead letter (one the operator moved back), not why SQS moved it now
  const errorName = attribute(DEAD_LETTER_ATTRIBUTE.ERROR_NAME);
  if (errorName !== undefined && message.origin.via !== 'redrive') return `${errorName}: ${attribute(DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE) ?? ''}`;
  if (message.origin.via === 'sns-dead-letter') return `SNS could not deliver it to the subscription's queue: ${message.origin.deliveryFailure ?? 'no reason recorded'}`;
  if (message.origin.via === 'redrive') {
    const failure = ledger.lastFailure.get(message.messageId);
    const receives = message.origin.redrivenFrom?.receiveCount ?? message.receiveCount;
    if (failure !== undefined) return `${MOVED_BY_SQS}${receives} receives; last failure: ${failure}`;
  }
  return undefined;
}

/** The dead letters of `queues`, each with its explanation. */
export function readDeadLetters(queues: readonly SimulatedQueue[], ledger: RunLedger): DeadLetterFinding[] {
  return queues.flatMap((queue) =>
    queue.messages().map((message) => ({
      queueName: queue.address.name,
      messageId: message.messageId,
      eventId:
        message.messageAttributes[DEAD_LETTER_ATTRIBUTE.EVENT_ID]?.StringValue ?? message.origin.eventId ?? eventIdOf(message.body),
      explanation: explain(message, ledger),
      ...(rejectionOf(message) === undefined ? {} : { rejectedWith: rejectionOf(message) }),
    })),
  );
}
