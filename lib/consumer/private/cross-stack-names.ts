import { ArnFormat, Names, Stack, Token } from 'aws-cdk-lib';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { IConstruct } from 'constructs';

/**
 * Literal names for the resources of a subscriber (a `Subscriber`, or an `OrderedSubscriber` registered with its flow)
 * that lives in another stack than its flow.
 *
 * The subscriber's stack refers to the flow's (its topic, key and outbox), so anything in the flow's stack that referred
 * back to the subscriber's resources (a dashboard row: queue and function metrics, alarm states) would make the two
 * stacks depend on each other, which CDK refuses as a cycle. A resource with a name fixed at synth can be named by
 * that literal instead of a reference. The names derive from the stack name and the construct path
 * (`Names.uniqueResourceName`, as the event topic's), so they are stable as long as the construct stays where it is; a
 * moved construct gets a new logical id, and a new name, anyway.
 */

/** The literal names of one subscriber's resources. */
export interface SubscriberPhysicalNames {
  readonly queueName: string;
  readonly deadLetterQueueName: string;
  /** Undefined for a subscriber without a subscription dead-letter queue (across Regions). */
  readonly subscriptionDeadLetterQueueName?: string;
  readonly functionName: string;
}

/**
 * SQS queue names: up to 80 of `A-Z a-z 0-9 - _`, a FIFO queue's ending in `.fifo` (CreateQueue API reference).
 * Lambda function names: up to 64 of the same. Alarm names: up to 255.
 */
const QUEUE_NAME_MAX_LENGTH = 80;
const FIFO_SUFFIX = '.fifo';
const FUNCTION_NAME_MAX_LENGTH = 64;
const ALARM_NAME_MAX_LENGTH = 255;

/** What naming reads of a subscriber (a `Subscriber` or an `OrderedSubscriber`): its function and queues. */
export interface NamedSubscriberResources {
  readonly consumerFunction: { readonly lambdaFunction: lambda.IFunction };
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
  readonly subscriptionDeadLetterQueue?: sqs.IQueue;
}

const namesBySubscriber = new WeakMap<NamedSubscriberResources, SubscriberPhysicalNames>();
const namesByAlarm = new WeakMap<cloudwatch.IAlarm, string>();

function physicalName(construct: IConstruct, maxLength: number): string {
  return Names.uniqueResourceName(construct, { maxLength, separator: '-', allowedSpecialCharacters: '-_' });
}

/**
 * Gives `queue` a name derived from its construct path (a FIFO queue's ending in `.fifo`) and returns it; a queue
 * named so before keeps its name (an ordered subscriber in another environment names its queues when it is created,
 * for the topic grant, and again when its flow registers it).
 */
export function nameQueue(queue: sqs.IQueue): string {
  const resource = queue.node.defaultChild as sqs.CfnQueue;
  // (An unnamed queue's queueName is a token for the name CloudFormation generates.)
  if (typeof resource.queueName === 'string' && !Token.isUnresolved(resource.queueName)) return resource.queueName;
  const name = queue.fifo ? `${physicalName(queue, QUEUE_NAME_MAX_LENGTH - FIFO_SUFFIX.length)}${FIFO_SUFFIX}` : physicalName(queue, QUEUE_NAME_MAX_LENGTH);
  resource.queueName = name;
  return name;
}

/** Gives the subscriber's queues and consumer function names derived from their construct paths (once). */
export function nameSubscriberResources(subscriber: NamedSubscriberResources): void {
  if (namesBySubscriber.has(subscriber)) return;
  const fn = subscriber.consumerFunction.lambdaFunction;
  const functionName = physicalName(fn, FUNCTION_NAME_MAX_LENGTH);
  (fn.node.defaultChild as lambda.CfnFunction).functionName = functionName;
  namesBySubscriber.set(subscriber, {
    queueName: nameQueue(subscriber.queue),
    deadLetterQueueName: nameQueue(subscriber.deadLetterQueue),
    subscriptionDeadLetterQueueName: subscriber.subscriptionDeadLetterQueue === undefined ? undefined : nameQueue(subscriber.subscriptionDeadLetterQueue),
    functionName,
  });
}

/** The literal names {@link nameSubscriberResources} gave the subscriber's resources; undefined if it gave none. */
export function physicalNamesOf(subscriber: NamedSubscriberResources): SubscriberPhysicalNames | undefined {
  return namesBySubscriber.get(subscriber);
}

/** Gives each alarm of a subscriber with literal names a name derived from its construct path. */
export function nameAlarms(subscriber: NamedSubscriberResources, alarms: readonly cloudwatch.Alarm[]): void {
  if (physicalNamesOf(subscriber) === undefined) return;
  for (const alarm of alarms) {
    const name = Names.uniqueResourceName(alarm, { maxLength: ALARM_NAME_MAX_LENGTH, separator: '-' });
    (alarm.node.defaultChild as cloudwatch.CfnAlarm).alarmName = name;
    namesByAlarm.set(alarm, name);
  }
}

/** The alarm's ARN as `scope`'s stack can write it: built from its literal name when it has one, else its reference. */
export function alarmArnFor(scope: IConstruct, alarm: cloudwatch.IAlarm): string {
  const name = namesByAlarm.get(alarm);
  if (name === undefined) return alarm.alarmArn;
  return Stack.of(scope).formatArn({ service: 'cloudwatch', resource: 'alarm', resourceName: name, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
}
