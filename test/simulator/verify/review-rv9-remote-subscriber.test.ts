/**
 * Review rv9, V-1 (red, product not fixed): verify finds a flow's subscribers with CloudFormation's DescribeStacks in
 * the caller's account and Region. On AWS that call lists only the stacks of that account and Region ("Returns the
 * description for the specified stack; if no stack name was specified, then it returns the description for all the
 * stacks created": a stack is a regional resource of one account), so a subscriber deployed in another account or
 * Region (docs/CROSS-ACCOUNT.md) is not seen, is not checked, and verify says OK over the subscribers it did see.
 * The served stand-in (`simulate --serve`) hides this: its CloudFormation answers every caller with every stack of the
 * app, whatever the account and Region the request is signed for, so verify.int's OK on the cross-account example
 * checks a subscriber that verify on AWS would never see. This test asks the served CloudFormation what AWS would
 * answer a caller signed for account 111111111111 in us-east-1: the stack in eu-central-1 (same account) and the one
 * of account 222222222222 are not listed.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startAwsGateway } from '../../../simulator/aws/aws-gateway';
import { cloudFormationHandler, type ServedStack } from '../../../simulator/aws/cloudformation-endpoint';
import { lambdaHandler, type InvokableFunction } from '../../../simulator/aws/lambda-endpoint';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { verifyClients, type VerifyClients } from '../../../simulator/verify/clients';
import { findDeployedFlow } from '../../../simulator/verify/deployed-flow';

const FLOW = '111111111111';
const LEDGER = '222222222222';
const subscriber = (name: string, account: string, region: string) => ({
  format: 1,
  subscriberName: name,
  processingMode: 'transactional',
  deduplicationWindowSeconds: 86400,
  inboxTable: `${name}Inbox`,
  consumerFunctionName: `${name}Consumer`,
  queueUrl: `https://sqs.${region}.amazonaws.com/${account}/${name}Queue`,
  deadLetterQueueUrl: `https://sqs.${region}.amazonaws.com/${account}/${name}Dlq`,
});
const stack = (name: string, account: string, region: string, outputs: ServedStack['outputs']): ServedStack => ({
  stackName: name,
  stackId: `arn:aws:cloudformation:${region}:${account}:stack/${name}/00000000-0000-4000-8000-000000000001`,
  createdAt: '2026-01-01T00:00:00.000Z',
  outputs,
  resources: [],
});
const STACKS: ServedStack[] = [
  stack('Payments', FLOW, 'us-east-1', [
    { key: 'FlowOperator', value: JSON.stringify({ outboxTable: 'Outbox', topicArn: `arn:aws:sns:us-east-1:${FLOW}:Events` }) },
    { key: 'BillingOperator', value: JSON.stringify(subscriber('Billing', FLOW, 'us-east-1')) },
  ]),
  stack('Reports', FLOW, 'eu-central-1', [{ key: 'ReportsOperator', value: JSON.stringify(subscriber('Reports', FLOW, 'eu-central-1')) }]),
  stack('Ledger', LEDGER, 'us-east-1', [{ key: 'LedgerOperator', value: JSON.stringify(subscriber('Ledger', LEDGER, 'us-east-1')) }]),
];

let gateway: LoopbackServer;
let clients: VerifyClients;
const environment = { ...process.env };

beforeAll(async () => {
  const functions = new Map<string, InvokableFunction>(
    ['Billing', 'Reports', 'Ledger'].map((name) => [`${name}Consumer`, { arn: `arn:aws:lambda:us-east-1:${FLOW}:function:${name}Consumer`, environment: {}, invoke: async () => ({ kind: 'returned' as const, response: {} }) }]),
  );
  gateway = await startAwsGateway({ forward: {}, handle: { cloudformation: cloudFormationHandler(STACKS), lambda: lambdaHandler(functions, [], () => 'the test run') } });
  for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
  // signed as account 111111111111's root (the served runs' convention for an access key id), in us-east-1
  Object.assign(process.env, { AWS_ENDPOINT_URL: gateway.endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: FLOW, AWS_SECRET_ACCESS_KEY: 'simulator' });
  clients = verifyClients();
});

afterAll(async () => {
  clients.destroy();
  process.env = environment;
  await gateway.stop();
});

test('V-1: the served CloudFormation lists only the stacks of the account and Region a request is signed for, as AWS does', async () => {
  const flow = await findDeployedFlow(clients);
  // on AWS: Payments only. Served today: Payments, Reports (another Region) and Ledger (another account)
  expect(flow.stackNames).toEqual(['Payments']);
  expect(flow.subscribers.map((item) => item.name)).toEqual(['Billing']);
});
