/**
 * How the flow's resources point at each other in a template, as CDK writes it: a queue by `Fn::GetAtt [queue, Arn]`,
 * a topic by `Ref`, a table's stream by `Fn::GetAtt [table, StreamArn]`, a function by `Ref`. A literal ARN naming a
 * queue or topic the same template creates by name is followed too. Anything else (`Fn::ImportValue`, an ARN of a
 * resource outside the templates) is not followed: the caller reports the resource as not simulated.
 */
import type { StackTemplate, TemplateResource } from './stack-template';

/** Resource types of the flow. */
export const RESOURCE_TYPES = {
  TABLE: 'AWS::DynamoDB::Table',
  GLOBAL_TABLE: 'AWS::DynamoDB::GlobalTable',
  PIPE: 'AWS::Pipes::Pipe',
  TOPIC: 'AWS::SNS::Topic',
  SUBSCRIPTION: 'AWS::SNS::Subscription',
  QUEUE: 'AWS::SQS::Queue',
  EVENT_SOURCE_MAPPING: 'AWS::Lambda::EventSourceMapping',
  FUNCTION: 'AWS::Lambda::Function',
  ALIAS: 'AWS::Lambda::Alias',
  VERSION: 'AWS::Lambda::Version',
} as const;

const TABLE_TYPES = [RESOURCE_TYPES.TABLE, RESOURCE_TYPES.GLOBAL_TABLE];

/** The queue an ARN value names: `Fn::GetAtt [queue, Arn]`, or a literal ARN of a queue the template names. */
export function queueByArn(template: StackTemplate, value: unknown): TemplateResource | undefined {
  return (
    template.getAttTarget(value, [RESOURCE_TYPES.QUEUE], ['Arn']) ?? template.arnTarget(value, 'sqs', RESOURCE_TYPES.QUEUE, 'QueueName')
  );
}

/** The topic an ARN value names: `Ref topic`, `Fn::GetAtt [topic, TopicArn]`, or a literal ARN of a topic the template names. */
export function topicByArn(template: StackTemplate, value: unknown): TemplateResource | undefined {
  return (
    template.refTarget(value, [RESOURCE_TYPES.TOPIC]) ??
    template.getAttTarget(value, [RESOURCE_TYPES.TOPIC], ['TopicArn']) ??
    template.arnTarget(value, 'sns', RESOURCE_TYPES.TOPIC, 'TopicName')
  );
}

/** The table whose stream an ARN value names: `Fn::GetAtt [table, StreamArn]` (a table or global table). */
export function tableByStreamArn(template: StackTemplate, value: unknown): TemplateResource | undefined {
  return template.getAttTarget(value, TABLE_TYPES, ['StreamArn']);
}

/**
 * The function a `FunctionName` value names: `Ref function`, `Fn::GetAtt [function, Arn]`, or `Ref` of an alias or
 * version of the template whose `FunctionName` names a function that way.
 */
export function functionByName(template: StackTemplate, value: unknown, depth = 0): TemplateResource | undefined {
  const direct = template.refTarget(value, [RESOURCE_TYPES.FUNCTION]) ?? template.getAttTarget(value, [RESOURCE_TYPES.FUNCTION], ['Arn']);
  if (direct !== undefined || depth > 2) return direct;
  const qualifier = template.refTarget(value, [RESOURCE_TYPES.ALIAS, RESOURCE_TYPES.VERSION]);
  return qualifier === undefined ? undefined : functionByName(template, qualifier.properties.FunctionName, depth + 1);
}
