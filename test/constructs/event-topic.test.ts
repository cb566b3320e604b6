import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, test } from 'vitest';
import { EventTopic } from '../../lib/topic';

function newStack(): Stack {
  return new Stack(new App(), 'Stack');
}

/** The ARN of a topic with this name in the stack's account and Region, resolved. */
function topicArnFor(stack: Stack, topicName: string): unknown {
  return stack.resolve(stack.formatArn({ service: 'sns', resource: topicName }));
}

function topicProperties(stack: Stack): Record<string, any> {
  const topics = Template.fromStack(stack).findResources('AWS::SNS::Topic');
  expect(Object.keys(topics)).toHaveLength(1);
  return Object.values(topics)[0].Properties;
}

const SNS_DELIVERY_STATEMENT_SID = 'AllowSnsToDeliverToQueuesEncryptedWithThisKey';

describe('EventTopic', () => {
  test('creates one standard topic as its child "Resource"', () => {
    const stack = newStack();
    const events = new EventTopic(stack, 'Events');
    expect(events.node.findChild('Resource')).toBe(events.topic);
    expect(topicProperties(stack).FifoTopic).toBeUndefined();
    expect(events.topic.fifo).toBe(false);
  });

  test('exposes the topic ARN and name', () => {
    const stack = newStack();
    const events = new EventTopic(stack, 'Events', { topicName: 'order-events' });
    const topic = events.node.findChild('Resource') as sns.Topic;
    expect(stack.resolve(events.topicArn)).toEqual({ Ref: stack.getLogicalId(topic.node.defaultChild as sns.CfnTopic) });
    expect(stack.resolve(events.topicName)).toEqual(stack.resolve(topic.topicName));
  });

  test('uses the topic name and display name it is given', () => {
    const stack = newStack();
    new EventTopic(stack, 'Events', { topicName: 'order-events', displayName: 'Order events' });
    expect(topicProperties(stack)).toMatchObject({ TopicName: 'order-events', DisplayName: 'Order events' });
  });

  test('derives a valid, stable topic name from the construct path by default', () => {
    const stack = newStack();
    new EventTopic(stack, 'Events');
    const name = topicProperties(stack).TopicName;
    expect(name).toMatch(/^Stack-Events-[A-F0-9]{8}$/);
    const again = newStack();
    new EventTopic(again, 'Events');
    expect(topicProperties(again).TopicName).toBe(name);
  });

  test('accepts only TLS requests, for every SNS action', () => {
    const stack = newStack();
    const events = new EventTopic(stack, 'Events');
    const policies = Object.values(Template.fromStack(stack).findResources('AWS::SNS::TopicPolicy'));
    expect(policies).toHaveLength(1);
    expect(policies[0]!.Properties.Topics).toEqual([stack.resolve(events.topicArn)]);
    const denials = (policies[0]!.Properties.PolicyDocument.Statement as Array<Record<string, unknown>>).filter((s) => s.Effect === 'Deny');
    expect(denials).toEqual([
      {
        Sid: 'DenyEveryActionWithoutTls',
        Effect: 'Deny',
        Action: 'sns:*',
        Principal: { AWS: '*' },
        Resource: stack.resolve(events.topicArn),
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      },
    ]);
  });

  describe('encryption key', () => {
    test('is created as the child "Key" and encrypts the topic by default', () => {
      const stack = newStack();
      const events = new EventTopic(stack, 'Events');
      expect(events.node.findChild('Key')).toBe(events.encryptionKey);
      Template.fromStack(stack).resourceCountIs('AWS::KMS::Key', 1);
      expect(topicProperties(stack).KmsMasterKeyId).toEqual(stack.resolve(events.encryptionKey.keyArn));
    });

    test('rotates', () => {
      const stack = newStack();
      new EventTopic(stack, 'Events');
      Template.fromStack(stack).hasResourceProperties('AWS::KMS::Key', { EnableKeyRotation: true });
    });

    test('is retained by default', () => {
      const stack = newStack();
      new EventTopic(stack, 'Events');
      Template.fromStack(stack).hasResource('AWS::KMS::Key', { DeletionPolicy: 'Retain', UpdateReplacePolicy: 'Retain' });
    });

    test('takes the removal policy it is given', () => {
      const stack = newStack();
      new EventTopic(stack, 'Events', { removalPolicy: RemovalPolicy.DESTROY });
      Template.fromStack(stack).hasResource('AWS::KMS::Key', { DeletionPolicy: 'Delete' });
    });

    test('lets SNS deliver with it, only for this topic', () => {
      const stack = newStack();
      new EventTopic(stack, 'Events');
      Template.fromStack(stack).hasResourceProperties('AWS::KMS::Key', {
        KeyPolicy: {
          Statement: Match.arrayWith([
            {
              Sid: SNS_DELIVERY_STATEMENT_SID,
              Effect: 'Allow',
              Principal: { Service: 'sns.amazonaws.com' },
              Action: ['kms:GenerateDataKey*', 'kms:Decrypt'],
              Resource: '*',
              Condition: { ArnEquals: { 'aws:SourceArn': topicArnFor(stack, topicProperties(stack).TopicName) } },
            },
          ]),
        },
      });
    });

    test('names the topic in its policy without referencing the topic resource (no circular dependency)', () => {
      const stack = newStack();
      const events = new EventTopic(stack, 'Events');
      const topicLogicalId = stack.getLogicalId((events.topic as sns.Topic).node.defaultChild as sns.CfnTopic);
      const keys = Template.fromStack(stack).findResources('AWS::KMS::Key');
      expect(JSON.stringify(Object.values(keys)[0])).not.toContain(topicLogicalId);
    });

    test('is the key it is given, which gets the SNS delivery statement', () => {
      const stack = newStack();
      const key = new kms.Key(stack, 'SharedKey');
      const events = new EventTopic(stack, 'Events', { encryptionKey: key, topicName: 'order-events' });
      expect(events.encryptionKey).toBe(key);
      Template.fromStack(stack).resourceCountIs('AWS::KMS::Key', 1);
      expect(topicProperties(stack).KmsMasterKeyId).toEqual(stack.resolve(key.keyArn));
      Template.fromStack(stack).hasResourceProperties('AWS::KMS::Key', {
        KeyPolicy: {
          Statement: Match.arrayWith([
            Match.objectLike({
              Sid: SNS_DELIVERY_STATEMENT_SID,
              Condition: { ArnEquals: { 'aws:SourceArn': topicArnFor(stack, 'order-events') } },
            }),
          ]),
        },
      });
    });

    test('warns that an imported key needs the SNS delivery statement added by hand', () => {
      const stack = newStack();
      const key = kms.Key.fromKeyArn(stack, 'Imported', 'arn:aws:kms:eu-west-1:111111111111:key/shared');
      new EventTopic(stack, 'Events', { encryptionKey: key });
      Annotations.fromStack(stack).hasWarning(
        '/Stack/Events',
        Match.stringLikeRegexp('key policy of the imported encryptionKey can not be changed.*sns\\.amazonaws\\.com'),
      );
    });

    test('does not warn about a key defined in the app', () => {
      const stack = newStack();
      new EventTopic(stack, 'Events');
      Annotations.fromStack(stack).hasNoWarning('*', Match.anyValue());
    });
  });

  describe('grantPublish', () => {
    test('grants sns:Publish on the topic and kms:Decrypt and kms:GenerateDataKey on its key', () => {
      const stack = newStack();
      const events = new EventTopic(stack, 'Events');
      const role = new iam.Role(stack, 'Publisher', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
      events.grantPublish(role);
      Template.fromStack(stack).hasResourceProperties('AWS::IAM::Policy', {
        PolicyDocument: {
          Statement: [
            { Action: 'sns:Publish', Effect: 'Allow', Resource: stack.resolve(events.topicArn) },
            { Action: ['kms:Decrypt', 'kms:GenerateDataKey'], Effect: 'Allow', Resource: stack.resolve(events.encryptionKey.keyArn) },
          ],
        },
      });
    });
  });

  describe('metrics', () => {
    test('metricNumberOfNotificationsFailed() is the topic metric', () => {
      const stack = newStack();
      const events = new EventTopic(stack, 'Events');
      const metric = events.metricNumberOfNotificationsFailed();
      expect([metric.namespace, metric.metricName]).toEqual(['AWS/SNS', 'NumberOfNotificationsFailed']);
      expect(stack.resolve(metric.dimensions)).toEqual({ TopicName: stack.resolve(events.topicName) });
    });

    test('metricNumberOfMessagesPublished() is the topic metric', () => {
      const stack = newStack();
      const metric = new EventTopic(stack, 'Events').metricNumberOfMessagesPublished();
      expect([metric.namespace, metric.metricName]).toEqual(['AWS/SNS', 'NumberOfMessagesPublished']);
    });
  });

  describe('validation', () => {
    test('fails if topicName has characters SNS does not allow', () => {
      const stack = newStack();
      expect(() => new EventTopic(stack, 'Events', { topicName: 'order.events' })).toThrow(
        /EventTopic 'Events': topicName must be 1 to 256 of .*, but 'order.events' was provided/,
      );
    });

    test('fails if topicName is a FIFO name', () => {
      const stack = newStack();
      expect(() => new EventTopic(stack, 'Events', { topicName: 'events.fifo' })).toThrow(/topicName must be 1 to 256/);
    });
  });
});
