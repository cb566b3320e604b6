/**
 * rv9 V-1's product half (issue 43): verify finds subscribers with CloudFormation, which lists the stacks of one account
 * and Region only, so a subscriber deployed elsewhere is not found. The flow's topic knows them all: verify lists its
 * subscriptions (sns:ListSubscriptionsByTopic, the topic's ARN from the flow's Operator output) and every subscription
 * whose endpoint is not the queue of a subscriber it found makes the verdict NOT PROVEN, naming the queue's ARN, its
 * account and Region and what to do; a subscription pending confirmation, or of another protocol, is named as such.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAwsGateway } from '../../../simulator/aws/aws-gateway';
import { cloudFormationHandler, type ServedStack } from '../../../simulator/aws/cloudformation-endpoint';
import { lambdaHandler, type InvokableFunction } from '../../../simulator/aws/lambda-endpoint';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { startSnsEndpoint } from '../../../simulator/aws/sns-endpoint';
import { SimulatedTopic } from '../../../simulator/aws/topic';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import { verifyClients, type VerifyClients } from '../../../simulator/verify/clients';
import { findDeployedFlow } from '../../../simulator/verify/deployed-flow';
import { subscriptionGaps, subscriptionsNotSeen } from '../../../simulator/verify/topic-subscriptions';
import { verifyVerdict } from '../../../simulator/verify/verdict';
import { frozenClock } from '../aws/queue-test-kit';

const FLOW = '111111111111';
const LEDGER = '222222222222';
const TOPIC = `arn:aws:sns:us-east-1:${FLOW}:Events`;
const queueUrl = (name: string, account: string, region: string): string => `https://sqs.${region}.amazonaws.com/${account}/${name}Queue`;
const queueArn = (name: string, account: string, region: string): string => `arn:aws:sqs:${region}:${account}:${name}Queue`;
const subscriber = (name: string, account: string, region: string) => ({
  format: 1,
  subscriberName: name,
  processingMode: 'transactional',
  deduplicationWindowSeconds: 86400,
  inboxTable: `${name}Inbox`,
  consumerFunctionName: `${name}Consumer`,
  queueUrl: queueUrl(name, account, region),
  deadLetterQueueUrl: `https://sqs.${region}.amazonaws.com/${account}/${name}Dlq`,
});
const found = [{ name: 'Billing', deployment: { queueUrl: queueUrl('Billing', FLOW, 'us-east-1') } }];
const confirmed = (name: string, account: string, region: string) => ({ subscriptionArn: `${TOPIC}:${name}`, owner: account, protocol: 'sqs', endpoint: queueArn(name, account, region) });

describe('subscriptionGaps: the topic\'s subscriptions verify found no subscriber for', () => {
  test('a found subscriber\'s queue is no gap; a queue of another Region or account is, named with its account, Region and what to do', () => {
    const lines = subscriptionGaps(TOPIC, [confirmed('Billing', FLOW, 'us-east-1'), confirmed('Reports', FLOW, 'eu-central-1'), confirmed('Ledger', LEDGER, 'us-east-1')], found);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain(`queue ${queueArn('Reports', FLOW, 'eu-central-1')} (account ${FLOW}, Region eu-central-1)`);
    expect(lines[1]).toContain(`queue ${queueArn('Ledger', LEDGER, 'us-east-1')} (account ${LEDGER}, Region us-east-1)`);
    for (const line of lines) {
      expect(line).toContain(`topic ${TOPIC}`);
      expect(line).toMatch(/no subscriber verify found.*its events were not checked.*run verify there too.*or give verify credentials/);
    }
  });

  test('a queue of the same account and name in another Region than the found subscriber\'s is a gap (the queue URL\'s Region counts)', () => {
    expect(subscriptionGaps(TOPIC, [confirmed('Billing', FLOW, 'eu-west-1')], found)).toHaveLength(1);
    // a served queue URL names no Region: the account and name decide
    expect(subscriptionGaps(TOPIC, [confirmed('Billing', FLOW, 'eu-west-1')], [{ deployment: { queueUrl: `http://127.0.0.1:4566/${FLOW}/BillingQueue` } }])).toEqual([]);
    expect(subscriptionGaps(TOPIC, [confirmed('Billing', LEDGER, 'eu-west-1')], [{ deployment: { queueUrl: `http://127.0.0.1:4566/${FLOW}/BillingQueue` } }])).toHaveLength(1);
  });

  test('a pending subscription and one of another protocol are named as such, even to a found subscriber\'s queue', () => {
    const [pending, http] = subscriptionGaps(
      TOPIC,
      [
        { ...confirmed('Billing', FLOW, 'us-east-1'), subscriptionArn: 'PendingConfirmation' },
        { subscriptionArn: `${TOPIC}:web`, owner: FLOW, protocol: 'https', endpoint: 'https://hooks.example.com/orders' },
      ],
      found,
    );
    expect(pending).toMatch(new RegExp(`subscription to queue ${queueArn('Billing', FLOW, 'us-east-1')} \\(account ${FLOW}, Region us-east-1\\) is pending confirmation`));
    expect(pending).toMatch(/SNS delivers nothing through it until/);
    expect(http).toContain(`subscription ${TOPIC}:web (protocol https, endpoint https://hooks.example.com/orders) is not an SQS queue`);
  });
});

describe('subscriptionsNotSeen, against the served gateway', () => {
  const stack = (name: string, account: string, region: string, outputs: ServedStack['outputs']): ServedStack => ({
    stackName: name,
    stackId: `arn:aws:cloudformation:${region}:${account}:stack/${name}/00000000-0000-4000-8000-000000000001`,
    createdAt: '2026-01-01T00:00:00.000Z',
    outputs,
    resources: [],
  });
  const STACKS: ServedStack[] = [
    stack('Payments', FLOW, 'us-east-1', [
      { key: 'FlowOperator', value: JSON.stringify({ outboxTable: 'Outbox', topicArn: TOPIC }) },
      { key: 'BillingOperator', value: JSON.stringify(subscriber('Billing', FLOW, 'us-east-1')) },
    ]),
    stack('Reports', FLOW, 'eu-central-1', [{ key: 'ReportsOperator', value: JSON.stringify(subscriber('Reports', FLOW, 'eu-central-1')) }]),
    stack('Ledger', LEDGER, 'us-east-1', [{ key: 'LedgerOperator', value: JSON.stringify(subscriber('Ledger', LEDGER, 'us-east-1')) }]),
  ];
  const topic = new SimulatedTopic({
    model: { key: 'Payments/Topic', stackName: 'Payments', logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 },
    arn: TOPIC,
    subscriptions: [],
    listed: [confirmed('Billing', FLOW, 'us-east-1'), confirmed('Reports', FLOW, 'eu-central-1'), confirmed('Ledger', LEDGER, 'us-east-1')],
    faults: new FaultPlan('s', NO_FAULTS),
    clock: frozenClock(),
    matches: () => true,
  });
  let refuse = false;
  let sns: LoopbackServer;
  let gateway: LoopbackServer;
  let clients: VerifyClients;
  const environment = { ...process.env };

  beforeAll(async () => {
    sns = await startSnsEndpoint({ resolveTopic: (arn) => (arn === TOPIC ? topic : undefined), authorize: async ({ action }) => (refuse ? `not authorized to perform: sns:${action}` : undefined) });
    const functions = new Map<string, InvokableFunction>([['BillingConsumer', { arn: `arn:aws:lambda:us-east-1:${FLOW}:function:BillingConsumer`, environment: {}, invoke: async () => ({ kind: 'returned' as const, response: {} }) }]]);
    gateway = await startAwsGateway({ forward: { sns: sns.endpoint }, handle: { cloudformation: cloudFormationHandler(STACKS), lambda: lambdaHandler(functions, [], () => 'the test run') } });
    for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
    // signed as account 111111111111 in us-east-1: CloudFormation lists Payments only (as AWS would)
    Object.assign(process.env, { AWS_ENDPOINT_URL: gateway.endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: FLOW, AWS_SECRET_ACCESS_KEY: 'simulator' });
    clients = verifyClients();
  });

  afterAll(async () => {
    clients.destroy();
    process.env = environment;
    await gateway.stop();
    await sns.stop();
  });

  test('names the subscribers of another Region and account the stacks did not show, and the verdict is NOT PROVEN', async () => {
    const flow = await findDeployedFlow(clients);
    expect(flow.subscribers.map((item) => item.name)).toEqual(['Billing']);
    expect(flow.flows.map((item) => item.topicArn)).toEqual([TOPIC]);
    const lines = await subscriptionsNotSeen(clients, flow);
    expect(lines).toEqual([expect.stringContaining(queueArn('Reports', FLOW, 'eu-central-1')), expect.stringContaining(queueArn('Ledger', LEDGER, 'us-east-1'))]);
    const verdict = verifyVerdict({ runId: 'r', seed: 's', stacks: flow.stackNames, producer: { total: 1, succeeded: 1, retried: 0, failed: [] }, committedEvents: 1, eventIds: ['e'], derivedEvents: [], subscribers: [{ name: 'Billing', events: 1, deadLettered: 0 }], deadLetters: {}, violations: [], effectsNotCounted: [], unproven: lines });
    expect(verdict.status).toBe('NOT PROVEN');
  });

  test('a refused ListSubscriptionsByTopic is itself a gap, naming the permission', async () => {
    refuse = true;
    try {
      const lines = await subscriptionsNotSeen(clients, await findDeployedFlow(clients));
      expect(lines).toEqual([expect.stringMatching(new RegExp(`could not list the subscriptions of topic ${TOPIC}.*AuthorizationError.*sns:ListSubscriptionsByTopic`))]);
    } finally {
      refuse = false;
    }
  });
});
