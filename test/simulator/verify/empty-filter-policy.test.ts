/**
 * Review r13, R13-5: the SNS guide ("Removing a subscription filter policy") removes a subscription's filter policy by
 * overwriting it with an empty JSON body, `{}`: "After you remove the policy, the subscription accepts every message".
 * verify compiled the deployed `{}`, refused it ("an empty object is not allowed") and said NOT PROVEN for a flow that
 * delivers everything. A FilterPolicy of `{}` is now no policy: the subscriber takes every run event.
 * https://docs.aws.amazon.com/sns/latest/dg/message-filtering-policy-remove.html
 */
import type { SNSClient } from '@aws-sdk/client-sns';
import { expect, test } from 'vitest';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import { takenEvents, type RunEvent } from '../../../simulator/verify/observe';
import { readSubscriptionFilters } from '../../../simulator/verify/subscription-filters';

const ACCOUNT = '111111111111';
const TOPIC = `arn:aws:sns:us-east-1:${ACCOUNT}:Events`;
const SUBSCRIPTION = `${TOPIC}:shipping-0000-4000-8000-000000000000`;

function runEvent(id: string, type: string): RunEvent {
  const event = { id, type, data: { orderId: id } };
  return { event, body: JSON.stringify({ specversion: '1.0', source: 'test', ...event }), ordered: false };
}

test.each(['MessageBody', 'MessageAttributes'])('a subscription whose FilterPolicy is {} (scope %s) takes every run event, and is no NOT PROVEN', async (scope) => {
  const sns = { send: async () => ({ Attributes: { FilterPolicy: '{}', FilterPolicyScope: scope } }) } as unknown as SNSClient;
  const flow: DeployedFlow = {
    stackNames: ['App'],
    flows: [{ outboxTable: 'App-Outbox', topicArn: TOPIC }],
    resources: [],
    subscribers: [
      {
        name: 'Shipping',
        stackName: 'App',
        environment: {},
        deployment: { format: 1, subscriberName: 'Shipping', processingMode: 'transactional', queueUrl: `http://127.0.0.1:1/${ACCOUNT}/ShippingQueue`, deadLetterQueueUrl: `http://127.0.0.1:1/${ACCOUNT}/ShippingDlq`, filterPolicy: { type: ['com.example.OrderPlaced'] }, filterPolicyScope: 'MessageBody' },
      },
    ],
  };
  const listed = [{ subscriptionArn: SUBSCRIPTION, owner: ACCOUNT, protocol: 'sqs', endpoint: `arn:aws:sqs:us-east-1:${ACCOUNT}:ShippingQueue` }];
  const read = await readSubscriptionFilters({ sns }, flow, listed, []);
  expect(read.notProven).toEqual([]);
  const events = new Map([runEvent('placed-1', 'com.example.OrderPlaced'), runEvent('billed-1', 'com.example.OrderBilled')].map((item) => [item.event.id, item]));
  expect([...takenEvents(read.flow.subscribers[0]!, events)].sort()).toEqual(['billed-1', 'placed-1']);
});
