import { App, Stack } from 'aws-cdk-lib';
import * as sns from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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

  test("the library's own test handler exports handler", () => {
    expect(exportsOfEntry(HANDLER_ENTRY)).toContain('handler');
  });
});
