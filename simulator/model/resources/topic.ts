/** `AWS::SNS::Topic` */
import type { TopicModel } from '../flow-model';
import type { TemplateResource } from '../stack-template';
import { readBoolean, readInteger, readList } from '../template-values';

/** `MaximumMessageSize` of `AWS::SNS::Topic`: 1,024 to 1,048,576 bytes, 262,144 by default (CloudFormation reference). */
export const TOPIC_MAXIMUM_MESSAGE_SIZE = { min: 1_024, max: 1_048_576, default: 262_144 } as const;

/**
 * Reads a topic. Subscriptions declared inline in the topic's `Subscription` property are not simulated (CDK declares
 * `AWS::SNS::Subscription` resources instead); each is a line in `notes`.
 */
export function readTopic(resource: TemplateResource, notes: string[]): TopicModel {
  const properties = resource.properties;
  readList(resource, 'Subscription', properties.Subscription).forEach((subscription, index) => {
    notes.push(`${resource.label}: inline Subscription[${index}] ${JSON.stringify(subscription)} is not simulated (only AWS::SNS::Subscription resources are)`);
  });
  const topicName = properties.TopicName;
  return {
    ...resource.modelled(),
    ...(typeof topicName === 'string' ? { topicName } : {}),
    fifo: readBoolean(resource, 'FifoTopic', properties.FifoTopic, false),
    ...(readBoolean(resource, 'ContentBasedDeduplication', properties.ContentBasedDeduplication, false) ? { contentBasedDeduplication: true } : {}),
    maximumMessageSize: readInteger(resource, 'MaximumMessageSize', properties.MaximumMessageSize, TOPIC_MAXIMUM_MESSAGE_SIZE, TOPIC_MAXIMUM_MESSAGE_SIZE.default),
  };
}
