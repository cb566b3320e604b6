/**
 * An app with the ordered path (OrderedRelay: a Pipe to an SQS FIFO queue, an SNS FIFO topic and FIFO subscriptions)
 * is still simulated for the rest of its flow: the FIFO topic and what hangs on it are listed as not simulated, instead
 * of a run that stops because the simulator's topics are standard only.
 */
import * as fs from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { nodeFunction, writeAsset, writeAssembly } from './assembly-fixture';

const created: string[] = [];
afterEach(() => {
  for (const directory of created.splice(0)) fs.rmSync(directory, { recursive: true, force: true });
});

const arn = (logicalId: string): unknown => ({ 'Fn::GetAtt': [logicalId, 'Arn'] });

it('reads an app with an SNS FIFO topic: the topic, its subscription and the pipe to a FIFO queue are not simulated, the standard flow is', () => {
  const directory = writeAssembly({
    Shop: {
      template: {
        Resources: {
          Outbox: {
            Type: 'AWS::DynamoDB::Table',
            Properties: {
              KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
              AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
              StreamSpecification: { StreamViewType: 'NEW_IMAGE' },
            },
          },
          Relay: {
            Type: 'AWS::Pipes::Pipe',
            Properties: { Source: { 'Fn::GetAtt': ['Outbox', 'StreamArn'] }, Target: { Ref: 'Topic' }, RoleArn: 'arn:aws:iam::123456789012:role/relay', SourceParameters: { DynamoDBStreamParameters: { StartingPosition: 'LATEST' } } },
          },
          Topic: { Type: 'AWS::SNS::Topic' },
          OrderedPipe: {
            Type: 'AWS::Pipes::Pipe',
            Properties: { Source: { 'Fn::GetAtt': ['Outbox', 'StreamArn'] }, Target: arn('RelayQueue'), RoleArn: 'arn:aws:iam::123456789012:role/ordered', SourceParameters: { DynamoDBStreamParameters: { StartingPosition: 'TRIM_HORIZON' } } },
          },
          RelayQueue: { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true } },
          OrderedTopic: { Type: 'AWS::SNS::Topic', Properties: { FifoTopic: true, TopicName: 'ordered.fifo' } },
          OrderedQueue: { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true } },
          OrderedSubscription: { Type: 'AWS::SNS::Subscription', Properties: { Protocol: 'sqs', TopicArn: { Ref: 'OrderedTopic' }, Endpoint: arn('OrderedQueue'), RawMessageDelivery: true } },
          Mapping: { Type: 'AWS::Lambda::EventSourceMapping', Properties: { EventSourceArn: arn('OrderedQueue'), FunctionName: { Ref: 'Consumer' } } },
          Consumer: nodeFunction('asset.fn'),
        },
      },
    },
  });
  created.push(directory);
  writeAsset(directory, 'asset.fn');
  const model = readAssembly(directory);
  expect(model.topics.map((topic) => topic.key)).toEqual(['Shop/Topic']);
  expect(model.subscriptions).toEqual([]);
  expect(model.relays.map((relay) => relay.key)).toEqual(['Shop/Relay']);
  expect(model.queues.map((queue) => [queue.key, queue.fifo])).toEqual([
    ['Shop/RelayQueue', true],
    ['Shop/OrderedQueue', true],
  ]);
  expect(model.notSimulated).toEqual([
    expect.stringMatching(/^AWS::Pipes::Pipe Shop\/OrderedPipe: Target .* is not an SNS topic/),
    expect.stringMatching(/^AWS::SNS::Topic Shop\/OrderedTopic: FIFO topics are not simulated yet/),
    expect.stringMatching(/^AWS::SNS::Subscription Shop\/OrderedSubscription: its topic .*OrderedTopic.* is a FIFO topic/),
  ]);
});
