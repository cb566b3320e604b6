/**
 * `AWS::Lambda::EventSourceMapping` from a queue of the same stack. Defaults and bounds for an SQS source per the
 * CloudFormation reference of `AWS::Lambda::EventSourceMapping`: `BatchSize` default 10, at most 10,000;
 * `ScalingConfig.MaximumConcurrency` 2 to 1,000; `Enabled` default true.
 */
import type { EventSourceMappingModel } from '../flow-model';
import { describeExpression } from '../intrinsics';
import { functionByName, notFollowed, queueByArn, tableByStreamArn } from '../references';
import type { TemplateResource } from '../stack-template';
import { NotSimulatedError, readBoolean, readInteger, readList, readObject } from '../template-values';

/** `BatchSize` of an SQS source. */
export const SQS_BATCH_SIZE = { min: 1, max: 10_000, default: 10 } as const;
/** `ScalingConfig.MaximumConcurrency` */
export const MAXIMUM_CONCURRENCY = { min: 2, max: 1_000 } as const;

/**
 * Reads a mapping. A source that is not a queue of the stack, a function the reader cannot follow, or a
 * `FilterCriteria` (which would drop messages the simulator delivers) is a {@link NotSimulatedError}.
 */
export function readEventSourceMapping(resource: TemplateResource): EventSourceMappingModel {
  const properties = resource.properties;
  const source = properties.EventSourceArn;
  const queue = queueByArn(resource.template, source);
  if (queue === undefined) {
    const stream = tableByStreamArn(resource.template, source);
    throw new NotSimulatedError(
      resource,
      stream === undefined
        ? notFollowed(resource.template, 'EventSourceArn', source, 'a queue')
        : `EventSourceArn ${describeExpression(source)} is a DynamoDB stream, not a queue of stack ${stream.template.stackName}`,
    );
  }
  const fn = functionByName(resource.template, properties.FunctionName);
  if (fn === undefined) {
    throw new NotSimulatedError(resource, notFollowed(resource.template, 'FunctionName', properties.FunctionName, 'a function'));
  }
  if (properties.FilterCriteria !== undefined) {
    throw new NotSimulatedError(resource, `FilterCriteria ${describeExpression(properties.FilterCriteria)} is not emulated`);
  }
  const maximumConcurrency = readInteger(
    resource,
    'ScalingConfig.MaximumConcurrency',
    (readObject(resource, 'ScalingConfig', properties.ScalingConfig) ?? {}).MaximumConcurrency,
    MAXIMUM_CONCURRENCY,
  );
  return {
    ...resource.modelled(),
    queue: queue.key,
    function: fn.key,
    batchSize: readInteger(resource, 'BatchSize', properties.BatchSize, SQS_BATCH_SIZE, SQS_BATCH_SIZE.default),
    reportBatchItemFailures: readList(resource, 'FunctionResponseTypes', properties.FunctionResponseTypes).includes('ReportBatchItemFailures'),
    ...(maximumConcurrency === undefined ? {} : { maximumConcurrency }),
    enabled: readBoolean(resource, 'Enabled', properties.Enabled, true),
  };
}
