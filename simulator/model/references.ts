/**
 * How the flow's resources point at each other in a template, as CDK writes it: a queue by `Fn::GetAtt [queue, Arn]`,
 * a topic by `Ref`, a table's stream by `Fn::GetAtt [table, StreamArn]`, a function by `Ref`. A literal ARN naming a
 * queue or topic the same template creates by name is followed too. Anything else (`Fn::ImportValue`, an ARN of a
 * resource outside the templates) is not followed: the caller reports the resource as not simulated. A reference to
 * another stack of the assembly (see {@link CrossStackValue}) is followed into that stack when it is selected.
 */
import { CrossStackValue } from './cross-stack-value';
import { describeExpression } from './intrinsics';
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
  BUCKET: 'AWS::S3::Bucket',
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
  // the alias's FunctionName is a value of the alias's own stack
  return qualifier === undefined ? undefined : functionByName(qualifier.template, qualifier.properties.FunctionName, depth + 1);
}

/**
 * Why `value` (of `property`) names no `what` (e.g. `a queue`) the reader follows, as a line of `notSimulated`: it is
 * not one of the stack it points into, or it points into a stack of the assembly that is not selected.
 */
export function notFollowed(template: StackTemplate, property: string, value: unknown, what: string): string {
  const expression = `${property} ${describeExpression(value)}`;
  let target: unknown = value;
  let stackName = template.stackName;
  while (target instanceof CrossStackValue) {
    stackName = target.stackName;
    if (template.index.template(stackName) === undefined) return `${expression} is in stack ${stackName}, which is not selected (add --stack ${stackName})`;
    target = target.value;
  }
  return `${expression} is not ${what} of stack ${stackName}`;
}
