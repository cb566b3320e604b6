/** The checks a simulated queue's settings pass before it exists: SQS's bounds, and a redrive policy that fits. */
import type { QueueModel } from '../model/flow-model';

/** Bounds SQS puts on the queue settings (CreateQueue API reference). */
export const VISIBILITY_TIMEOUT_SECONDS = { min: 0, max: 43_200 };
const RETENTION_SECONDS = { min: 60, max: 1_209_600 };
const MAX_RECEIVE_COUNT = { min: 1, max: 1000 };

/** Throws a RangeError naming `what` when `value` is not a whole number within `bounds`. */
export function checkWithin(what: string, value: number, bounds: { min: number; max: number }): void {
  if (!Number.isInteger(value) || value < bounds.min || value > bounds.max) {
    throw new RangeError(`${what} must be an integer from ${bounds.min} to ${bounds.max}, got ${value}`);
  }
}

/** Throws when `model`'s settings are out of SQS's bounds or `deadLetterQueue` is not what its redrive policy names. */
export function checkQueueSettings(model: QueueModel, deadLetterQueue: { readonly model: QueueModel } | undefined): void {
  checkWithin(`VisibilityTimeout of queue ${model.key}`, model.visibilityTimeoutSeconds, VISIBILITY_TIMEOUT_SECONDS);
  checkWithin(`MessageRetentionPeriod of queue ${model.key}`, model.messageRetentionSeconds, RETENTION_SECONDS);
  if (model.redrive !== undefined) {
    checkWithin(`maxReceiveCount of queue ${model.key}`, model.redrive.maxReceiveCount, MAX_RECEIVE_COUNT);
    if (deadLetterQueue === undefined) {
      throw new Error(`queue ${model.key} has a redrive policy to ${model.redrive.deadLetterQueue}, but no dead-letter queue was given`);
    }
    if (deadLetterQueue.model.key !== model.redrive.deadLetterQueue) {
      throw new Error(`queue ${model.key} redrives to ${model.redrive.deadLetterQueue}, but the dead-letter queue given is ${deadLetterQueue.model.key}`);
    }
    if (deadLetterQueue.model.fifo !== model.fifo) {
      throw new Error(`queue ${model.key} is ${model.fifo ? 'FIFO' : 'standard'}, its dead-letter queue ${deadLetterQueue.model.key} must be too (SQS requires it)`);
    }
  } else if (deadLetterQueue !== undefined) {
    throw new Error(`queue ${model.key} has no redrive policy, but dead-letter queue ${deadLetterQueue.model.key} was given`);
  }
}
