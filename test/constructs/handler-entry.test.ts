import { App, Stack } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { Subscriber } from '../../lib';
import { assertHandlerEntry, exportsOfEntry } from '../../lib/private/handler-entry';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-entry-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function file(name: string, source: string): string {
  const entry = path.join(directory, name);
  writeFileSync(entry, source);
  return entry;
}

/** A stack that bundles (so the exports check runs), without the CloudFormation validator. */
function bundlingStack(): Stack {
  return new Stack(new App({ builtinCloudFormationValidation: false }), 'Shop');
}

describe('a handler entry checked at synth (issue 12, item 8)', () => {
  test('a missing entry file fails naming the subscriber, the prop and the path', () => {
    const stack = newStack();
    const missing = path.join(directory, 'nope.ts');
    expect(() => new Subscriber(stack, 'Billing', { topic: new sns.Topic(stack, 'Topic'), entry: missing })).toThrow(
      `TestStack/Billing/Function: entry must be the handler's source file, but '${missing}' does not exist (resolved to ${missing})`,
    );
  });

  test('fails if entry is not given (a JavaScript caller), naming the subscriber and the prop', () => {
    const stack = newStack();
    expect(() => new Subscriber(stack, 'Billing', { topic: new sns.Topic(stack, 'Topic') } as never)).toThrow(
      "TestStack/Billing/Function: entry must be the path of the handler's source file, but undefined was provided",
    );
  });

  test('an ES module that does not export the configured handler fails, listing what it exports', () => {
    const stack = bundlingStack();
    const entry = file('wrong-export.ts', 'export const main = async () => ({ batchItemFailures: [] });\nexport const other = 1;\n');
    expect(() => new Subscriber(stack, 'Billing', { topic: new sns.Topic(stack, 'Topic'), entry })).toThrow(
      /^Shop\/Billing\/Function: handler must be a function '.*wrong-export\.ts' exports, but it exports no 'handler' \(its exports: 'main', 'other'\); every invocation would fail with Runtime\.HandlerNotFound/,
    );
  });

  test('the configured handler name is the one looked for; re-exports through local files count', () => {
    file('impl.ts', 'export const main = async () => ({ batchItemFailures: [] });\n');
    const entry = file('reexport.ts', "export { main } from './impl';\n");
    expect(exportsOfEntry(entry)).toEqual(['main']);
    const fn = new Construct(bundlingStack(), 'Billing');
    expect(() => assertHandlerEntry(fn, entry, 'main')).not.toThrow();
    expect(() => assertHandlerEntry(fn, entry, 'handler')).toThrow(/exports no 'handler' \(its exports: 'main'\)/);
  });

  test('a CommonJS module cannot be read before it runs: not refused', () => {
    expect(exportsOfEntry(file('common.js', 'module.exports.handler = async () => ({ batchItemFailures: [] });\n'))).toBeUndefined();
  });

  test('a star re-export whose names esbuild cannot list (a package, a CommonJS module) is not refused: its exports are unknowable', () => {
    // GIVEN entries whose handler comes through `export *` from a package (left out of the check) or a CommonJS file
    file('cjs-impl.js', 'module.exports.handler = async () => ({ batchItemFailures: [] });\n');
    const fromPackage = file('from-package.ts', "export * from 'some-handler-package';\n");
    const fromCommonJs = file('from-commonjs.ts', "export * from './cjs-impl';\nexport const other = 1;\n");
    const throughLocal = file('through-local.ts', "export * from './from-package';\n");
    // THEN nothing is claimed about their exports, and synth lets them through
    for (const entry of [fromPackage, fromCommonJs, throughLocal]) {
      expect(exportsOfEntry(entry), entry).toBeUndefined();
      expect(() => assertHandlerEntry(new Construct(bundlingStack(), 'Billing'), entry, 'handler')).not.toThrow();
    }
  });

  test('a star re-export of a local ES module is followed: its names count', () => {
    file('esm-impl.ts', 'export const main = async () => ({ batchItemFailures: [] });\n');
    const entry = file('star-local.ts', "export * from './esm-impl';\n");
    expect(exportsOfEntry(entry)).toEqual(['main']);
    expect(() => assertHandlerEntry(new Construct(bundlingStack(), 'Billing'), entry, 'handler')).toThrow(/exports no 'handler' \(its exports: 'main'\)/);
  });

  test("the exports are read with the function's bundling tsconfig, as esbuild bundles it (its paths resolve)", () => {
    // GIVEN an entry importing through a path alias that only a tsconfig kept elsewhere defines
    const lib = path.join(directory, 'aliased');
    const configs = path.join(directory, 'configs');
    mkdirSync(lib, { recursive: true });
    mkdirSync(configs, { recursive: true });
    writeFileSync(path.join(lib, 'impl.ts'), 'export const main = async () => ({ batchItemFailures: [] });\n');
    const tsconfig = path.join(configs, 'tsconfig.lambda.json');
    writeFileSync(tsconfig, JSON.stringify({ compilerOptions: { baseUrl: '..', paths: { '@impl/*': ['aliased/*'] } } }));
    const entry = file('aliased-entry.ts', "export * from '@impl/impl';\n");
    const stack = bundlingStack();
    // THEN synth knows what it exports and names the missing handler
    expect(() =>
      new Subscriber(stack, 'Billing', { topic: new sns.Topic(stack, 'Topic'), entry, bundling: { tsconfig } }),
    ).toThrow(/^Shop\/Billing\/Function: handler must be a function .* exports no 'handler' \(its exports: 'main'\)/);
  });

  test("the library's own test handler exports handler", () => {
    expect(exportsOfEntry(HANDLER_ENTRY)).toContain('handler');
  });
});
