/**
 * Which dead-letter queue `fence skip` may read when no Operator output names the subscriber's: one that the typed
 * subscriber queue's RedrivePolicy names (the check `fence redrive` and `dlq redrive` make). Any FIFO queue typed as
 * `--dead-letter-queue` (an empty staging queue, another subscriber's) would otherwise pass the skip past an event
 * that sits in the subscriber's real dead-letter queue.
 */
import type { SQSClient } from '@aws-sdk/client-sqs';
import { redriveTargetAndArn } from './dead-letters/queue-messages';
import { terminalText } from './terminal-text';

/** The usage problem when `fence skip` has no Operator output and no --queue to tie --dead-letter-queue to. */
export const SKIP_NEEDS_QUEUE_LINE =
  "'fence skip' without --subscriber-output needs --queue (the subscriber's FIFO queue): only its RedrivePolicy ties --dead-letter-queue to the subscriber, whose letters of the skipped sequences refuse the skip";

/**
 * Why `--dead-letter-queue` can not be taken as `queueUrl`'s: its RedrivePolicy names another queue, none, or could not
 * be read. Undefined when it names the dead-letter queue.
 */
export async function skipDeadLetterQueueRefusal(client: SQSClient, queueUrl: string, deadLetterQueueUrl: string): Promise<string | undefined> {
  let target: string | undefined;
  let deadLetterArn: string;
  try {
    ({ target, deadLetterArn } = await redriveTargetAndArn(client, queueUrl, deadLetterQueueUrl));
  } catch (error) {
    const { name, message } = error instanceof Error ? error : new Error(String(error));
    return `could not check that --dead-letter-queue ${terminalText(deadLetterQueueUrl)} is the dead-letter queue of --queue ${terminalText(queueUrl)} (${name}: ${terminalText(message)}); nothing proves the skip safe, nothing changed`;
  }
  if (target === deadLetterArn) return undefined;
  return (
    `--dead-letter-queue ${terminalText(deadLetterQueueUrl)} is not the dead-letter queue of --queue ${terminalText(queueUrl)} (its RedrivePolicy ${target === undefined ? 'names none' : `names ${terminalText(target)}`}): ` +
    "a letter of a skipped sequence in the subscriber's own dead-letter queue would not be seen; pass the subscriber's queues, or --subscriber-output; nothing changed"
  );
}
