/**
 * `idempotent-event-flow verify` against a served run (`simulate --serve`, the local stand-in of a deployed app): the
 * command reaches it only through the SDK's settings (AWS_ENDPOINT_URL, AWS_REGION, credentials from the environment),
 * as it would reach an account. Against the example, it ends OK; a second run's ids never collide with the first's;
 * against a copy whose Shipping handler throws on every event, it fails naming the events Shipping never applied.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, expect, onTestFinished, test } from 'vitest';
import { EXIT_CODE, main } from '../../simulator/cli/main';
import { exampleAssemblyVariant, logicalIdAt, writeCodeAsset } from '../support/assembly-variant';
import { exampleAssembly } from '../support/example-assembly';
import { waitFor } from './printed-commands';

const PROJECT = path.resolve(__dirname, '../..');
const SCENARIO = 'example/simulation/scenario.ts';

interface Served {
  readonly environment: Record<string, string>;
  stop(): Promise<void>;
}

/** Serves a run of `assembly` (its own verdict aside) and returns the environment its printed exports set. */
async function serve(assembly: string): Promise<Served> {
  let stdout = '';
  const stop = new AbortController();
  // served from a directory without the app's cdk.json: a served run that watches the app synthesizes it again when its
  // sources look newer than the assembly, and its queues wait meanwhile (minutes on a loaded machine)
  const cwd = mkdtempSync(path.join(tmpdir(), 'ief-verify-served-'));
  onTestFinished(() => rmSync(cwd, { recursive: true, force: true }));
  const running = main(['simulate', '--assembly', assembly, '--scenario', path.join(PROJECT, SCENARIO), '--count', '1', '--no-faults', '--quiet', '--seed', 'verify-serve', '--serve'], {
    stdout: (text) => void (stdout += text),
    stderr: () => undefined,
    cwd,
    stopSignal: stop.signal,
  });
  let finished = false;
  void running.finally(() => (finished = true));
  await waitFor(() => stdout.includes('export AWS_ENDPOINT_URL=') || finished, 'the run to serve');
  expect(finished).toBe(false);
  const environment: Record<string, string> = {};
  for (const line of stdout.split('\n').filter((candidate) => candidate.startsWith('export '))) {
    for (const pair of line.slice('export '.length).split(' ')) {
      const [name, value] = pair.split('=') as [string, string];
      environment[name] = value;
    }
  }
  return {
    environment,
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

/** Runs `verify` with the served environment (and nothing else of AWS's) in this process's environment. */
async function verify(served: Served, args: readonly string[]): Promise<{ code: number; stdout: string; stderr: string; json: { runId: string; eventIds: string[]; violations: { kind: string; subscriber?: string; detail: string }[] } }> {
  const saved = { ...process.env };
  for (const name of Object.keys(process.env)) if (name.startsWith('AWS_')) delete process.env[name];
  Object.assign(process.env, served.environment);
  const directory = mkdtempSync(path.join(tmpdir(), 'ief-verify-'));
  const jsonFile = path.join(directory, 'result.json');
  let stdout = '';
  let stderr = '';
  try {
    const code = await main(['verify', '--scenario', SCENARIO, '--poll', '1', '--timeout', process.env.IEF_TEST_VERIFY_TIMEOUT ?? '600', '--json', jsonFile, ...args], {
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
      cwd: PROJECT,
    });
    const json = code === EXIT_CODE.USAGE ? { runId: '', eventIds: [], violations: [] } : JSON.parse(readFileSync(jsonFile, 'utf8'));
    return { code, stdout, stderr, json };
  } finally {
    process.env = saved;
    rmSync(directory, { recursive: true, force: true });
  }
}

describe('verify', () => {
  test('against the served example ends OK, and a second run\'s ids never collide with the first\'s', async () => {
    // GIVEN the example, served as a deployed app would answer
    const served = await serve(await exampleAssembly());
    onTestFinished(() => served.stop());
    expect(served.environment.AWS_ENDPOINT_URL).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    // WHEN verify runs the example's scenario against it
    const first = await verify(served, ['--count', '10', '--seed', 'same']);

    // THEN every check passes, with the events of the run found and probed
    expect(first.code, `${first.stdout}\n${first.stderr.slice(-4000)}`).toBe(EXIT_CODE.OK);
    expect(first.stdout).toContain('OK: each effect applied exactly once');
    expect(first.json.eventIds.length).toBeGreaterThanOrEqual(10);
    expect(first.stderr).toMatch(/producing: \d+\/\d+ command\(s\)/);

    // WHEN it runs again with the same seed, in the same "account"
    const second = await verify(served, ['--count', '3', '--seed', 'same', '--cleanup']);

    // THEN it is OK again: its ids are its own, none of the first run's, and its cleanup names what it removed
    expect(second.code, `${second.stdout}\n${second.stderr.slice(-4000)}`).toBe(EXIT_CODE.OK);
    expect(second.json.runId).not.toBe(first.json.runId);
    expect(second.json.eventIds.filter((id) => first.json.eventIds.includes(id))).toEqual([]);
    expect(second.json.eventIds.every((id) => id.includes(second.json.runId))).toBe(true);
    expect(second.stdout).toMatch(/cleanup removed:\n {2}\d+ item\(s\) of the run from table /);
  });

  test('against a served copy whose Shipping handler throws on every event, fails naming the events Shipping never applied', async () => {
    // GIVEN a copy of the example whose Shipping function throws, its queue moving a message after one failed receive
    const variant = await exampleAssemblyVariant((template, directory) => {
      const fn = template.Resources[logicalIdAt(template, 'Orders/Shipping/Function/Resource/Resource')]!;
      fn.Metadata!['aws:asset:path'] = writeCodeAsset(directory, 'throwing-shipping', "exports.handler = async () => { throw new Error('shipping is down'); };\n");
      fn.Properties!.Timeout = 2;
      const queue = template.Resources[logicalIdAt(template, 'Orders/Shipping/Queue/Resource/Resource')]!;
      queue.Properties!.VisibilityTimeout = 2;
      (queue.Properties!.RedrivePolicy as { maxReceiveCount: number }).maxReceiveCount = 1;
    });
    onTestFinished(() => variant.remove());
    const served = await serve(variant.directory);
    onTestFinished(() => served.stop());

    // WHEN verify runs the scenario against it
    const run = await verify(served, ['--count', '4', '--seed', 'broken']);

    // THEN it fails, naming Shipping's unapplied events of this run
    expect(run.code, `${run.stdout}\n${run.stderr.slice(-4000)}`).toBe(EXIT_CODE.FAILURE);
    expect(run.stdout).toContain('VIOLATED:');
    const unapplied = run.json.violations.filter((violation) => violation.kind === 'unapplied-event' && violation.subscriber === 'Shipping');
    expect(unapplied).toHaveLength(1);
    expect(unapplied[0]!.detail).toMatch(new RegExp(`events order-placed-${run.json.runId}-order-0000\\d`));
    expect(unapplied[0]!.detail).toContain('moved by SQS after maxReceiveCount receives');
    // the other subscribers applied theirs
    expect(run.json.violations.every((violation) => violation.subscriber === 'Shipping')).toBe(true);
  });
});
