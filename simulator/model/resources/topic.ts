/** `AWS::SNS::Topic` */
import type { TopicModel } from '../flow-model';
import type { TemplateResource } from '../stack-template';
import { readBoolean, readList } from '../template-values';

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
  };
}
