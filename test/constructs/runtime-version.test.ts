import { App, Stack } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { Subscriber } from '../../lib';
import { assertRuntimeVersion, constructsVersion, runtimeVersionFor } from '../../lib/private/runtime-version';

const REPO = path.resolve(__dirname, '..', '..');
const OWN_VERSION = (JSON.parse(readFileSync(path.join(REPO, 'package.json'), 'utf8')) as { version: string }).version;
const directory = mkdtempSync(path.join(tmpdir(), 'ief-runtime-version-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** A user project whose node_modules holds `@idempotent-event-flow/runtime` at `version`, with a handler file. */
function projectWithRuntime(name: string, version: string | undefined): string {
  const project = path.join(directory, name);
  if (version !== undefined) {
    const runtime = path.join(project, 'node_modules', '@idempotent-event-flow', 'runtime');
    mkdirSync(runtime, { recursive: true });
    writeFileSync(path.join(runtime, 'package.json'), JSON.stringify({ name: '@idempotent-event-flow/runtime', version, main: 'index.js' }));
    writeFileSync(path.join(runtime, 'index.js'), 'module.exports = {};\n');
  }
  mkdirSync(path.join(project, 'src'), { recursive: true });
  const entry = path.join(project, 'src', 'billing.ts');
  writeFileSync(entry, "import { createTransactionalConsumer } from '@idempotent-event-flow/runtime';\nexport const handler = createTransactionalConsumer({ handle: async () => {} });\n");
  return entry;
}

describe('one version across the packages (issue 32, item 3)', () => {
  test("the constructs' version is this package's, and the runtime's is the one the handler resolves", () => {
    expect(constructsVersion().version).toBe(OWN_VERSION);
    expect(runtimeVersionFor(projectWithRuntime('resolves', '9.8.7'))?.version).toBe('9.8.7');
    expect(runtimeVersionFor(projectWithRuntime('none', undefined))).toBeUndefined();
  });

  test('a subscriber whose handler resolves a runtime of another version fails at synth naming both versions', () => {
    const entry = projectWithRuntime('older', '0.0.9');
    const stack = new Stack(new App({ builtinCloudFormationValidation: false }), 'Shop');
    expect(() => new Subscriber(stack, 'Billing', { topic: new sns.Topic(stack, 'Topic'), entry })).toThrow(
      new RegExp(
        `^Shop/Billing/Function: the handler ${entry.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is bundled with @idempotent-event-flow/runtime 0\\.0\\.9 \\(.*\\), ` +
          `but the constructs are idempotent-event-flow ${OWN_VERSION.replace(/\./g, '\\.')} \\(.*\\); .* npm install @idempotent-event-flow/runtime@${OWN_VERSION.replace(/\./g, '\\.')}`,
      ),
    );
  });

  test('the same version, or no runtime installed beside the handler, passes; a stack that does not bundle is not checked', () => {
    const stack = new Stack(new App(), 'Shop');
    const scope = new Construct(stack, 'Billing');
    expect(() => assertRuntimeVersion(scope, projectWithRuntime('same', OWN_VERSION))).not.toThrow();
    expect(() => assertRuntimeVersion(scope, projectWithRuntime('absent', undefined))).not.toThrow();
    const notBundling = new Stack(new App({ context: { 'aws:cdk:bundling-stacks': ['Other'] } }), 'Shop');
    expect(() => assertRuntimeVersion(new Construct(notBundling, 'Billing'), projectWithRuntime('other-not-bundled', '0.0.1'))).not.toThrow();
    expect(() => assertRuntimeVersion(scope, projectWithRuntime('other', '0.0.1'))).toThrow(/@idempotent-event-flow\/runtime 0\.0\.1/);
  });
});
