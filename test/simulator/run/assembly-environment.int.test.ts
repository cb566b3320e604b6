/**
 * Issue 29 item 3 through the real synthesis: two runs of one `--app` whose synthesis depends on an environment
 * variable each read their own cloud assembly (the project's `aws-cdk` CLI runs a small CDK app that names its stack
 * after the variable), and a third run with the first environment reads the first assembly again without
 * synthesizing. The unit tests (test/simulator/model/assembly-cache.test.ts) cover the key with a stand-in synthesis;
 * this one runs `cdk synth` itself.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { runAssembly } from '../../../simulator/run/assembly-source';

const VARIABLE = 'IEF_TEST_STAGE';
// inside the repository, so the app's aws-cdk-lib and the project's aws-cdk CLI resolve from its node_modules
const root = path.resolve(__dirname, '../../..');
let project: string;
let work: string;

/** The stacks the assembly's manifest names. */
function stacksOf(directory: string): string[] {
  const manifest = JSON.parse(fs.readFileSync(path.join(directory, 'manifest.json'), 'utf8')) as { artifacts?: Record<string, { type?: string }> };
  return Object.entries(manifest.artifacts ?? {})
    .filter(([, artifact]) => artifact.type === 'aws:cloudformation:stack')
    .map(([name]) => name);
}

async function runWith(stage: string | undefined): Promise<{ directory: string; synthesized: boolean }> {
  const before = process.env[VARIABLE];
  if (stage === undefined) delete process.env[VARIABLE];
  else process.env[VARIABLE] = stage;
  let synthesized = true;
  try {
    const directory = await runAssembly(
      { cwd: project, app: 'node app.js', reuseAssembly: true, onAssembly: (source) => (synthesized = !source.reused) },
      work,
    );
    return { directory, synthesized };
  } finally {
    if (before === undefined) delete process.env[VARIABLE];
    else process.env[VARIABLE] = before;
  }
}

beforeAll(() => {
  project = fs.mkdtempSync(path.join(root, 'test', '.assembly-environment-'));
  work = fs.mkdtempSync(path.join(project, 'work-'));
  // the project's own node_modules holds its assembly cache, as in a user's project
  fs.mkdirSync(path.join(project, 'node_modules'));
  fs.writeFileSync(
    path.join(project, 'app.js'),
    "const cdk = require('aws-cdk-lib');\nconst app = new cdk.App();\n" +
      `new cdk.Stack(app, 'Orders' + (process.env.${VARIABLE} ?? 'Default'));\napp.synth();\n`,
  );
});
afterAll(() => {
  fs.rmSync(project, { recursive: true, force: true });
});

describe('the assembly cache with the real cdk synth', () => {
  test('two runs of one --app with different environments each use their own assembly; the first environment again reads the first', async () => {
    const restricted = await runWith('Restricted');
    const plain = await runWith(undefined);
    const restrictedAgain = await runWith('Restricted');

    expect(stacksOf(restricted.directory)).toEqual(['OrdersRestricted']);
    expect(restricted.synthesized).toBe(true);
    expect(stacksOf(plain.directory)).toEqual(['OrdersDefault']);
    expect(plain.synthesized).toBe(true);
    expect(restrictedAgain).toEqual({ directory: restricted.directory, synthesized: false });
  });
});
