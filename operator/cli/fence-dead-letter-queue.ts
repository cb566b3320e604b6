/**
 * An ordered subscriber's FIFO dead-letter queue as the `fence` commands read it: the queue (typed, or from its
 * Operator output) and which of its messages are this subscriber's letters.
 */
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import type { ParsedArguments } from './command';
import type { QueueMessage } from './dead-letters/queue-messages';
import type { FenceTarget } from './fence-target';
import { terminalText } from './terminal-text';

/**
 * A dead letter as the plan takes it: its body and the consumer's reason (`iefErrorName`); undefined (left where it is)
 * when the consumer that dead-lettered it named another subscriber (`iefSubscriber`), as `dlq redrive` selects
 * (review ro13, RO13-1).
 */
export function deadLetterOf(subscriber: string): (message: QueueMessage) => { id: string; body: string; errorName?: string } | undefined {
  return (message) => {
    const named = message.messageAttributes[DEAD_LETTER_ATTRIBUTE.SUBSCRIBER]?.StringValue;
    if (named !== undefined && named !== subscriber) return undefined;
    const errorName = message.messageAttributes[DEAD_LETTER_ATTRIBUTE.ERROR_NAME]?.StringValue;
    return { id: message.messageId, body: message.body, ...(errorName === undefined ? {} : { errorName }) };
  };
}

/** A --dead-letter-queue typed, else the --subscriber-output's; a string when they disagree. */
export function deadLetterQueueOf(parsed: ParsedArguments, target: FenceTarget): { url?: string } | string {
  const value = parsed.values['dead-letter-queue'];
  const typedUrl = typeof value === 'string' && value.trim() !== '' ? value : undefined;
  const deployed = target.deployment?.deadLetterQueueUrl;
  if (typedUrl !== undefined && deployed !== undefined && typedUrl !== deployed) {
    return `--dead-letter-queue ${terminalText(typedUrl)} disagrees with --subscriber-output (it says ${terminalText(deployed)}); leave the flag out`;
  }
  const url = typedUrl ?? deployed;
  return url === undefined ? {} : { url };
}
