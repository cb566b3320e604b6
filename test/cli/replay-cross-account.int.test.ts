/**
 * Issue 41: `replay --yes` for a subscriber of another account, in one command. The flow (111111111111) grants the
 * ledger team's on-call role (222222222222) the outbox read with `flow.grantOperator`, which creates the role
 * `CrossAccountOperator222222222222` for it to assume (test/simulator/fixtures/cross-account, `operatorGrant=true`).
 * The ledger team replays with its own credentials for its queue and `--flow-profile`, an AWS profile that assumes
 * that role, for the outbox. Against `simulate --serve`, whose STS answers AssumeRole under the role's trust policy
 * and whose DynamoDB authorizes the assumed role's requests under the role's policies: a caller the trust policy does
 * not name is refused, naming the trust policy.
 */
import { readFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { EXIT_CODE, main } from '../../simulator/cli/main';
import { synthesize } from '../../simulator/model/synthesize';

const PROJECT = path.resolve(__dirname, '../..');
const FIXTURE = 'test/simulator/fixtures/cross-account';
const EVENT_ID = 'evt-cross-account-replay';

/** The words of a shell command line, as bash splits and unquotes them. */
function shellWords(line: string): string[] {
  return execFileSync('bash', ['-c', `printf '%s\\0' ${line}`], { encoding: 'utf8' }).split('\0').slice(0, -1);
}

/** Waits until `condition` holds; after `timeoutMs` (a hang catcher, not a slow machine's limit) says what the command printed. */
async function waitFor(condition: () => boolean, what: string, output: () => string, timeoutMs = 600_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; the command printed:\n${output().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

let directory: string;
let roleArn: string;
let stdout = '';
let running: Promise<number>;
const stop = new AbortController();

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-replay-cross-account-'));
  const assembly = await synthesize({ cwd: PROJECT, app: `npx tsx ${FIXTURE}/app.ts`, outputDirectory: path.join(directory, 'cdk.out'), context: { operatorGrant: 'true', crossRegion: 'false' } });
  const template = JSON.parse(readFileSync(path.join(assembly, 'Payments.template.json'), 'utf8')) as { Resources: Record<string, { Type: string; Properties?: { RoleName?: string }; Metadata?: Record<string, string> }> };
  const [logicalId, role] = Object.entries(template.Resources).find(([, resource]) => resource.Type === 'AWS::IAM::Role' && String(resource.Metadata?.['aws:cdk:path']).includes('CrossAccountOperator222222222222'))!;
  // no RoleName in the template (CloudFormation names it): the served run names it <stack>-<logical id>
  roleArn = `arn:aws:iam::111111111111:role/${role.Properties?.RoleName ?? `Payments-${logicalId}`}`;
  const events = path.join(directory, 'events.json');
  writeFileSync(events, JSON.stringify([{ id: EVENT_ID, type: 'com.example.Paid', subject: 'p0', data: { index: 0 } }]));
  // run from a directory without cdk.json: the serve knows no app command, so it watches no files (from the project's
  // directory it would synthesize the project's own app, the example, again whenever a file of the tree changed)
  const io = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stdout += text), cwd: directory, stopSignal: stop.signal };
  running = main(['simulate', '--assembly', assembly, '--scenario', path.join(PROJECT, FIXTURE, 'single-environment-scenario.ts'), '--events', events, '--no-faults', '--quiet', '--seed', 'cross-account-replay', '--serve', '--endpoint', inject('dynamoDbEndpoint')], io);
  let finished = false;
  void running.finally(() => (finished = true));
  await waitFor(() => stdout.includes('serving until') || finished, 'the run to serve', () => stdout);
  expect(stdout).toContain('OK: ');
}, 900_000);

afterAll(async () => {
  stop.abort();
  await running;
}, 600_000);

/** Ledger's printed replay command with `extra` options, run under the AWS config and credentials files written here. */
async function replay(sourceAccessKeyId: string, extra: readonly string[]): Promise<{ code: number; output: string }> {
  const line = stdout.split('\n').find((candidate) => /idempotent-event-flow replay --subscriber-output .*"subscriberName":"Ledger"/.test(candidate));
  expect(line, stdout).toBeDefined();
  const [, , ...printed] = shellWords(line!.trim().replace('<event-id>', EVENT_ID));
  // every request through the served run's one endpoint (AWS_ENDPOINT_URL), as an account's: not DynamoDB Local's own
  const argv = printed.filter((word, index) => !['--endpoint', '--sqs-endpoint'].includes(word) && !['--endpoint', '--sqs-endpoint'].includes(printed[index - 1] ?? ''));
  const endpoint = /AWS_ENDPOINT_URL=(\S+)/.exec(stdout)![1]!;
  const config = path.join(directory, `config-${sourceAccessKeyId}`);
  const credentials = path.join(directory, `credentials-${sourceAccessKeyId}`);
  // the ledger team's own profile, and the profile that assumes the role the flow's account granted
  writeFileSync(config, `[profile ledger-oncall]\nregion = eu-west-1\n\n[profile payments-outbox]\nrole_arn = ${roleArn}\nsource_profile = ledger-oncall\nregion = eu-west-1\n`);
  writeFileSync(credentials, `[ledger-oncall]\naws_access_key_id = ${sourceAccessKeyId}\naws_secret_access_key = simulator\n`);
  const variables = { AWS_ENDPOINT_URL: endpoint, AWS_CONFIG_FILE: config, AWS_SHARED_CREDENTIALS_FILE: credentials, AWS_PROFILE: 'ledger-oncall', AWS_REGION: 'eu-west-1' };
  const saved = Object.fromEntries(Object.keys(variables).map((name) => [name, process.env[name]]));
  const savedKeys = { AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY };
  delete process.env.AWS_ACCESS_KEY_ID;
  delete process.env.AWS_SECRET_ACCESS_KEY;
  Object.assign(process.env, variables);
  let output = '';
  try {
    const code = await main([...argv, ...extra], { stdout: (text) => void (output += text), stderr: (text) => void (output += text) });
    return { code, output };
  } finally {
    for (const [name, value] of Object.entries({ ...saved, ...savedKeys })) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
}

describe('replay across accounts, in one command', () => {
  test("the subscriber's team reads the outbox through the role the flow's account granted, and sends with its own credentials", async () => {
    // WHEN the ledger team's on-call role replays the event with --flow-profile
    const { code, output } = await replay('222222222222.ledger-oncall', ['--flow-profile', 'payments-outbox', '--yes']);

    // THEN the outbox was read under the assumed role and the event sent to Ledger's queue
    expect({ code, output }).toMatchObject({ code: EXIT_CODE.OK });
    expect(output).toMatch(new RegExp(`sent 1 to \\S+ for subscriber 'Ledger'; refused 0`));
    // AND the served Ledger drops it: it applied that event already
    await waitFor(() => new RegExp(`\\[served\\] Ledger: event ${EVENT_ID} \\(receive 1, sent to its queue: a redrive or a replay\\): \\S+`).test(stdout), 'the replayed copy consumed', () => `${output}\n---\n${stdout}`, 1_200_000);
    expect(stdout).toMatch(new RegExp(`\\[served\\] Ledger: event ${EVENT_ID} \\(receive 1, sent to its queue: a redrive or a replay\\): duplicate`));
  }, 1_500_000);

  test("a caller the role's trust policy does not name is refused AssumeRole, naming the trust policy", async () => {
    // WHEN another role of the ledger account tries the same
    const { code, output } = await replay('222222222222.intruder', ['--flow-profile', 'payments-outbox', '--yes']);

    // THEN nothing is read or sent, and the refusal names the caller, the role and its trust policy
    expect(code).not.toBe(EXIT_CODE.OK);
    expect(output).toContain('arn:aws:iam::222222222222:role/intruder');
    expect(output).toContain('sts:AssumeRole');
    expect(output).toContain('trust policy');
    expect(output).not.toMatch(/sent \d+ to/);
  }, 300_000);
});
