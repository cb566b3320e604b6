/**
 * Review r12, R12-2 (and new-user trial nu12, item 1): verify without `--stack` on the split-stack layout
 * docs/CROSS-ACCOUNT.md recommends: the flow and its producer in stack Orders (the flow's own `Operator` output only),
 * the Billing subscriber in stack Billing. Default discovery read only the stacks with a subscriber's `Operator`
 * output, so it refused naming the producer ("names no function of the stacks (Billing/...)") and never listed the
 * flow's topic: the `--account` guard on its subscriptions had nothing to check. Through the CLI against a served
 * CloudFormation, Lambda and SNS (the served run's gateway).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAwsGateway } from '../../simulator/aws/aws-gateway';
import { cloudFormationHandler, type ServedStack } from '../../simulator/aws/cloudformation-endpoint';
import { lambdaHandler } from '../../simulator/aws/lambda-endpoint';
import type { LoopbackServer } from '../../simulator/aws/loopback-server';
import { startSnsEndpoint } from '../../simulator/aws/sns-endpoint';
import { EXIT_CODE, main } from '../../simulator/cli/main';
import { BILLING, PRODUCTION, SANDBOX, sandboxFunctions, topicWithProductionSubscriber, useServedAws, writeSandboxScenario } from './verify-sandbox-kit';

const TOPIC = `arn:aws:sns:us-east-1:${SANDBOX}:Orders-Events`;
const stackId = (name: string, id: number) => `arn:aws:cloudformation:us-east-1:${SANDBOX}:stack/${name}/00000000-0000-4000-8000-00000000000${id}`;
/** The flow's stack: its outbox, topic and producer; its only Operator output is the flow's. */
const ORDERS: ServedStack = {
  stackName: 'Orders',
  stackId: stackId('Orders', 1),
  createdAt: '2026-01-01T00:00:00.000Z',
  outputs: [{ key: 'OrdersFlowOperator0A1B2C3D', value: JSON.stringify({ outboxTable: 'Orders-Outbox', topicArn: TOPIC }) }],
  resources: [
    { logicalId: 'OrdersPlaceOrder12345678', type: 'AWS::Lambda::Function', physicalId: 'App-OrdersPlaceOrder12345678' },
    { logicalId: 'FlowOutboxTable1A2B3C4D', type: 'AWS::DynamoDB::Table', physicalId: 'Orders-Outbox' },
    { logicalId: 'FlowTopic1A2B3C4D', type: 'AWS::SNS::Topic', physicalId: TOPIC },
  ],
};
/** The subscriber's stack: its Operator output names the flow's outbox table. */
const BILLING_STACK: ServedStack = {
  stackName: 'Billing',
  stackId: stackId('Billing', 2),
  createdAt: '2026-01-01T00:00:00.000Z',
  outputs: [{ key: 'BillingOperatorA1B2C3D4', value: JSON.stringify({ ...BILLING, outboxTable: 'Orders-Outbox' }) }],
  resources: [{ logicalId: 'BillingFunction1A2B3C4D', type: 'AWS::Lambda::Function', physicalId: 'App-Billing' }],
};
const topic = topicWithProductionSubscriber(TOPIC, 'Orders');

const directory = mkdtempSync(path.join(tmpdir(), 'ief-verify-split-'));
let sns: LoopbackServer;
let gateway: LoopbackServer;
let invoked = 0;
const environment = { ...process.env };

beforeAll(async () => {
  sns = await startSnsEndpoint({ resolveTopic: (arn) => (arn === TOPIC ? topic : undefined) });
  gateway = await startAwsGateway({
    forward: { sns: sns.endpoint },
    handle: {
      cloudformation: cloudFormationHandler([ORDERS, BILLING_STACK]),
      lambda: lambdaHandler(
        sandboxFunctions(() => (invoked += 1)),
        [],
        () => 'the test run',
      ),
    },
  });
  useServedAws(gateway.endpoint, SANDBOX);
  writeSandboxScenario(directory);
});

afterAll(async () => {
  process.env = environment;
  await gateway.stop();
  await sns.stop();
  rmSync(directory, { recursive: true, force: true });
});

describe('verify without --stack, the flow and producer in one stack, the subscriber in another', () => {
  test("the producer is found in the flow's stack and the flow's topic is listed: a subscription in another account than --account refuses the run before any command", async () => {
    const jsonFile = path.join(directory, 'result.json');
    let stderr = '';
    const code = await main(['verify', '--scenario', 'scenario.cjs', '--json', jsonFile, '--quiet', '--account', SANDBOX], { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: directory });
    expect(code, stderr).toBe(EXIT_CODE.REFUSED);
    expect(invoked).toBe(0);
    expect(stderr).not.toContain('names no function of the stacks');
    expect(stderr).toContain(`arn:aws:sqs:us-east-1:${PRODUCTION}:Ledger-Queue`);
    expect(existsSync(jsonFile) ? JSON.parse(readFileSync(jsonFile, 'utf8')) : undefined).toMatchObject({ verdict: { status: 'REFUSED', reason: expect.stringContaining(PRODUCTION) } });
  });
});
