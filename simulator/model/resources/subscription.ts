/** `AWS::SNS::Subscription` of protocol `sqs` to a queue of the assembly. */
import type { SubscriptionModel } from '../flow-model';
import { notFollowed, queueByArn, topicByArn } from '../references';
import type { TemplateResource } from '../stack-template';
import { InvalidTemplateValueError, NotSimulatedError, readBoolean, readEnum, readJsonObject, readString } from '../template-values';

const FILTER_POLICY_SCOPES = ['MessageAttributes', 'MessageBody'] as const;

/**
 * Reads a subscription. Another protocol, or a topic or endpoint the reader cannot follow, is a
 * {@link NotSimulatedError}; a dead-letter queue it cannot follow is left out and said in `notes`. `FilterPolicy` and
 * `RedrivePolicy` may be objects or JSON strings.
 */
export function readSubscription(resource: TemplateResource, notes: string[]): SubscriptionModel {
  const properties = resource.properties;
  const protocol = readString(resource, 'Protocol', properties.Protocol);
  if (protocol !== 'sqs') throw new NotSimulatedError(resource, `protocol ${protocol ?? '(none)'} is not simulated (only sqs)`);
  const topic = topicByArn(resource.template, properties.TopicArn);
  if (topic === undefined) {
    throw new NotSimulatedError(resource, notFollowed(resource.template, 'TopicArn', properties.TopicArn, 'a topic'));
  }
  const queue = queueByArn(resource.template, properties.Endpoint);
  if (queue === undefined) {
    throw new NotSimulatedError(resource, notFollowed(resource.template, 'Endpoint', properties.Endpoint, 'a queue'));
  }
  const filterPolicy = readJsonObject(resource, 'FilterPolicy', properties.FilterPolicy);
  return {
    ...resource.modelled(),
    topic: topic.key,
    queue: queue.key,
    rawMessageDelivery: readBoolean(resource, 'RawMessageDelivery', properties.RawMessageDelivery, false),
    ...(filterPolicy === undefined ? {} : { filterPolicy }),
    filterPolicyScope: readEnum(resource, 'FilterPolicyScope', properties.FilterPolicyScope, FILTER_POLICY_SCOPES) ?? 'MessageAttributes',
    ...deadLetterQueueOf(resource, notes),
  };
}

function deadLetterQueueOf(resource: TemplateResource, notes: string[]): Pick<SubscriptionModel, 'deadLetterQueue'> {
  const policy = readJsonObject(resource, 'RedrivePolicy', resource.properties.RedrivePolicy);
  if (policy === undefined) return {};
  const target = policy.deadLetterTargetArn;
  if (target === undefined) throw new InvalidTemplateValueError(resource, 'RedrivePolicy.deadLetterTargetArn', undefined, 'it is required with a RedrivePolicy');
  const queue = queueByArn(resource.template, target);
  if (queue === undefined) {
    notes.push(
      `${resource.label}: ${notFollowed(resource.template, 'RedrivePolicy.deadLetterTargetArn', target, 'a queue')}; ` +
        'messages SNS cannot deliver are discarded instead',
    );
    return {};
  }
  return { deadLetterQueue: queue.key };
}
