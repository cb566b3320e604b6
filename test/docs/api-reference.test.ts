/**
 * The API reference (docs/reference/, generated from the doc comments by scripts/api-reference/generate.mts with
 * TypeDoc) is current, generating it reports nothing TypeDoc could not document, and every export of each entry point
 * (the runtime's above all) has its page, linked from its module's index.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { describe, expect, test } from 'vitest';

const REPO = path.resolve(__dirname, '..', '..');
const TOOLS = path.join(REPO, 'scripts', 'api-reference');
const REFERENCE = path.join(REPO, 'docs', 'reference');
/** The part of the TypeScript compiler API this test uses (the project's TypeScript 7 has no such API to type it). */
interface CompilerApi {
  readonly sys: { readFile(file: string): string | undefined };
  readConfigFile(file: string, readFile: (file: string) => string | undefined): { readonly config?: unknown };
  parseJsonConfigFileContent(json: unknown, host: unknown, basePath: string): { readonly options: object };
  createProgram(rootNames: readonly string[], options: object): {
    getSourceFile(file: string): object | undefined;
    getTypeChecker(): { getSymbolAtLocation(node: object): object | undefined; getExportsOfModule(module: object): ReadonlyArray<{ readonly name: string }> };
  };
}
/** The TypeScript with the compiler API that TypeDoc uses (TypeScript 6, installed with the reference tools). */
const ts = createRequire(path.join(TOOLS, 'package.json'))('typescript') as CompilerApi;

/** The entry points, by the directory their reference is filed under (their `@module` names). */
const ENTRY_POINTS = [
  { source: 'lambda/index.ts', module: '@idempotent-event-flow/runtime' },
  { source: 'lib/index.ts', module: 'idempotent-event-flow' },
  { source: 'operator/index.ts', module: '@idempotent-event-flow/operator' },
  { source: 'simulator/index.ts', module: '@idempotent-event-flow/simulator' },
] as const;

/** Every name each entry point exports (values and types, `export *` followed), read by the compiler. */
function exportsOf(sources: readonly string[]): Map<string, string[]> {
  const configFile = ts.readConfigFile(path.join(REPO, 'tsconfig.build.json'), ts.sys.readFile);
  const { options } = ts.parseJsonConfigFileContent(configFile.config, ts.sys, REPO);
  const files = sources.map((source) => path.join(REPO, source));
  const program = ts.createProgram(files, { ...options, noEmit: true });
  const checker = program.getTypeChecker();
  return new Map(
    sources.map((source, index) => {
      const sourceFile = program.getSourceFile(files[index] as string);
      const symbol = sourceFile === undefined ? undefined : checker.getSymbolAtLocation(sourceFile);
      if (symbol === undefined) throw new Error(`${source} is not a module`);
      return [source, checker.getExportsOfModule(symbol).map((exported) => exported.name).sort()];
    }),
  );
}

/** The pages of one module's reference: export name -> path relative to the module's directory. */
function pagesOf(module: string): Map<string, string> {
  const directory = path.join(REFERENCE, ...module.split('/'));
  const pages = new Map<string, string>();
  for (const kind of fs.readdirSync(directory, { withFileTypes: true })) {
    if (!kind.isDirectory() || kind.name === 'runtime' || kind.name === 'operator' || kind.name === 'simulator') continue; // the other modules
    for (const page of fs.readdirSync(path.join(directory, kind.name))) pages.set(page.replace(/\.md$/, ''), `${kind.name}/${page}`);
  }
  return pages;
}

describe('docs/reference', () => {
  test('is what the doc comments generate, with no warning (regenerate with npm run docs:reference)', () => {
    let output: string;
    try {
      output = execFileSync(process.execPath, [path.join(REPO, 'node_modules', 'tsx', 'dist', 'cli.mjs'), path.join(TOOLS, 'generate.mts'), '--check'], {
        cwd: REPO,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      });
    } catch (error) {
      const { stdout, stderr } = error as { stdout?: string; stderr?: string };
      throw new Error(`the reference check failed:\n${stdout ?? ''}${stderr ?? ''}`);
    }
    expect(output).toMatch(/^docs\/reference is current \(\d+ pages\)/);
  });

  const exported = exportsOf(ENTRY_POINTS.map((entry) => entry.source));

  test.each(ENTRY_POINTS)('has a page for every export of $source, linked from the index of $module', ({ source, module }) => {
    const names = exported.get(source) ?? [];
    expect(names.length).toBeGreaterThan(20);
    const pages = pagesOf(module);
    const index = fs.readFileSync(path.join(REFERENCE, ...module.split('/'), 'index.md'), 'utf8');

    const missing = names.filter((name) => !pages.has(name));
    const unlinked = names.filter((name) => pages.has(name) && !index.includes(`](${pages.get(name)})`));

    expect(missing).toEqual([]);
    expect(unlinked).toEqual([]);
  });

  test('lists the runtime exports the issue named (a check of the check)', () => {
    const runtime = exported.get('lambda/index.ts') ?? [];
    expect(runtime).toEqual(
      expect.arrayContaining(['createLeaseConsumer', 'createMultiStepConsumer', 'createAggregateConsumer', 'ErrorClassifier', 'ExpiredLeasePolicy', 'LeaseHandlerContext']),
    );
  });

  test('files the operator classes under the operator package, not the runtime handlers import', () => {
    const operatorClasses = ['BlockedMessages', 'ResolveRefusedError', 'SequenceFences', 'planOrderedRedrive', 'OrderedEventRecords', 'decideSubscriberRedrive'];
    expect(exported.get('operator/index.ts') ?? []).toEqual(expect.arrayContaining(operatorClasses));
    expect((exported.get('lambda/index.ts') ?? []).filter((name) => operatorClasses.includes(name))).toEqual([]);
  });
});
