/**
 * verify finds a flow whose subscribers sit in nested stacks (AWS::CloudFormation::Stack resources of a stack it is
 * given with --stack): their Operator outputs and resources (the tables --cleanup reads) are the flow's (issue 43: with
 * `--stack Parent` they failed loudly, and cleanup skipped their tables). The simulator cannot serve a CDK app's nested
 * stacks (it does not read them: simulator/model/read-assembly.ts), so this runs against the served CloudFormation
 * endpoint (simulator/aws/cloudformation-endpoint.ts) with hand-written stacks, as CloudFormation reports nested ones:
 * the parent's resource's physical id is the nested stack's id (its ARN).
 */
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAwsGateway } from '../../../simulator/aws/aws-gateway';
import { cloudFormationHandler, type ServedStack } from '../../../simulator/aws/cloudformation-endpoint';
import { lambdaHandler, type InvokableFunction } from '../../../simulator/aws/lambda-endpoint';
import type { LoopbackServer } from '../../../simulator/aws/loopback-server';
import { verifyClients, type VerifyClients } from '../../../simulator/verify/clients';
import { findDeployedFlow } from '../../../simulator/verify/deployed-flow';

const ACCOUNT = '111111111111';
const NESTED_ID = `arn:aws:cloudformation:us-east-1:${ACCOUNT}:stack/Parent-BillingNestedStackBillingNestedStackResourceA1B2C3D4-1ABCDEF/00000000-0000-4000-8000-000000000002`;
const DEEPER_ID = `arn:aws:cloudformation:us-east-1:${ACCOUNT}:stack/Parent-BillingNested-StatsNested-2ABCDEF/00000000-0000-4000-8000-000000000003`;
const subscriber = (name: string) => ({
  format: 1,
  subscriberName: name,
  processingMode: 'transactional',
  deduplicationWindowSeconds: 86400,
  consumerFunctionName: `Nested-${name}`,
  inboxTable: `Nested-${name}Inbox`,
  queueUrl: `http://127.0.0.1:1/${ACCOUNT}/Nested-${name}Queue`,
  deadLetterQueueUrl: `http://127.0.0.1:1/${ACCOUNT}/Nested-${name}Dlq`,
});
const STACKS: ServedStack[] = [
  {
    stackName: 'Parent',
    stackId: `arn:aws:cloudformation:us-east-1:${ACCOUNT}:stack/Parent/00000000-0000-4000-8000-000000000001`,
    createdAt: '2026-01-01T00:00:00.000Z',
    outputs: [{ key: 'OrdersOperator2D745A48', value: JSON.stringify({ outboxTable: 'Parent-Outbox', topicArn: `arn:aws:sns:us-east-1:${ACCOUNT}:Parent-Topic`, relayDeadLetterQueueUrl: `http://127.0.0.1:1/${ACCOUNT}/Parent-RelayDlq` }) }],
    resources: [
      { logicalId: 'OrdersPlaceOrder12345678', type: 'AWS::Lambda::Function', physicalId: 'Parent-PlaceOrder' },
      { logicalId: 'OutboxTable', type: 'AWS::DynamoDB::Table', physicalId: 'Parent-Outbox' },
      { logicalId: 'BillingNestedStackBillingNestedStackResourceA1B2C3D4', type: 'AWS::CloudFormation::Stack', physicalId: NESTED_ID },
    ],
  },
  {
    stackName: 'Parent-BillingNestedStackBillingNestedStackResourceA1B2C3D4-1ABCDEF',
    stackId: NESTED_ID,
    createdAt: '2026-01-01T00:00:00.000Z',
    outputs: [{ key: 'BillingOperatorA1B2C3D4', value: JSON.stringify(subscriber('Billing')) }],
    resources: [
      { logicalId: 'LedgerTable', type: 'AWS::DynamoDB::Table', physicalId: 'Nested-Ledger' },
      { logicalId: 'StatsNestedStackResource', type: 'AWS::CloudFormation::Stack', physicalId: DEEPER_ID },
    ],
  },
  {
    stackName: 'Parent-BillingNested-StatsNested-2ABCDEF',
    stackId: DEEPER_ID,
    createdAt: '2026-01-01T00:00:00.000Z',
    outputs: [{ key: 'StatsOperatorA1B2C3D4', value: JSON.stringify(subscriber('Stats')) }],
    resources: [{ logicalId: 'StatsTable', type: 'AWS::DynamoDB::Table', physicalId: 'Nested-Stats' }],
  },
];

let gateway: LoopbackServer;
let clients: VerifyClients;
const environment = { ...process.env };

beforeAll(async () => {
  const functions = new Map<string, InvokableFunction>(
    ['Parent-PlaceOrder', 'Nested-Billing', 'Nested-Stats'].map((name) => [name, { arn: `arn:aws:lambda:us-east-1:${ACCOUNT}:function:${name}`, environment: { NAME: name }, invoke: async () => ({ kind: 'returned' as const, response: {} }) }]),
  );
  gateway = await startAwsGateway({ forward: {}, handle: { cloudformation: cloudFormationHandler(STACKS), lambda: lambdaHandler(functions, [], () => 'the test run') } });
  for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
  Object.assign(process.env, { AWS_ENDPOINT_URL: gateway.endpoint, AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'simulator', AWS_SECRET_ACCESS_KEY: 'simulator' });
  clients = verifyClients();
});

afterAll(async () => {
  clients.destroy();
  process.env = environment;
  await gateway.stop();
});

describe('verify, nested stacks', () => {
  test('--stack Parent: the subscribers of its nested stacks (at any depth) are found, and their tables are the flow\'s (what --cleanup reads)', async () => {
    const flow = await findDeployedFlow(clients, ['Parent']);
    expect(flow.subscribers.map((item) => [item.name, item.environment.NAME])).toEqual([
      ['Billing', 'Nested-Billing'],
      ['Stats', 'Nested-Stats'],
    ]);
    expect(flow.flows.map((item) => item.outboxTable)).toEqual(['Parent-Outbox']);
    expect(flow.resources.filter((resource) => resource.type === 'AWS::DynamoDB::Table').map((resource) => resource.physicalId).sort()).toEqual(['Nested-Ledger', 'Nested-Stats', 'Parent-Outbox']);
    expect(flow.stackAccounts).toMatchObject({ Parent: ACCOUNT, 'Parent-BillingNested-StatsNested-2ABCDEF': ACCOUNT });
  });

  test('every stack (no --stack): a nested stack CloudFormation lists itself is read once, not again through its parent', async () => {
    const flow = await findDeployedFlow(clients);
    expect(flow.subscribers.map((item) => item.name)).toEqual(['Billing', 'Stats']);
    expect(flow.resources.filter((resource) => resource.physicalId === 'Nested-Stats')).toHaveLength(1);
  });
});
