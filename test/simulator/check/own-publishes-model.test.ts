/**
 * The ordered path's event topic as a template names it: the fan-out's `IEF_ORDERED_TOPIC_ARN` is a `Ref` of the
 * topic's logical id in the fan-out's stack, which the check resolves to the topic's key.
 */
import * as fs from 'node:fs';
import { afterEach, describe, expect, test } from 'vitest';
import { readAssembly } from '../../../simulator/model/read-assembly';
import { relayPublishersOf } from '../../../simulator/check/own-publishes';
import { nodeFunction, writeAsset, writeAssembly } from '../model/assembly-fixture';

const created: string[] = [];
afterEach(() => { for (const d of created.splice(0)) fs.rmSync(d, { recursive: true, force: true }); });
function shop(resources: Record<string, unknown>): string {
  const directory = writeAssembly({ Shop: { template: { Resources: resources } } });
  created.push(directory);
  writeAsset(directory, 'asset.fn');
  return directory;
}
const arn = (id: string): unknown => ({ 'Fn::GetAtt': [id, 'Arn'] });
const ORDERED = {
  Outbox: { Type: 'AWS::DynamoDB::Table', Properties: { KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }], AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }], StreamSpecification: { StreamViewType: 'NEW_IMAGE' } } },
  Relay: { Type: 'AWS::Pipes::Pipe', Properties: { Source: { 'Fn::GetAtt': ['Outbox', 'StreamArn'] }, Target: arn('RelayQueue'), RoleArn: 'arn:aws:iam::123456789012:role/relay', SourceParameters: { DynamoDBStreamParameters: { StartingPosition: 'LATEST' } }, TargetParameters: { SqsQueueParameters: { MessageGroupId: '$.dynamodb.Keys.pk.S' } } } },
  RelayQueue: { Type: 'AWS::SQS::Queue', Properties: { FifoQueue: true } },
  FanOutMapping: { Type: 'AWS::Lambda::EventSourceMapping', Properties: { EventSourceArn: arn('RelayQueue'), FunctionName: { Ref: 'FanOut' } } },
  FanOut: nodeFunction('asset.fn', { Environment: { Variables: { IEF_ORDERED_TOPIC_ARN: { Ref: 'OrderedTopic' } } } }),
  OrderedTopic: { Type: 'AWS::SNS::Topic', Properties: { TopicName: 'events.fifo', FifoTopic: true } },
};

describe('relayPublishersOf on a model read from a template', () => {
  test('names the ordered topic, which the fan-out names by `Ref` of its logical id, an event topic', () => {
    const model = readAssembly(shop(ORDERED));

    const relay = relayPublishersOf(model);

    expect([...relay.relayFunctions]).toEqual(['Shop/FanOut']);
    expect([...relay.eventTopics]).toEqual(['Shop/OrderedTopic']);
  });
});

