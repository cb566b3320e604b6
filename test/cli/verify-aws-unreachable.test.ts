/**
 * New-user trial nu9: `verify` with no credentials (CredentialsProviderError) or an endpoint that does not answer
 * (getaddrinfo ENOTFOUND, ECONNREFUSED) exited 1, the code of VIOLATED / NOT PROVEN / not quiet, and said nothing about
 * what to set. Such an error has its own exit code (4: AWS not reached), says what to check (credentials, Region,
 * AWS_ENDPOINT_URL), writes its --json, and the help lists the exit codes.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT_CODE, main } from '../../simulator/cli/main';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-verify-unreachable-'));
const environment = { ...process.env };
let closedPort = 0;

beforeAll(async () => {
  // a port nothing listens on: taken, then freed
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closedPort = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  writeFileSync(path.join(directory, 'scenario.cjs'), "module.exports = { scenario: { producer: { function: 'Orders/PlaceOrder', commands: (count) => Array.from({ length: count }, (_, i) => ({ orderId: 'order-' + i })) } } };\n");
});

afterAll(() => {
  process.env = environment;
  rmSync(directory, { recursive: true, force: true });
});

function isolatedEnvironment(extra: Record<string, string>): void {
  for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
  Object.assign(process.env, {
    AWS_REGION: 'eu-west-1',
    AWS_EC2_METADATA_DISABLED: 'true',
    AWS_CONFIG_FILE: path.join(directory, 'no-config'),
    AWS_SHARED_CREDENTIALS_FILE: path.join(directory, 'no-credentials'),
    AWS_MAX_ATTEMPTS: '1',
    ...extra,
  });
}

async function verify(): Promise<{ code: number; stderr: string; json: unknown }> {
  const jsonFile = path.join(directory, `result-${Math.random().toString(36).slice(2)}.json`);
  let stderr = '';
  const code = await main(['verify', '--scenario', 'scenario.cjs', '--json', jsonFile, '--quiet'], { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: directory });
  return { code, stderr, json: existsSync(jsonFile) ? JSON.parse(readFileSync(jsonFile, 'utf8')) : undefined };
}

describe('verify, AWS not reached', () => {
  test('an endpoint nothing answers on: exit 4 (not 1, the code of a verdict), naming the endpoint setting, and a --json saying so', async () => {
    isolatedEnvironment({ AWS_ENDPOINT_URL: `http://127.0.0.1:${closedPort}`, AWS_ACCESS_KEY_ID: 'simulator', AWS_SECRET_ACCESS_KEY: 'simulator' });

    const { code, stderr, json } = await verify();

    expect(code).toBe(EXIT_CODE.AWS_UNREACHED);
    expect(code).toBe(4);
    expect(stderr).toMatch(/ECONNREFUSED/);
    expect(stderr).toMatch(/AWS_ENDPOINT_URL/);
    expect(json).toMatchObject({ verdict: { status: 'AWS NOT REACHED', reason: expect.stringMatching(/ECONNREFUSED/) } });
  });

  test('no credentials: exit 4, saying where the SDK looks for them', async () => {
    isolatedEnvironment({});

    const { code, stderr } = await verify();

    expect(code).toBe(4);
    expect(stderr).toMatch(/CredentialsProviderError|credentials/i);
    expect(stderr).toMatch(/AWS_PROFILE/);
  });

  test('the help lists the exit codes, 4 among them', async () => {
    let stdout = '';
    expect(await main(['verify', '--help'], { stdout: (text) => void (stdout += text), stderr: () => undefined })).toBe(0);
    expect(stdout).toMatch(/4 AWS not reached/);
  });
});
