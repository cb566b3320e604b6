/**
 * How long a copy sent to a queue (a redrive, a replay) can wait there before it is consumed: the queue's
 * `MessageRetentionPeriod`, read with GetQueueAttributes. SQS deletes a message once it is that old, so a copy is
 * consumed by then or never.
 */
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';

/** How long a copy sent to the destination queue can wait there before it is consumed: the queue's retention. */
export interface CopyWait {
  readonly queueUrl: string;
  /** The queue's `MessageRetentionPeriod`, or {@link SQS_MAX_RETENTION_SECONDS} when it could not be read. */
  readonly retentionSeconds: number;
  /** False when the retention could not be read and the SQS maximum is assumed. */
  readonly known: boolean;
}

/** The longest an SQS queue keeps a message (`MessageRetentionPeriod` at most 14 days). */
export const SQS_MAX_RETENTION_SECONDS = 14 * 86_400;

/**
 * How long a copy sent to `queueUrl` can wait there before it is consumed: the queue's `MessageRetentionPeriod`. When
 * it can not be read (no sqs:GetQueueAttributes, say), the SQS maximum of 14 days is assumed, and `note` says so.
 */
export async function copyWaitOf(client: SQSClient, queueUrl: string): Promise<{ wait: CopyWait; note?: string }> {
  let why: string;
  try {
    const response = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['MessageRetentionPeriod'] }));
    const seconds = Number(response.Attributes?.MessageRetentionPeriod);
    if (Number.isInteger(seconds) && seconds > 0) return { wait: { queueUrl, retentionSeconds: seconds, known: true } };
    why = `it answered '${response.Attributes?.MessageRetentionPeriod ?? ''}'`;
  } catch (error) {
    why = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
  return {
    wait: { queueUrl, retentionSeconds: SQS_MAX_RETENTION_SECONDS, known: false },
    note: `could not read the MessageRetentionPeriod of ${queueUrl} (${why}): assuming the SQS maximum of 14 days`,
  };
}
