/**
 * `AWS::Pipes::Pipe` from a DynamoDB stream to an SNS topic (the outbox relay) or to an SQS queue (the ordered relay's
 * FIFO queue, with `TargetParameters.SqsQueueParameters`). Defaults and bounds are those of
 * `PipeSourceDynamoDBStreamParameters` (EventBridge Pipes API reference): `BatchSize` 1 to 10,000 (the DynamoDB
 * Streams source default is 100, as for Lambda event source mappings), `MaximumRetryAttempts` -1 (infinite) to
 * 10,000, default -1; `MaximumRecordAgeInSeconds` -1 (infinite) to 604,800, default -1; `OnPartialBatchItemFailure`
 * `AUTOMATIC_BISECT` or unset; `StartingPosition` required.
 */
import type { RelayModel, RelayQueueTarget } from '../flow-model';
import { describeExpression } from '../intrinsics';
import { notFollowed, queueByArn, tableByStreamArn, topicByArn } from '../references';
import type { TemplateResource } from '../stack-template';
import {
  InvalidTemplateValueError,
  isPlainObject,
  NotSimulatedError,
  readEnum,
  readInteger,
  readList,
  readObject,
  readString,
} from '../template-values';

/** `BatchSize` of a DynamoDB stream source. */
export const PIPE_BATCH_SIZE = { min: 1, max: 10_000, default: 100 } as const;
/** `MaximumRetryAttempts`: -1 is infinite. */
export const PIPE_MAXIMUM_RETRY_ATTEMPTS = { min: -1, max: 10_000, default: -1 } as const;
/** `MaximumRecordAgeInSeconds`: -1 is infinite (API reference: -1 to 604,800). */
export const PIPE_MAXIMUM_RECORD_AGE_SECONDS = { min: -1, max: 604_800, default: -1 } as const;

const PARTIAL_BATCH_ITEM_FAILURE = ['AUTOMATIC_BISECT'] as const;

const STARTING_POSITIONS = ['TRIM_HORIZON', 'LATEST'] as const;

/**
 * Reads a pipe. A source that is not the stream of a table of the stack, a target that is not a topic of the stack,
 * an enrichment, or `DesiredState: STOPPED` is a {@link NotSimulatedError}; a dead-letter target the reader cannot
 * follow is left out and said in `notes`.
 */
export function readRelay(resource: TemplateResource, notes: string[]): RelayModel {
  const properties = resource.properties;
  const table = tableByStreamArn(resource.template, properties.Source);
  if (table === undefined) {
    throw new NotSimulatedError(resource, notFollowed(resource.template, 'Source', properties.Source, 'the stream of a DynamoDB table'));
  }
  const topic = topicByArn(resource.template, properties.Target);
  const queue = topic === undefined ? queueByArn(resource.template, properties.Target) : undefined;
  if (topic === undefined && queue === undefined) {
    throw new NotSimulatedError(resource, notFollowed(resource.template, 'Target', properties.Target, 'an SNS topic or an SQS queue'));
  }
  if (properties.Enrichment !== undefined) {
    throw new NotSimulatedError(resource, `Enrichment ${describeExpression(properties.Enrichment)} is not simulated`);
  }
  if (readString(resource, 'DesiredState', properties.DesiredState) === 'STOPPED') {
    throw new NotSimulatedError(resource, 'DesiredState is STOPPED: the pipe does not run');
  }
  const sourceParameters = readObject(resource, 'SourceParameters', properties.SourceParameters) ?? {};
  const streamParameters = readObject(resource, 'SourceParameters.DynamoDBStreamParameters', sourceParameters.DynamoDBStreamParameters) ?? {};
  const startingPosition = readEnum(resource, 'SourceParameters.DynamoDBStreamParameters.StartingPosition', streamParameters.StartingPosition, STARTING_POSITIONS);
  if (startingPosition === undefined) {
    throw new InvalidTemplateValueError(resource, 'SourceParameters.DynamoDBStreamParameters.StartingPosition', undefined, 'it is required for a DynamoDB stream source');
  }
  const targetParameters = readObject(resource, 'TargetParameters', properties.TargetParameters) ?? {};
  const inputTemplate = readString(resource, 'TargetParameters.InputTemplate', targetParameters.InputTemplate);
  return {
    ...resource.modelled(),
    sourceTable: table.key,
    ...(topic !== undefined ? { targetTopic: topic.key } : { targetQueue: queueTargetOf(resource, queue!.key, targetParameters) }),
    batchSize: readInteger(resource, 'SourceParameters.DynamoDBStreamParameters.BatchSize', streamParameters.BatchSize, PIPE_BATCH_SIZE, PIPE_BATCH_SIZE.default),
    startingPosition,
    maximumRetryAttempts: readInteger(
      resource,
      'SourceParameters.DynamoDBStreamParameters.MaximumRetryAttempts',
      streamParameters.MaximumRetryAttempts,
      PIPE_MAXIMUM_RETRY_ATTEMPTS,
      PIPE_MAXIMUM_RETRY_ATTEMPTS.default,
    ),
    maximumRecordAgeSeconds: readInteger(
      resource,
      'SourceParameters.DynamoDBStreamParameters.MaximumRecordAgeInSeconds',
      streamParameters.MaximumRecordAgeInSeconds,
      PIPE_MAXIMUM_RECORD_AGE_SECONDS,
      PIPE_MAXIMUM_RECORD_AGE_SECONDS.default,
    ),
    bisectOnFailure:
      readEnum(resource, 'SourceParameters.DynamoDBStreamParameters.OnPartialBatchItemFailure', streamParameters.OnPartialBatchItemFailure, PARTIAL_BATCH_ITEM_FAILURE) ===
      'AUTOMATIC_BISECT',
    ...deadLetterQueueOf(resource, streamParameters, notes),
    filterPatterns: filterPatternsOf(resource, sourceParameters),
    ...(inputTemplate === undefined ? {} : { inputTemplate }),
  };
}

/** The queue target and its `TargetParameters.SqsQueueParameters` (group and deduplication id: JSON paths or literals). */
function queueTargetOf(resource: TemplateResource, queue: string, targetParameters: Record<string, unknown>): RelayQueueTarget {
  const parameters = readObject(resource, 'TargetParameters.SqsQueueParameters', targetParameters.SqsQueueParameters) ?? {};
  const messageGroupId = readString(resource, 'TargetParameters.SqsQueueParameters.MessageGroupId', parameters.MessageGroupId);
  const messageDeduplicationId = readString(resource, 'TargetParameters.SqsQueueParameters.MessageDeduplicationId', parameters.MessageDeduplicationId);
  return { queue, ...(messageGroupId === undefined ? {} : { messageGroupId }), ...(messageDeduplicationId === undefined ? {} : { messageDeduplicationId }) };
}

function deadLetterQueueOf(resource: TemplateResource, streamParameters: Record<string, unknown>, notes: string[]): Pick<RelayModel, 'deadLetterQueue'> {
  const property = 'SourceParameters.DynamoDBStreamParameters.DeadLetterConfig';
  const config = readObject(resource, property, streamParameters.DeadLetterConfig) ?? {};
  if (config.Arn === undefined) return {};
  const queue = queueByArn(resource.template, config.Arn);
  if (queue === undefined) {
    notes.push(
      `${resource.label}: ${notFollowed(resource.template, `${property}.Arn`, config.Arn, 'a queue')}; ` +
        'records that exhaust their retries are discarded instead',
    );
    return {};
  }
  return { deadLetterQueue: queue.key };
}

function filterPatternsOf(resource: TemplateResource, sourceParameters: Record<string, unknown>): string[] {
  const criteria = readObject(resource, 'SourceParameters.FilterCriteria', sourceParameters.FilterCriteria) ?? {};
  return readList(resource, 'SourceParameters.FilterCriteria.Filters', criteria.Filters).map((filter, index) => {
    const property = `SourceParameters.FilterCriteria.Filters[${index}].Pattern`;
    const pattern = readString(resource, property, (readObject(resource, `SourceParameters.FilterCriteria.Filters[${index}]`, filter) ?? {}).Pattern);
    if (pattern === undefined) throw new InvalidTemplateValueError(resource, property, undefined, 'it is required');
    let parsed: unknown;
    try {
      parsed = JSON.parse(pattern);
    } catch (error) {
      throw new InvalidTemplateValueError(resource, property, pattern, `it must be a JSON event pattern (${(error as Error).message})`);
    }
    if (!isPlainObject(parsed)) throw new InvalidTemplateValueError(resource, property, pattern, 'it must be a JSON object');
    return pattern;
  });
}
