/**
 * `idempotent-event-flow init <dir>` (issue 44): what it writes and what it refuses. That the app it writes installs
 * from the packed tarballs, passes its tests and simulates OK is test/package/package.test.ts's.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { main } from '../../simulator/cli/main';
import { ownVersion } from '../../simulator/cli/init-command';
import { STARTER_DEPENDENCY_RANGES } from '../../simulator/cli/starter/starter-files';

const REPO = path.resolve(__dirname, '..', '..');

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-init-'));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

async function init(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(['init', ...argv], { stdout: (text) => (stdout += text), stderr: (text) => (stderr += text), cwd: tmp });
  return { code, stdout, stderr };
}

describe('init', () => {
  test('writes the starter into a new directory: a flow with a producer and a subscriber, a scenario, Template tests, the scripts', async () => {
    const { code, stdout } = await init('My App');
    expect(code).toBe(0);
    const directory = path.join(tmp, 'My App');
    expect(stdout).toContain(`into ${directory}`);
    const files = fs.readdirSync(directory, { recursive: true, withFileTypes: true }).filter((entry) => entry.isFile()).map((entry) => path.relative(directory, path.join(entry.parentPath, entry.name))).sort();
    expect(files).toEqual(['.gitignore', 'README.md', 'bin/app.ts', 'cdk.json', 'package.json', 'simulation/scenario.ts', 'src/billing.ts', 'src/orders-stack.ts', 'src/place-order.ts', 'test/orders-stack.test.ts', 'tsconfig.json']);
    const manifest = JSON.parse(fs.readFileSync(path.join(directory, 'package.json'), 'utf8')) as { name: string; scripts: Record<string, string>; dependencies: Record<string, string>; devDependencies: Record<string, string> };
    expect(manifest.name).toBe('my-app');
    expect(Object.keys(manifest.scripts).sort()).toEqual(['build', 'simulate', 'synth', 'test']);
    expect(manifest.scripts.simulate).toMatch(/^tsc && idempotent-event-flow simulate --scenario simulation\/scenario\.ts /);
    const version = (JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
    expect(manifest.dependencies).toMatchObject({ 'idempotent-event-flow': version, '@idempotent-event-flow/runtime': version });
    expect(manifest.devDependencies).toMatchObject({ '@idempotent-event-flow/simulator': version });
    const stack = fs.readFileSync(path.join(directory, 'src/orders-stack.ts'), 'utf8');
    expect(stack).toContain("addProducer('PlaceOrder'");
    expect(stack).toContain("addSubscriber('Billing'");
    expect(fs.readFileSync(path.join(directory, 'test/orders-stack.test.ts'), 'utf8')).toContain('Template.fromStack');
  });

  test('the starter names the versions this repository builds and tests with', () => {
    const root = JSON.parse(fs.readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> };
    const floor = (range: string): string => range.replace(/^[\^~]/, '');
    for (const [name, range] of Object.entries(STARTER_DEPENDENCY_RANGES)) expect(floor(range), name).toBe(floor(root.devDependencies[name] ?? 'missing'));
    expect(ownVersion()).toBe((JSON.parse(fs.readFileSync(path.join(REPO, 'simulator', 'package.json'), 'utf8')) as { version: string }).version);
  });

  test('writes into an existing empty directory', async () => {
    fs.mkdirSync(path.join(tmp, 'empty'));
    expect((await init('empty')).code).toBe(0);
    expect(fs.existsSync(path.join(tmp, 'empty', 'package.json'))).toBe(true);
  });

  test('refuses a directory that holds anything, naming it and what is there, and writes nothing', async () => {
    const directory = path.join(tmp, 'taken');
    fs.mkdirSync(directory);
    fs.writeFileSync(path.join(directory, 'notes.txt'), 'mine');
    const { code, stderr } = await init('taken');
    expect(code).toBe(1);
    expect(stderr).toContain(`${directory} is not empty (1 entry, e.g. notes.txt)`);
    expect(fs.readdirSync(directory)).toEqual(['notes.txt']);
  });

  test('refuses a file and a missing or second directory argument', async () => {
    fs.writeFileSync(path.join(tmp, 'file'), '');
    expect((await init('file')).stderr).toContain('exists and is not a directory');
    expect((await init()).code).toBe(2);
    expect((await init('a', 'b')).code).toBe(2);
  });
});
