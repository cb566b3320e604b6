/**
 * `AWS::CloudWatch::Alarm`s that watch an SQS queue: an alarm on an `AWS/SQS` metric whose `QueueName` dimension is
 * `Fn::GetAtt [queue, QueueName]` (how CDK writes `queue.metric…()`), or a queue's literal `QueueName`; as a single
 * metric or as one of the `Metrics` of a metric-math alarm. A dead letter on a queue no alarm watches is lost in
 * practice: nobody is told it is there.
 */
import type { ResourceKey } from '../flow-model';
import { RESOURCE_TYPES } from '../references';
import { isPlainObject } from '../template-values';
import type { TemplateResource } from '../stack-template';

/** `AWS::CloudWatch::Alarm` */
export const ALARM_TYPE = 'AWS::CloudWatch::Alarm';

/** SQS metrics that say nothing about messages waiting on a queue: an alarm on one of them does not watch it. */
const NOT_WATCHING_METRICS: ReadonlySet<string> = new Set(['NumberOfEmptyReceives', 'NumberOfMessagesDeleted', 'NumberOfMessagesReceived']);

/** The alarms of `resources` that watch a queue, by the queue's key: each alarm's construct path (or key). */
export function readQueueAlarms(resources: readonly TemplateResource[]): Map<ResourceKey, string[]> {
  const watched = new Map<ResourceKey, string[]>();
  for (const resource of resources) {
    if (resource.type !== ALARM_TYPE) continue;
    const properties = resource.properties;
    const metrics: unknown[] = [properties];
    if (Array.isArray(properties.Metrics)) {
      for (const query of properties.Metrics) {
        const metric = isPlainObject(query) && isPlainObject(query.MetricStat) ? query.MetricStat.Metric : undefined;
        if (isPlainObject(metric)) metrics.push(metric);
      }
    }
    for (const metric of metrics) {
      const queue = watchedQueue(resource, metric);
      if (queue === undefined) continue;
      const alarms = watched.get(queue) ?? [];
      alarms.push(resource.constructPath ?? resource.key);
      watched.set(queue, alarms);
    }
  }
  return watched;
}

/** The queue a metric (an alarm's own, or a `MetricStat.Metric`) watches, if it is an SQS metric of a queue of the templates. */
function watchedQueue(alarm: TemplateResource, metric: unknown): ResourceKey | undefined {
  if (!isPlainObject(metric) || metric.Namespace !== 'AWS/SQS') return undefined;
  if (typeof metric.MetricName === 'string' && NOT_WATCHING_METRICS.has(metric.MetricName)) return undefined;
  const dimensions = Array.isArray(metric.Dimensions) ? metric.Dimensions : [];
  for (const dimension of dimensions) {
    if (!isPlainObject(dimension) || dimension.Name !== 'QueueName') continue;
    const byAttribute = alarm.template.getAttTarget(dimension.Value, [RESOURCE_TYPES.QUEUE], ['QueueName']);
    if (byAttribute !== undefined) return byAttribute.key;
    if (typeof dimension.Value === 'string') {
      const byName = alarm.template.resources.find((resource) => resource.type === RESOURCE_TYPES.QUEUE && resource.properties.QueueName === dimension.Value);
      if (byName !== undefined) return byName.key;
    }
  }
  return undefined;
}
