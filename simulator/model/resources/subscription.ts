/** `AWS::SNS::Subscription` of protocol `sqs` to a queue of the assembly. */
import type { SubscriptionModel } from '../flow-model';
import { notFollowed, queueByArn, topicByArn } from '../references';
import type { TemplateResource } from '../stack-template';
import { InvalidTemplateValueError, NotSimulatedError, readBoolean, readEnum, readJsonObject, readString } from '../template-values';

const FILTER_POLICY_SCOPES = ['MessageAttributes', 'MessageBody'] as const;

/**
 * Reads a subscription. Another protocol, or a topic or endpoint the reader cannot follow, is a
 * {@link NotSimulatedError}; a dead-letter queue it cannot follow is left out and said in `notes`. `FilterPolicy` and
 * `RedrivePolicy` may be objects or JSON strings. `Region` is kept: where the subscription is created decides whether
 * it deploys (../../check/subscription-rules.ts).
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
  const region = regionOf(resource, notes);
  return {
    ...resource.modelled(),
    topic: topic.key,
    queue: queue.key,
    rawMessageDelivery: readBoolean(resource, 'RawMessageDelivery', properties.RawMessageDelivery, false),
    ...(filterPolicy === undefined ? {} : { filterPolicy }),
    filterPolicyScope: readEnum(resource, 'FilterPolicyScope', properties.FilterPolicyScope, FILTER_POLICY_SCOPES) ?? 'MessageAttributes',
    ...deadLetterQueueOf(resource, notes),
    ...(region === undefined ? {} : { region }),
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

/** `Region` when a literal; a token (e.g. `Ref AWS::Region`) is taken as the stack's Region, said in `notes`. */
function regionOf(resource: TemplateResource, notes: string[]): string | undefined {
  const value = resource.properties.Region;
  if (value === undefined || value === null || typeof value === 'string') return readString(resource, 'Region', value);
  notes.push(`${resource.label}: its Region is not a literal; the subscription is taken to be in its stack's Region`);
  return undefined;
}
