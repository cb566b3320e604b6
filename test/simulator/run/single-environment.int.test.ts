/**
 * nu7 finding 1: an app whose stacks all share ONE explicit environment (env: { account: '111111111111', region:
 * 'eu-west-1' } on every stack, the usual production set-up) was simulated in the local account 000000000000 and the
 * run's Region while its templates carry 111111111111 and eu-west-1 (the key policy's root delegation, the relay's
 * `kms:ViaService sns.eu-west-1.amazonaws.com`): IAM denied the library's own KMS grants and every event was LOST.
 * The simulator now places the resources in the templates' account and Region whenever the stacks declare one, and
 * refuses a `--region` that contradicts it. Fixture: test/simulator/fixtures/cross-account with
 * `singleEnvironment=true` (the flow and Ledger both in 111111111111/eu-west-1).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { synthesize } from '../../../simulator/model/synthesize';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/cross-account';

let assembly: string;
let events: string;

beforeAll(async () => {
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-single-environment-'));
  assembly = await synthesize({ cwd: PROJECT, app: `npx tsx ${FIXTURE}/app.ts`, outputDirectory: path.join(directory, 'cdk.out'), context: { singleEnvironment: 'true' } });
  events = path.join(directory, 'events.json');
  writeFileSync(events, JSON.stringify(Array.from({ length: 3 }, (_, index) => ({ type: 'com.example.Paid', subject: `p${index}`, data: { index } }))));
});

async function simulate(...extra: readonly string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(
    ['simulate', '--assembly', assembly, '--scenario', `${FIXTURE}/single-environment-scenario.ts`, '--events', events, '--no-faults', '--quiet', '--seed', 'single-environment', '--endpoint', inject('dynamoDbEndpoint'), ...extra],
    { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: PROJECT },
  );
  return { code, stdout, stderr };
}

describe('simulate: every stack in one explicit environment', () => {
  test('IAM is decided in the templates\' account and Region: the library\'s own grants allow, every event reaches Ledger once', async () => {
    const { code, stdout, stderr } = await simulate();
    expect(code, stdout + stderr).toBe(EXIT_CODE.OK);
    expect(stdout).toMatch(/^Ledger\s+transactional\s+3\s/m);
    expect(stdout).toMatch(/IAM: \d+ requests evaluated, \d+ authorized, 0 denied/);
    expect(stdout).not.toContain('000000000000');
  });

  test('a --region that contradicts the stacks\' Region is refused, naming both', async () => {
    const { code, stdout, stderr } = await simulate('--region', 'us-east-1');
    expect(code, stdout + stderr).toBe(EXIT_CODE.USAGE);
    expect(stderr).toContain('--region us-east-1');
    expect(stderr).toContain('eu-west-1');
  });

  test('the --region the stacks name is accepted', async () => {
    const { code, stdout, stderr } = await simulate('--region', 'eu-west-1');
    expect(code, stdout + stderr).toBe(EXIT_CODE.OK);
  });
});
