/**
 * `simulate` writing its own outputs into the project (`--json seed-1.json`, `--log seed-1.jsonl` in the project root,
 * as a loop of seeds does): they are no sources of the app, so the next run, with outputs of its own, reads the
 * assembly the first synthesized instead of synthesizing again (simulator/model/run-outputs.ts). The project is a directory of its own inside the repository (its
 * aws-cdk-lib and aws-cdk resolve from there), so no other test's files change what the cache sees.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { main } from '../../simulator/cli/main';

const ROOT = path.resolve(__dirname, '../..');
const FIXTURE = path.join(ROOT, 'test/simulator/fixtures/non-idempotent');
let project: string;

async function simulate(seed: string): Promise<{ code: number; stderr: string }> {
  let stderr = '';
  const code = await main(
    [
      'simulate', '--app', `npx tsx ${FIXTURE}/app.ts`, '--scenario', `${FIXTURE}/scenario.ts`, '--events', path.join(project, 'events.json'),
      '--no-faults', '--quiet', '--seed', seed, '--endpoint', inject('dynamoDbEndpoint'),
      '--json', `seed-${seed}.json`, '--log', `seed-${seed}.jsonl`,
    ],
    { stdout: () => undefined, stderr: (text) => void (stderr += text), cwd: project },
  );
  return { code, stderr };
}

beforeAll(() => {
  project = mkdtempSync(path.join(ROOT, 'test', '.simulate-own-outputs-'));
  // the project's own node_modules holds its assembly cache, as in a user's project
  mkdirSync(path.join(project, 'node_modules'));
  writeFileSync(path.join(project, 'events.json'), JSON.stringify([0, 1, 2].map((index) => ({ type: 'com.example.Counted', subject: `s${index}`, data: { index } }))));
});
afterAll(() => {
  rmSync(project, { recursive: true, force: true });
});

describe('simulate: the run\'s own --json and --log in the project', () => {
  test('a second run reads the assembly the first synthesized, although the first wrote its --json and --log after it', async () => {
    const first = await simulate('1');
    expect(first.stderr.split('\n')[0]).toMatch(/^synthesized the app at \S+ into /);
    expect(existsSync(path.join(project, 'seed-1.json'))).toBe(true);
    expect(existsSync(path.join(project, 'seed-1.jsonl'))).toBe(true);

    const second = await simulate('2');

    expect(second.stderr.split('\n')[0]).toMatch(/^reusing the cloud assembly synthesized at \S+ in \S+: the app command, the environment, ~\/\.cdk\.json and the project's files are as they were \(newest source: \S+events\.json, /);
    expect(second.code).toBe(first.code);
  });
});
