/**
 * The SNS endpoint tells the run's observer each message a function published (each accepted PublishBatch entry),
 * named by the sender's endpoint path; a publish without one (an operator's, through a served run) is not told.
 */
import { describe, expect, test } from 'vitest';
import { PublishBatchCommand, PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { startSnsEndpoint } from '../../../simulator/aws/sns-endpoint';
import { SimulatedTopic } from '../../../simulator/aws/topic';
import { SqsSenders } from '../../../simulator/aws/sqs-senders';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import type { AppPublish } from '../../../simulator/observation/observer';
import { frozenClock, makeQueue, queueModel } from './queue-test-kit';

describe('the SNS endpoint observer', () => {
  test('tells each PublishBatch entry with its function and invocation, and not a publish without a sender path', async () => {
    const clock = frozenClock();
    const queue = makeQueue(queueModel('Sub'), { clock });
    const topicModel = { key: 'Stack/Topic', stackName: 'Stack', logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 };
    const arn = 'arn:aws:sns:eu-west-1:000000000000:events';
    const topic = new SimulatedTopic({ model: topicModel, arn, subscriptions: [{ model: { key: 'Stack/S', stackName: 'Stack', logicalId: 'S', topic: 'Stack/Topic', queue: queue.model.key, rawMessageDelivery: true, filterPolicyScope: 'MessageAttributes' }, queue }], faults: new FaultPlan('s', NO_FAULTS), clock, matches: () => true } as never);
    const told: AppPublish[] = [];
    const senders = new SqsSenders();
    const registration = senders.register('Stack/Producer', 'Shop/Producer');
    registration.begin({ invocation: 'Stack/Producer#1', eventIds: [] });
    const endpoint = await startSnsEndpoint({ resolveTopic: (a) => (a === arn ? topic : undefined), senders, observer: { onAppPublish: (p) => told.push(p) } });
    const creds = { region: 'eu-west-1', credentials: { accessKeyId: 'k', secretAccessKey: 's' }, maxAttempts: 1 };
    const client = new SNSClient({ endpoint: `${endpoint.endpoint}${registration.path}`, ...creds });
    const bare = new SNSClient({ endpoint: endpoint.endpoint, ...creds });
    await client.send(new PublishBatchCommand({ TopicArn: arn, PublishBatchRequestEntries: [{ Id: 'a', Message: '{"id":"e-1"}' }, { Id: 'b', Message: '{"id":"e-2"}' }] }));
    await bare.send(new PublishCommand({ TopicArn: arn, Message: '{"id":"e-3"}' }));
    const delivered = queue.receive(10).map((message) => message.body);
    client.destroy(); bare.destroy(); await endpoint.stop();
    expect(told.map((told) => [told.functionKey, told.invocation, told.topic, told.eventId])).toEqual([
      ['Stack/Producer', 'Stack/Producer#1', 'Stack/Topic', 'e-1'],
      ['Stack/Producer', 'Stack/Producer#1', 'Stack/Topic', 'e-2'],
    ]);
    // the path-less publish is delivered all the same
    expect(delivered.sort()).toEqual(['{"id":"e-1"}', '{"id":"e-2"}', '{"id":"e-3"}']);
  });
});
