/**
 * The served SNS endpoint answers `ListSubscriptionsByTopic` (issue 43, rv9 V-1's product half: verify lists the flow
 * topic's subscriptions to name a subscriber it cannot see): every subscription SNS would list for the topic, its own
 * deliveries and those it was given (a pending one as `PendingConfirmation`, as SNS lists it), 100 a page with a
 * `NextToken`, as SNS pages them; IAM decides it as `sns:ListSubscriptionsByTopic` (AuthorizationError, 403, when refused).
 */
import { paginateListSubscriptionsByTopic, ListSubscriptionsByTopicCommand, SNSClient, type Subscription } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { startSnsEndpoint } from '../../../simulator/aws/sns-endpoint';
import { SimulatedTopic, type ListedSubscription } from '../../../simulator/aws/topic';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import type { TopicModel } from '../../../simulator/model/flow-model';
import { frozenClock, makeQueue, queueModel } from './queue-test-kit';

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:111111111111:Events';
const topicModel: TopicModel = { key: 'Stack/Topic', stackName: 'Stack', logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 };
const REMOTE: ListedSubscription[] = Array.from({ length: 149 }, (_, index) => ({
  subscriptionArn: index === 0 ? 'PendingConfirmation' : `${TOPIC_ARN}:00000000-0000-4000-8000-${String(index).padStart(12, '0')}`,
  owner: '222222222222',
  protocol: 'sqs',
  endpoint: `arn:aws:sqs:eu-central-1:222222222222:Remote${index}`,
}));

describe('SNS endpoint: ListSubscriptionsByTopic', () => {
  const clock = frozenClock();
  const queue = makeQueue(queueModel('Billing'), { clock });
  const subscription = { key: 'Stack/Sub', stackName: 'Stack', logicalId: 'Sub', topic: topicModel.key, queue: queue.model.key, rawMessageDelivery: true, filterPolicyScope: 'MessageAttributes' as const };
  const base = { model: topicModel, arn: TOPIC_ARN, faults: new FaultPlan('s', NO_FAULTS), clock, matches: () => true };
  const topic = new SimulatedTopic({ ...base, subscriptions: [{ model: subscription, queue }], listed: [{ subscriptionArn: `${TOPIC_ARN}:own`, owner: '111111111111', protocol: 'sqs', endpoint: queue.address.arn }, ...REMOTE] });
  const bare = new SimulatedTopic({ ...base, arn: `${TOPIC_ARN}-bare`, subscriptions: [{ model: subscription, queue }] });
  const asked: { accessKeyId?: string; action: string }[] = [];
  let endpoint: LoopbackServer;
  let client: SNSClient;
  beforeAll(async () => {
    endpoint = await startSnsEndpoint({
      resolveTopic: (arn) => [topic, bare].find((candidate) => candidate.arn === arn),
      authorize: async ({ accessKeyId, action }) => {
        asked.push({ ...(accessKeyId === undefined ? {} : { accessKeyId }), action });
        return accessKeyId === 'refused' ? `User: refused is not authorized to perform: sns:${action} on resource: ${TOPIC_ARN}` : undefined;
      },
    });
    client = new SNSClient({ endpoint: endpoint.endpoint, region: 'eu-west-1', credentials: { accessKeyId: 'k', secretAccessKey: 's' }, maxAttempts: 1 });
  });
  afterAll(async () => {
    client.destroy();
    await endpoint.stop();
  });

  it('lists every subscription of the topic, 100 a page with a NextToken, a pending one as PendingConfirmation', async () => {
    const first = await client.send(new ListSubscriptionsByTopicCommand({ TopicArn: TOPIC_ARN }));
    expect(first.Subscriptions).toHaveLength(100);
    expect(first.NextToken).toEqual(expect.any(String));
    const all: Subscription[] = [];
    for await (const page of paginateListSubscriptionsByTopic({ client }, { TopicArn: TOPIC_ARN })) all.push(...(page.Subscriptions ?? []));
    expect(all).toHaveLength(150);
    expect(all[0]).toEqual({ TopicArn: TOPIC_ARN, SubscriptionArn: `${TOPIC_ARN}:own`, Owner: '111111111111', Protocol: 'sqs', Endpoint: queue.address.arn });
    expect(all[1]).toEqual({ TopicArn: TOPIC_ARN, SubscriptionArn: 'PendingConfirmation', Owner: '222222222222', Protocol: 'sqs', Endpoint: 'arn:aws:sqs:eu-central-1:222222222222:Remote0' });
    expect(all.at(-1)?.Endpoint).toBe('arn:aws:sqs:eu-central-1:222222222222:Remote148');
    expect(asked.at(-1)).toEqual({ accessKeyId: 'k', action: 'ListSubscriptionsByTopic' });
  });

  it('without a list given, lists the subscriptions it delivers to (protocol sqs, the queue ARN, the queue\'s account)', async () => {
    const listed = await client.send(new ListSubscriptionsByTopicCommand({ TopicArn: bare.arn }));
    expect(listed.Subscriptions?.map(({ Protocol, Endpoint, Owner }) => ({ Protocol, Endpoint, Owner }))).toEqual([{ Protocol: 'sqs', Endpoint: queue.address.arn, Owner: queue.address.arn.split(':')[4] }]);
    expect(listed.Subscriptions?.[0]?.SubscriptionArn).toMatch(new RegExp(`^${bare.arn}:[0-9a-f-]{36}$`));
    expect(listed.NextToken).toBeUndefined();
  });

  it('answers an unknown topic NotFound, a bad NextToken InvalidParameter, and a refused caller AuthorizationError', async () => {
    await expect(client.send(new ListSubscriptionsByTopicCommand({ TopicArn: `${TOPIC_ARN}-other` }))).rejects.toMatchObject({ name: 'NotFoundException' });
    await expect(client.send(new ListSubscriptionsByTopicCommand({ TopicArn: TOPIC_ARN, NextToken: 'not-a-token' }))).rejects.toMatchObject({ name: 'InvalidParameterException' });
    const refused = new SNSClient({ endpoint: endpoint.endpoint, region: 'eu-west-1', credentials: { accessKeyId: 'refused', secretAccessKey: 's' }, maxAttempts: 1 });
    try {
      await expect(refused.send(new ListSubscriptionsByTopicCommand({ TopicArn: TOPIC_ARN }))).rejects.toMatchObject({
        name: 'AuthorizationErrorException',
        message: expect.stringContaining('sns:ListSubscriptionsByTopic'),
      });
    } finally {
      refused.destroy();
    }
  });
});
