/** `AWS::SQS::Queue`, with the defaults and bounds of the SQS API reference (`SetQueueAttributes`). */
import type { QueueModel } from '../flow-model';
import { notFollowed, queueByArn } from '../references';
import type { TemplateResource } from '../stack-template';
import { InvalidTemplateValueError, readBoolean, readInteger, readJsonObject } from '../template-values';

/** `VisibilityTimeout`: 0 to 43,200 seconds (12 hours), default 30. */
export const VISIBILITY_TIMEOUT = { min: 0, max: 43_200, default: 30 } as const;
/** `MessageRetentionPeriod`: 60 seconds to 1,209,600 seconds (14 days), default 345,600 (4 days). */
export const MESSAGE_RETENTION = { min: 60, max: 1_209_600, default: 345_600 } as const;
/** `DelaySeconds`: 0 to 900. */
const DELAY = { min: 0, max: 900 } as const;
/** `RedrivePolicy.maxReceiveCount`: 1 to 1,000. */
export const MAX_RECEIVE_COUNT = { min: 1, max: 1_000 } as const;

/**
 * Reads a queue. A `RedrivePolicy` whose dead-letter queue the reader cannot follow leaves the queue without redrive,
 * and says so in `notes`.
 */
export function readQueue(resource: TemplateResource, notes: string[]): QueueModel {
  const properties = resource.properties;
  const queueName = properties.QueueName;
  const delaySeconds = readInteger(resource, 'DelaySeconds', properties.DelaySeconds, DELAY, 0);
  if (delaySeconds > 0) notes.push(`${resource.label}: DelaySeconds ${delaySeconds} is not emulated; messages are visible at once`);
  return {
    ...resource.modelled(),
    ...(typeof queueName === 'string' ? { queueName } : {}),
    fifo: readBoolean(resource, 'FifoQueue', properties.FifoQueue, false),
    ...(readBoolean(resource, 'ContentBasedDeduplication', properties.ContentBasedDeduplication, false) ? { contentBasedDeduplication: true } : {}),
    visibilityTimeoutSeconds: readInteger(resource, 'VisibilityTimeout', properties.VisibilityTimeout, VISIBILITY_TIMEOUT, VISIBILITY_TIMEOUT.default),
    messageRetentionSeconds: readInteger(resource, 'MessageRetentionPeriod', properties.MessageRetentionPeriod, MESSAGE_RETENTION, MESSAGE_RETENTION.default),
    ...redriveOf(resource, notes),
  };
}

function redriveOf(resource: TemplateResource, notes: string[]): Pick<QueueModel, 'redrive'> {
  const policy = readJsonObject(resource, 'RedrivePolicy', resource.properties.RedrivePolicy);
  if (policy === undefined) return {};
  const maxReceiveCount = readInteger(resource, 'RedrivePolicy.maxReceiveCount', policy.maxReceiveCount, MAX_RECEIVE_COUNT);
  if (maxReceiveCount === undefined) {
    throw new InvalidTemplateValueError(resource, 'RedrivePolicy.maxReceiveCount', undefined, 'it is required with a RedrivePolicy');
  }
  const target = policy.deadLetterTargetArn;
  if (target === undefined) throw new InvalidTemplateValueError(resource, 'RedrivePolicy.deadLetterTargetArn', undefined, 'it is required with a RedrivePolicy');
  const deadLetterQueue = queueByArn(resource.template, target);
  if (deadLetterQueue === undefined) {
    notes.push(
      `${resource.label}: ${notFollowed(resource.template, 'RedrivePolicy.deadLetterTargetArn', target, 'a queue')}; ` +
        'messages are never moved to a dead-letter queue (they are received until the retention period ends)',
    );
    return {};
  }
  return { redrive: { deadLetterQueue: deadLetterQueue.key, maxReceiveCount } };
}
