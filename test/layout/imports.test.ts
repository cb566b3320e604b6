/**
 * The layout the package split relies on (issue 32, item 6): no import circle anywhere (type-only imports included),
 * the contract folder shared by the constructs and the runtime imports nothing outside itself, and the constructs reach
 * into the runtime's folder only for that contract (so jsii compiles lib/ and lambda/contract/ alone, and the
 * constructs package has no dependencies). Read with dpdm, the dependency analyser, over every entry point.
 */
import * as path from 'node:path';
import { parseCircular, parseDependencyTree, type DependencyTree } from 'dpdm';
import { beforeAll, describe, expect, test } from 'vitest';

const REPO = path.resolve(__dirname, '..', '..');
const ENTRIES = ['lib/index.ts', 'lambda/index.ts', 'lambda/consumer/factory-names.ts', 'simulator/index.ts', 'simulator/cli/main.ts', 'bin/example-app.ts'];

let tree: DependencyTree;

beforeAll(async () => {
  const cwd = process.cwd();
  process.chdir(REPO); // dpdm names files relative to the working directory
  try {
    // transform: false keeps type-only imports, which a circle of types is made of too
    tree = await parseDependencyTree(ENTRIES, { context: REPO, transform: false, skipDynamicImports: false, tsconfig: path.join(REPO, 'tsconfig.json') });
  } finally {
    process.chdir(cwd);
  }
});

/** The repository files `file` imports (packages and node's modules left out). */
function importsOf(file: string): string[] {
  return (tree[file] ?? []).map((dependency) => dependency.id).filter((id): id is string => id !== null && !id.includes('node_modules') && !id.startsWith('node:'));
}

/** The packages `file` imports (bare specifiers that are not node's modules). */
function packagesOf(file: string): string[] {
  return (tree[file] ?? []).filter((dependency) => dependency.id === null || dependency.id.includes('node_modules')).map((dependency) => dependency.request);
}

describe('the layout of the three packages', () => {
  test('reads every source file the entry points reach', () => {
    const files = Object.keys(tree);
    expect(files).toEqual(expect.arrayContaining(['lib/index.ts', 'lambda/contract/wire-format.ts', 'operator/cli/command.ts', 'simulator/observation/run-facts.ts']));
    expect(files.length).toBeGreaterThan(250);
  });

  test('has no import circle, type-only imports included', () => {
    expect(parseCircular(tree).map((circle) => circle.join(' -> '))).toEqual([]);
  });

  test('the contract folder imports nothing outside itself: no package, no other file', () => {
    const contract = Object.keys(tree).filter((file) => file.startsWith('lambda/contract/'));
    expect(contract.length).toBeGreaterThanOrEqual(6);
    expect(contract.flatMap((file) => [...importsOf(file).filter((id) => !id.startsWith('lambda/contract/')), ...packagesOf(file)].map((id) => `${file} -> ${id}`))).toEqual([]);
  });

  test('the constructs reach into the runtime folder only for the contract', () => {
    const lib = Object.keys(tree).filter((file) => file.startsWith('lib/'));
    const outside = lib.flatMap((file) => importsOf(file).filter((id) => !id.startsWith('lib/') && !id.startsWith('lambda/contract/')).map((id) => `${file} -> ${id}`));
    expect(outside).toEqual([]);
  });

  test('the CLI commands import the shared command types, not the program (simulator/cli/main.ts)', () => {
    const commands = Object.keys(tree).filter((file) => file.startsWith('simulator/cli/') && file !== 'simulator/cli/main.ts');
    expect(commands.filter((file) => importsOf(file).includes('simulator/cli/main.ts'))).toEqual([]);
  });
});
