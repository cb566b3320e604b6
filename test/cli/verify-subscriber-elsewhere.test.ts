/**
 * Review v11, V11-4: `--account` (the guard against production) must refuse a flow whose topic delivers to a queue in
 * another account, as it refuses one whose Operator outputs name such a queue. A subscriber another team deployed in
 * its own account (docs/CROSS-ACCOUNT.md) has its Operator output in that account's stack, which verify cannot read:
 * only the topic's subscriptions show it. Before the fix verify listed them (NOT PROVEN afterwards) but sent the run's
 * commands anyway: their events reached the other account's subscriber and its business effects, whatever --account
 * said. Through the CLI against a served CloudFormation, Lambda and SNS (the served run's gateway).
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

const TOPIC = `arn:aws:sns:us-east-1:${SANDBOX}:Events`;
const STACK: ServedStack = {
  stackName: 'App',
  stackId: `arn:aws:cloudformation:us-east-1:${SANDBOX}:stack/App/00000000-0000-4000-8000-000000000001`,
  createdAt: '2026-01-01T00:00:00.000Z',
  outputs: [
    { key: 'OrdersOperator', value: JSON.stringify({ outboxTable: 'App-Outbox', topicArn: TOPIC }) },
    { key: 'OrdersBillingOperatorA1B2C3D4', value: JSON.stringify(BILLING) },
  ],
  resources: [{ logicalId: 'OrdersPlaceOrder12345678', type: 'AWS::Lambda::Function', physicalId: 'App-OrdersPlaceOrder12345678' }],
};
const topic = topicWithProductionSubscriber(TOPIC, 'App');

const directory = mkdtempSync(path.join(tmpdir(), 'ief-verify-elsewhere-'));
let sns: LoopbackServer;
let gateway: LoopbackServer;
let invoked = 0;
const environment = { ...process.env };

beforeAll(async () => {
  sns = await startSnsEndpoint({ resolveTopic: (arn) => (arn === TOPIC ? topic : undefined) });
  gateway = await startAwsGateway({
    forward: { sns: sns.endpoint },
    handle: {
      cloudformation: cloudFormationHandler([STACK]),
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

describe('verify --account and the topic\'s subscriptions', () => {
  test('V11-4: a subscription of the flow\'s topic to a queue in another account than --account allows refuses the run before any command', async () => {
    const jsonFile = path.join(directory, 'result.json');
    let stderr = '';
    const code = await main(['verify', '--scenario', 'scenario.cjs', '--json', jsonFile, '--quiet', '--account', SANDBOX], { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: directory });
    expect(code, stderr).toBe(EXIT_CODE.REFUSED);
    expect(invoked).toBe(0);
    expect(stderr).toContain(`arn:aws:sqs:us-east-1:${PRODUCTION}:Ledger-Queue`);
    expect(existsSync(jsonFile) ? JSON.parse(readFileSync(jsonFile, 'utf8')) : undefined).toMatchObject({ verdict: { status: 'REFUSED', reason: expect.stringContaining(PRODUCTION) } });
  });
});
