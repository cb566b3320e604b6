/**
 * The served SNS endpoint answers `GetSubscriptionAttributes` (review v11, V11-6: verify matches the run's events with
 * the filter policy the deployed subscription has, not with what its Operator output says): a subscription's attributes
 * as SNS answers them for an SQS endpoint, every value a string (`FilterPolicy` the policy's JSON text, with its
 * `FilterPolicyScope`; `RawMessageDelivery` `true`/`false`; `RedrivePolicy` `{"deadLetterTargetArn":...}`); a
 * subscription the topic does not have is `NotFound` (404); IAM decides it as `sns:GetSubscriptionAttributes` on the
 * subscription's topic (AuthorizationError, 403, when refused).
 */
import { GetSubscriptionAttributesCommand, SNSClient } from '@aws-sdk/client-sns';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { startSnsEndpoint } from '../../../simulator/aws/sns-endpoint';
import { SimulatedTopic } from '../../../simulator/aws/topic';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import type { SubscriptionModel, TopicModel } from '../../../simulator/model/flow-model';
import { frozenClock, makeQueue, queueModel } from './queue-test-kit';

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:111111111111:Events';
const topicModel: TopicModel = { key: 'Stack/Topic', stackName: 'Stack', logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 };

describe('SNS endpoint: GetSubscriptionAttributes', () => {
  const clock = frozenClock();
  const billing = makeQueue(queueModel('Billing'), { clock });
  const billingDlq = makeQueue(queueModel('BillingSubscriptionDlq'), { clock });
  const audit = makeQueue(queueModel('Audit'), { clock });
  const filtered: SubscriptionModel = {
    key: 'Stack/BillingSub', stackName: 'Stack', logicalId: 'BillingSub', topic: topicModel.key, queue: billing.model.key, rawMessageDelivery: true,
    filterPolicy: { type: ['OrderPlaced', { prefix: 'Order' }] }, filterPolicyScope: 'MessageBody', deadLetterQueue: billingDlq.model.key,
  };
  const plain: SubscriptionModel = { key: 'Stack/AuditSub', stackName: 'Stack', logicalId: 'AuditSub', topic: topicModel.key, queue: audit.model.key, rawMessageDelivery: false, filterPolicyScope: 'MessageAttributes' };
  const topic = new SimulatedTopic({
    model: topicModel, arn: TOPIC_ARN, faults: new FaultPlan('s', NO_FAULTS), clock, matches: () => true,
    subscriptions: [{ model: filtered, queue: billing, deadLetterQueue: billingDlq }, { model: plain, queue: audit }],
  });
  const asked: { accessKeyId?: string; action: string; topic: string }[] = [];
  let endpoint: LoopbackServer;
  let client: SNSClient;
  beforeAll(async () => {
    endpoint = await startSnsEndpoint({
      resolveTopic: (arn) => (arn === TOPIC_ARN ? topic : undefined),
      authorize: async ({ accessKeyId, action, topic: asking }) => {
        asked.push({ ...(accessKeyId === undefined ? {} : { accessKeyId }), action, topic: asking.arn });
        return accessKeyId === 'refused' ? `User: refused is not authorized to perform: sns:${action} on resource: ${TOPIC_ARN}` : undefined;
      },
    });
    client = new SNSClient({ endpoint: endpoint.endpoint, region: 'eu-west-1', credentials: { accessKeyId: 'k', secretAccessKey: 's' }, maxAttempts: 1 });
  });
  afterAll(async () => {
    client.destroy();
    await endpoint.stop();
  });

  test("answers a filtered subscription's attributes as SNS does: the policy as JSON text, its scope, raw delivery, its redrive policy", async () => {
    const [listed] = topic.subscriptionList();
    const answer = await client.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: listed!.subscriptionArn }));
    expect(answer.Attributes).toEqual({
      ConfirmationWasAuthenticated: 'true',
      Endpoint: billing.address.arn,
      FilterPolicy: JSON.stringify(filtered.filterPolicy),
      FilterPolicyScope: 'MessageBody',
      Owner: billing.address.arn.split(':')[4],
      PendingConfirmation: 'false',
      Protocol: 'sqs',
      RawMessageDelivery: 'true',
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: billingDlq.address.arn }),
      SubscriptionArn: listed!.subscriptionArn,
      TopicArn: TOPIC_ARN,
    });
    expect(JSON.parse(answer.Attributes!.FilterPolicy!)).toEqual(filtered.filterPolicy);
    expect(asked.at(-1)).toEqual({ accessKeyId: 'k', action: 'GetSubscriptionAttributes', topic: TOPIC_ARN });
  });

  test('a subscription without a filter policy has no FilterPolicy nor FilterPolicyScope, and no RedrivePolicy without a dead-letter queue', async () => {
    const answer = await client.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: topic.subscriptionList()[1]!.subscriptionArn }));
    expect(answer.Attributes).not.toHaveProperty('FilterPolicy');
    expect(answer.Attributes).not.toHaveProperty('FilterPolicyScope');
    expect(answer.Attributes).not.toHaveProperty('RedrivePolicy');
    expect(answer.Attributes).toMatchObject({ RawMessageDelivery: 'false', Endpoint: audit.address.arn });
  });

  test('fails with NotFound for a subscription the topic does not have, InvalidParameter for what is no subscription ARN, AuthorizationError when IAM refuses', async () => {
    await expect(client.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: `${TOPIC_ARN}:00000000-0000-4000-8000-000000000000` }))).rejects.toMatchObject({ name: 'NotFoundException', $metadata: { httpStatusCode: 404 } });
    await expect(client.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: `${TOPIC_ARN}-other:00000000-0000-4000-8000-000000000000` }))).rejects.toMatchObject({ name: 'NotFoundException' });
    await expect(client.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: 'PendingConfirmation' }))).rejects.toMatchObject({ name: 'InvalidParameterException' });
    const refused = new SNSClient({ endpoint: endpoint.endpoint, region: 'eu-west-1', credentials: { accessKeyId: 'refused', secretAccessKey: 's' }, maxAttempts: 1 });
    try {
      await expect(refused.send(new GetSubscriptionAttributesCommand({ SubscriptionArn: topic.subscriptionList()[0]!.subscriptionArn }))).rejects.toMatchObject({
        name: 'AuthorizationErrorException',
        message: expect.stringContaining('sns:GetSubscriptionAttributes'),
        $metadata: { httpStatusCode: 403 },
      });
    } finally {
      refused.destroy();
    }
  });
});
