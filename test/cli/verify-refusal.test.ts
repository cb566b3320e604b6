/**
 * `verify` refused, through the CLI against a served CloudFormation and Lambda (the served run's AWS endpoint,
 * simulator/aws/aws-gateway.ts, reached by AWS_ENDPOINT_URL): a refusal exits REFUSED (3), apart from VIOLATED (1),
 * NOT PROVEN (5) and usage errors (2), and writes its `--json` (status REFUSED, the reason), so a CI job reading the
 * file sees why (issue 43, nu43 finding 8: it wrote nothing and exited 1).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { startAwsGateway } from '../../simulator/aws/aws-gateway';
import { cloudFormationHandler, type ServedStack } from '../../simulator/aws/cloudformation-endpoint';
import { lambdaHandler } from '../../simulator/aws/lambda-endpoint';
import type { LoopbackServer } from '../../simulator/aws/loopback-server';
import { EXIT_CODE, main } from '../../simulator/cli/main';
import { BILLING, SANDBOX, sandboxFunctions, useServedAws, writeSandboxScenario } from './verify-sandbox-kit';

const STACK: ServedStack = {
  stackName: 'App',
  stackId: `arn:aws:cloudformation:us-east-1:${SANDBOX}:stack/App/00000000-0000-4000-8000-000000000001`,
  createdAt: '2026-01-01T00:00:00.000Z',
  outputs: [{ key: 'OrdersBillingOperatorA1B2C3D4', value: JSON.stringify(BILLING) }],
  resources: [{ logicalId: 'OrdersPlaceOrder12345678', type: 'AWS::Lambda::Function', physicalId: 'App-OrdersPlaceOrder12345678' }],
};

const directory = mkdtempSync(path.join(tmpdir(), 'ief-verify-refusal-'));
let gateway: LoopbackServer;
let invoked = 0;
const environment = { ...process.env };

beforeAll(async () => {
  gateway = await startAwsGateway({
    forward: {},
    handle: {
      cloudformation: cloudFormationHandler([STACK]),
      lambda: lambdaHandler(
        sandboxFunctions(() => (invoked += 1)),
        [],
        () => 'the test run',
      ),
    },
  });
  useServedAws(gateway.endpoint, 'simulator');
  writeSandboxScenario(directory);
});

afterAll(async () => {
  process.env = environment;
  await gateway.stop();
  rmSync(directory, { recursive: true, force: true });
});

async function verify(args: readonly string[]): Promise<{ code: number; stderr: string; json: unknown }> {
  const jsonFile = path.join(directory, `result-${Math.random().toString(36).slice(2)}.json`);
  let stderr = '';
  const code = await main(['verify', '--scenario', 'scenario.cjs', '--json', jsonFile, '--quiet', ...args], { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: directory });
  return { code, stderr, json: existsSync(jsonFile) ? JSON.parse(readFileSync(jsonFile, 'utf8')) : undefined };
}

describe('verify, refused', () => {
  test('a stack outside --account: exit REFUSED (3), nothing invoked, and the --json says REFUSED with the reason', async () => {
    const { code, stderr, json } = await verify(['--account', '999999999999']);
    expect(code).toBe(EXIT_CODE.REFUSED);
    expect(invoked).toBe(0);
    expect(stderr).toContain(SANDBOX);
    expect(json).toMatchObject({ verdict: { status: 'REFUSED', reason: expect.stringContaining(`account(s) ${SANDBOX}`) } });
  });

  test("without --account (review v11, V11-5): REFUSED (3), nothing invoked, naming the flag and the account the credentials reach", async () => {
    invoked = 0;
    const { code, stderr, json } = await verify([]);
    expect(code).toBe(EXIT_CODE.REFUSED);
    expect(invoked).toBe(0);
    expect(stderr).toContain(`--account ${SANDBOX}`);
    expect(json).toMatchObject({ verdict: { status: 'REFUSED', reason: expect.stringMatching(new RegExp(`no --account.*account\\(s\\) ${SANDBOX}`)) } });
  });

  test("a --stack that does not exist (review r12, R12-7): REFUSED (3) as the help promises, not VIOLATED's 1, with its --json", async () => {
    invoked = 0;
    const { code, stderr, json } = await verify(['--account', SANDBOX, '--stack', 'Nope']);
    expect(code).toBe(EXIT_CODE.REFUSED);
    expect(invoked).toBe(0);
    expect(stderr).toContain('no stack Nope in this account and Region (--stack');
    expect(json).toMatchObject({ verdict: { status: 'REFUSED', reason: expect.stringContaining('Nope') } });
  });

  test("an unexpected error (R12-7: here an AWS error that is no refusal of access, the endpoint answering no SQS) exits 4, no verdict, never VIOLATED's 1, and writes its --json", async () => {
    const { code, stderr, json } = await verify(['--account', SANDBOX]);
    expect(code).toBe(EXIT_CODE.AWS_UNREACHED);
    expect(stderr).toMatch(/error: UnknownService: .*; no verdict/);
    expect(json).toMatchObject({ verdict: { status: 'ERROR', reason: expect.stringContaining('UnknownService') } });
  });

  test.each([
    ['in a directory that does not exist', () => path.join(directory, 'no-such-directory', 'result.json')],
    ['that is a directory', () => directory],
  ])('a --json path %s (review r12b, R12B-6): USAGE (2) before any command is sent, naming the path, not exit 1 after the run', async (_name, jsonPath) => {
    invoked = 0;
    let stderr = '';
    const code = await main(['verify', '--scenario', 'scenario.cjs', '--account', SANDBOX, '--json', jsonPath(), '--quiet'], { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: directory });
    expect(code).toBe(EXIT_CODE.USAGE);
    expect(invoked).toBe(0);
    expect(stderr).toContain(`--json ${jsonPath()}`);
  });

  test('a usage error stays USAGE (2)', async () => {
    expect((await verify(['--count', '0'])).code).toBe(EXIT_CODE.USAGE);
  });
});
