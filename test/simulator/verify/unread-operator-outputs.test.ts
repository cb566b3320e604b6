/**
 * Review v11, V11-9: an `Operator` output verify cannot read (another format version of a subscriber's, a flow's
 * without `topicArn`) was skipped silently: the subscriber it describes was then named only through the topic's
 * subscriptions ("another account or Region", misleading), a flow's outbox was never scanned. Now each is named, with
 * its stack, output and why, for the verdict's NOT PROVEN; a stack holding only such an output is read too.
 * Served CloudFormation (simulator/aws/cloudformation-endpoint.ts) with hand-written stacks, read by verify's clients.
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAwsGateway } from '../../../simulator/aws/aws-gateway';
import { cloudFormationHandler, type ServedStack } from '../../../simulator/aws/cloudformation-endpoint';
import { lambdaHandler, type InvokableFunction } from '../../../simulator/aws/lambda-endpoint';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { verifyClients, type VerifyClients } from '../../../simulator/verify/clients';
import { findDeployedFlow } from '../../../simulator/verify/deployed-flow';

const ACCOUNT = '111111111111';
const stackId = (name: string, n: number) => `arn:aws:cloudformation:us-east-1:${ACCOUNT}:stack/${name}/00000000-0000-4000-8000-00000000000${n}`;
const subscriber = (name: string, format: number) => ({
  format,
  subscriberName: name,
  processingMode: 'transactional',
  deduplicationWindowSeconds: 86400,
  consumerFunctionName: `App-${name}`,
  inboxTable: `App-${name}Inbox`,
  queueUrl: `http://127.0.0.1:1/${ACCOUNT}/App-${name}Queue`,
  deadLetterQueueUrl: `http://127.0.0.1:1/${ACCOUNT}/App-${name}Dlq`,
});
const STACKS: ServedStack[] = [
  {
    stackName: 'App',
    stackId: stackId('App', 1),
    createdAt: '2026-01-01T00:00:00.000Z',
    outputs: [
      { key: 'BillingOperatorA1B2C3D4', value: JSON.stringify(subscriber('Billing', 1)) },
      // a flow's Operator output without its topic (hand-edited, another version): its outbox would go unscanned
      { key: 'OrdersOperator2D745A48', value: JSON.stringify({ outboxTable: 'App-Outbox' }), description: 'What operators of flow App/Orders need' },
    ],
    resources: [],
  },
  {
    // a stack whose only subscriber output is of another format version: without --stack it was not even read
    stackName: 'Newer',
    stackId: stackId('Newer', 2),
    createdAt: '2026-01-01T00:00:00.000Z',
    outputs: [
      { key: 'ShippingOperatorB1C2D3E4', value: JSON.stringify(subscriber('Shipping', 2)), description: 'What operators of subscriber Shipping need' },
      // not an Operator output: not named
      { key: 'SomethingElse', value: '{"unrelated":true}' },
    ],
    resources: [],
  },
];

let gateway: LoopbackServer;
let clients: VerifyClients;
const environment = { ...process.env };

beforeAll(async () => {
  const functions = new Map<string, InvokableFunction>([['App-Billing', { arn: `arn:aws:lambda:us-east-1:${ACCOUNT}:function:App-Billing`, environment: {}, invoke: async () => ({ kind: 'returned' as const, response: {} }) }]]);
  gateway = await startAwsGateway({ forward: {}, handle: { cloudformation: cloudFormationHandler(STACKS), lambda: lambdaHandler(functions, [], () => 'the test run') } });
  for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
  Object.assign(process.env, { AWS_ENDPOINT_URL: gateway.endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'simulator', AWS_SECRET_ACCESS_KEY: 'simulator' });
  clients = verifyClients();
});

afterAll(async () => {
  clients?.destroy();
  process.env = environment;
  await gateway?.stop();
});

describe('verify, Operator outputs it cannot read (review v11, V11-9)', () => {
  test('each is named with its stack, output and why; the stack holding only one is read too', async () => {
    const flow = await findDeployedFlow(clients);
    expect(flow.subscribers.map((item) => item.name)).toEqual(['Billing']);
    expect(flow.stackNames).toEqual(['App', 'Newer']);
    expect(flow.notProven).toEqual([
      expect.stringMatching(/^stack App's Operator output OrdersOperator2D745A48 could not be read as a flow's: its field\(s\) topicArn must be strings, but were absent .*was not checked$/),
      expect.stringMatching(/^stack Newer's Operator output ShippingOperatorB1C2D3E4 could not be read as a subscriber's: its field 'format' must be 1 .*was not checked$/),
    ]);
  });

  test('with --stack naming the stack of only an unreadable output, the refusal names it', async () => {
    await expect(findDeployedFlow(clients, ['Newer'])).rejects.toThrow(/no subscriber's Operator output in stack\(s\) Newer verify can read \(stack Newer's Operator output ShippingOperatorB1C2D3E4 could not be read as a subscriber's/);
  });
});
