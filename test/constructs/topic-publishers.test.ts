import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import type { Stack } from 'aws-cdk-lib';
import { describe, expect, test } from 'vitest';
import { EventTopic, IdempotentEventFlow } from '../../lib';
import { newStack } from '../fixtures/construct-test-kit';

/** The topic policy's Deny statements on sns:Publish. */
function publishDenials(stack: Stack): Array<Record<string, unknown>> {
  const policies = Object.values(Template.fromStack(stack).findResources('AWS::SNS::TopicPolicy')) as Array<{
    Properties: { PolicyDocument: { Statement: Array<Record<string, unknown>> } };
  }>;
  return policies.flatMap((p) => p.Properties.PolicyDocument.Statement).filter((s) => s.Effect === 'Deny' && s.Action === 'sns:Publish');
}

describe('who may publish to the flow topic', () => {
  test("by default, every principal but the relay's role is denied sns:Publish", () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    expect(publishDenials(stack)).toEqual([
      {
        Sid: 'DenyPublishingToAllButTheRelay',
        Effect: 'Deny',
        Principal: { AWS: '*' },
        Action: 'sns:Publish',
        Resource: stack.resolve(flow.eventTopic.topicArn),
        Condition: { ArnNotEquals: { 'aws:PrincipalArn': [stack.resolve(flow.relay.role.roleArn)] } },
      },
    ]);
  });

  test('restrictTopicPublishers: false leaves the topic open to whoever IAM allows', () => {
    const stack = newStack();
    new IdempotentEventFlow(stack, 'Orders', { restrictTopicPublishers: false });
    expect(publishDenials(stack)).toEqual([]);
  });

  test('a role given grantPublish is allowed too; a principal that is not a role draws a warning', () => {
    const stack = newStack();
    const flow = new IdempotentEventFlow(stack, 'Orders');
    const publisher = new iam.Role(stack, 'Publisher', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    flow.eventTopic.grantPublish(publisher);
    flow.eventTopic.grantPublish(new iam.User(stack, 'Someone'));
    const [denial] = publishDenials(stack);
    expect(denial!.Condition).toEqual({
      ArnNotEquals: { 'aws:PrincipalArn': [stack.resolve(flow.relay.role.roleArn), stack.resolve(publisher.roleArn)] },
    });
    expect(Annotations.fromStack(stack).findWarning('*', Match.stringLikeRegexp('not a role'))).toHaveLength(1);
  });

  test('a standalone EventTopic restricts nobody until asked', () => {
    const stack = newStack();
    new EventTopic(stack, 'Events');
    expect(publishDenials(stack)).toEqual([]);
  });
});
