/**
 * An operator command run where AWS is not set up (no Region, no credentials, an endpoint that does not answer) fails
 * (exit 1) with the SDK's error and one sentence naming what to set: `--region` or `AWS_REGION`, the credential chain,
 * and the endpoint options. The sentence is the one `verify` gives for its exit 4 (operator/cli/aws-access.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { awsAccessHint } from '../../operator/cli/aws-access';
import { EXIT_CODE } from '../../operator/cli/command';
import { main } from '../../operator/cli/main';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-operator-aws-'));
const environment = { ...process.env };
let closedPort = 0;
const QUEUE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/nope';

beforeAll(async () => {
  // a port nothing listens on: taken, then freed
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closedPort = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

afterAll(() => {
  process.env = environment;
  rmSync(directory, { recursive: true, force: true });
});

/** No AWS settings but `extra`: no Region, no credentials, no config files, no instance metadata. */
function isolatedEnvironment(extra: Record<string, string>): void {
  for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
  Object.assign(process.env, {
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: path.join(directory, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(directory, 'no-credentials'),
    AWS_MAX_ATTEMPTS: '1',
    ...extra,
  });
}

async function run(argv: string[]): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await main(argv, { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: directory }, () => undefined);
  return { code, stderr };
}

describe('operator commands where AWS is not set up', () => {
  test('no Region: exit 1, the SDK error, then what to set', async () => {
    isolatedEnvironment({});
    const { code, stderr } = await run(['dlq', 'list', '--dead-letter-queue', QUEUE]);
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stderr).toMatch(/^error: .*Region is missing/);
    expect(stderr).toContain(awsAccessHint('dlq'));
  });

  test('no credentials: exit 1, the SDK error, then what to set', async () => {
    isolatedEnvironment({});
    const { code, stderr } = await run(['--region', 'eu-west-1', 'dlq', 'list', '--dead-letter-queue', QUEUE]);
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stderr).toMatch(/CredentialsProviderError/);
    expect(stderr).toContain(awsAccessHint('dlq'));
  });

  test('an endpoint nothing answers on: exit 1, the connect error, then what to set', async () => {
    isolatedEnvironment({ AWS_ACCESS_KEY_ID: 'operator', AWS_SECRET_ACCESS_KEY: 'operator' });
    const { code, stderr } = await run(['--region', 'eu-west-1', '--endpoint', `http://127.0.0.1:${closedPort}`, 'fence', 'show', 'Billing', 'order-1', '--table', 'inbox']);
    expect(code).toBe(EXIT_CODE.FAILURE);
    expect(stderr).toMatch(/ECONNREFUSED/);
    expect(stderr).toContain(awsAccessHint('fence'));
  });

  test('the sentence names the Region option and variable, the credential chain and the endpoint options', () => {
    const hint = awsAccessHint('dlq');
    for (const part of ['--region', 'AWS_REGION', 'default chain', 'AWS_PROFILE', '--endpoint', '--sqs-endpoint']) expect(hint).toContain(part);
  });
});
