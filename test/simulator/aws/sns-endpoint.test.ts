import { PublishBatchCommand, PublishCommand, SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { startSnsEndpoint } from '../../../simulator/aws/sns-endpoint';
import { SimulatedTopic } from '../../../simulator/aws/topic';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import type { TopicModel } from '../../../simulator/model/flow-model';
import { frozenClock, makeQueue, queueModel } from './queue-test-kit';

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:000000000000:ordered.fifo';
const topicModel: TopicModel = { key: 'Stack/Topic', stackName: 'Stack', logicalId: 'Topic', fifo: true, maximumMessageSize: 262_144 };

describe('SNS endpoint (Query protocol, the real SNSClient)', () => {
  const clock = frozenClock();
  const queue = makeQueue(queueModel('Ordered', { fifo: true }), { clock });
  const topic = new SimulatedTopic({
    model: topicModel,
    arn: TOPIC_ARN,
    subscriptions: [
      {
        model: { key: 'Stack/Sub', stackName: 'Stack', logicalId: 'Sub', topic: topicModel.key, queue: queue.model.key, rawMessageDelivery: true, filterPolicyScope: 'MessageAttributes' },
        queue,
      },
    ],
    faults: new FaultPlan('s', NO_FAULTS),
    clock,
    matches: () => true,
  });
  let endpoint: LoopbackServer;
  let client: SNSClient;
  beforeAll(async () => {
    endpoint = await startSnsEndpoint({ resolveTopic: (arn) => (arn === TOPIC_ARN ? topic : undefined) });
    client = new SNSClient({ endpoint: endpoint.endpoint, region: 'eu-west-1', credentials: { accessKeyId: 'k', secretAccessKey: 's' }, maxAttempts: 1 });
  });
  afterAll(async () => {
    client.destroy();
    await endpoint.stop();
  });

  it('Publish and PublishBatch deliver to the FIFO subscription with group and deduplication ids; a repeated id is answered, not delivered', async () => {
    const first = await client.send(
      new PublishCommand({
        TopicArn: TOPIC_ARN,
        Message: '{"id":"a-1"}',
        MessageGroupId: 'A',
        MessageDeduplicationId: 'a-1',
        MessageAttributes: { kind: { DataType: 'String', StringValue: 'order' } },
      }),
    );
    expect(first.MessageId).toEqual(expect.any(String));
    const again = await client.send(new PublishCommand({ TopicArn: TOPIC_ARN, Message: '{"id":"a-1"}', MessageGroupId: 'A', MessageDeduplicationId: 'a-1' }));
    expect(again.MessageId).toBe(first.MessageId);
    const batch = await client.send(
      new PublishBatchCommand({
        TopicArn: TOPIC_ARN,
        PublishBatchRequestEntries: [
          { Id: 'one', Message: '{"id":"a-2"}', MessageGroupId: 'A', MessageDeduplicationId: 'a-2' },
          { Id: 'two', Message: '{"id":"b-1"}', MessageDeduplicationId: 'b-1' },
        ],
      }),
    );
    expect(batch.Successful?.map((entry) => entry.Id)).toEqual(['one']);
    expect(batch.Failed?.map((entry) => [entry.Id, entry.Code])).toEqual([['two', 'InvalidParameter']]);
    const received = queue.receive(10);
    expect(received.map((message) => [message.body, message.attributes.MessageGroupId, message.attributes.MessageDeduplicationId])).toEqual([
      ['{"id":"a-1"}', 'A', 'a-1'],
      ['{"id":"a-2"}', 'A', 'a-2'],
    ]);
    expect(received[0]?.messageAttributes).toEqual({ kind: { DataType: 'String', StringValue: 'order' } });
  });

  it('answers a FIFO publish without a group id with InvalidParameter, an unknown topic with NotFound, another action with InvalidAction', async () => {
    await expect(client.send(new PublishCommand({ TopicArn: TOPIC_ARN, Message: 'x', MessageDeduplicationId: 'x' }))).rejects.toMatchObject({
      name: 'InvalidParameterException',
      message: expect.stringMatching(/MessageGroupId parameter is required/),
    });
    await expect(client.send(new PublishCommand({ TopicArn: `${TOPIC_ARN}-other`, Message: 'x' }))).rejects.toMatchObject({ name: 'NotFoundException' });
    const response = await fetch(endpoint.endpoint, { method: 'POST', body: 'Action=CreateTopic&Name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
    expect(response.status).toBe(400);
    expect(await response.text()).toMatch(/<Code>InvalidAction<\/Code>/);
  });
});
