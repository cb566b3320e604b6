/**
 * `idempotent-event-flow init <directory> [--name <app name>]`: writes a small CDK app with a flow (a producer writing
 * through the outbox, one subscriber), its Template tests, a simulation scenario and a CI script, from the templates
 * the simulator package ships (simulator/init/starter.ts), its four packages pinned to this command's version.
 */
import * as path from 'node:path';
import { installedTarballs, registrySource, STARTER_PACKAGES, tarballSource, tarballsIn, type PackageSource } from '../init/package-source';
import { appNameProblem, StarterRefusal, starterValues, writeStarter } from '../init/starter';
import { EXIT_CODE, INVOCATION, PROGRAM, type Command, type CommandContext, type ParsedArguments } from '../../operator/cli/command';
import { simulatorPackage } from './package-manifest';

/** Where the templates are in the simulator package, from its root. */
export const TEMPLATE_DIRECTORY_IN_PACKAGE = path.join('init', 'template');

const USAGE = `Usage: ${PROGRAM} init <directory> [--name <app name>] [--tarballs <dir>]

Writes a small CDK TypeScript app into <directory> (created when missing; refused, exit code 3, unless empty): an
IdempotentEventFlow in a stack, a producer that writes its orders through the outbox, one subscriber, Template tests
(vitest), a simulation scenario, and a CI script (npm run ci) that type-checks, tests and simulates. The app depends on
idempotent-event-flow, @idempotent-event-flow/runtime, @idempotent-event-flow/operator and
@idempotent-event-flow/simulator of this command's version:
from the tarballs this command was installed from, when it was (npm install <tarball>, npx --package <tarball>), else
from the npm registry; it says which.

Options:
  --name <app name>   the app's package name (lower-case words joined by hyphens, e.g. order-service; its stack is
                      the name in PascalCase). Default: the directory's name
  --tarballs <dir>    take the four packages from the release tarballs in <dir> (as npm run release:pack writes
                      them), as file: specs in the app's package.json: absolute paths, so the app installs
                      (its CI workflow too) only where they exist
`;

/** The lines printed after the app is written: what to run next, from the directory `init` was run in. */
export function nextSteps(relativeTarget: string): string[] {
  return [
    'Next steps:',
    ...(relativeTarget === '' || relativeTarget === '.' ? [] : [`  cd ${/\s/.test(relativeTarget) ? JSON.stringify(relativeTarget) : relativeTarget}`]),
    '  npm install',
    '  npm run ci          # type-check, the Template tests, then a simulation (DynamoDB Local needs Java 17 or newer)',
    '  npx cdk synth       # the templates cdk deploy would use, in cdk.out/ (no AWS credentials needed)',
    `  ${[...INVOCATION, 'simulate', '--help'].join(' ')}`,
  ];
}

/** `target` as the user would `cd` to it from `cwd`: relative below `cwd`, absolute elsewhere. */
function shownPath(cwd: string, target: string): string {
  const relative = path.relative(cwd, target);
  return relative.startsWith('..') || path.isAbsolute(relative) ? target : relative;
}

async function run(parsed: ParsedArguments, context: CommandContext): Promise<number> {
  const [directory, ...rest] = parsed.positionals;
  if (directory === undefined || directory === '') return context.usageError('init needs the directory to write the app into');
  if (rest.length > 0) return context.usageError(`unexpected argument '${rest[0]}'`);
  const cwd = context.io.cwd ?? process.cwd();
  const target = path.resolve(cwd, directory);
  const name = typeof parsed.values.name === 'string' ? parsed.values.name : path.basename(target);
  const problem = appNameProblem(name);
  if (problem !== undefined) {
    return context.usageError(typeof parsed.values.name === 'string' ? problem : `${problem} (the directory's name; give one with --name)`);
  }
  const simulator = simulatorPackage();
  if (simulator === undefined) return context.fail('the @idempotent-event-flow/simulator package.json was not found above this command: its templates and version are unknown');
  let source: PackageSource;
  if (typeof parsed.values.tarballs === 'string') {
    const directory = path.resolve(cwd, parsed.values.tarballs);
    const found = tarballsIn(directory, simulator.version);
    if ('missing' in found) return context.usageError(`--tarballs ${parsed.values.tarballs}: ${directory} has no ${found.missing.join(', ')} (the tarballs of version ${simulator.version})`);
    source = tarballSource(found.tarballs, `the tarballs in ${directory} (--tarballs)`);
  } else {
    const installed = installedTarballs(simulator.root, simulator.version);
    source =
      installed === undefined
        ? registrySource(simulator.version)
        : tarballSource(installed, `the tarballs this command was installed from (${[...new Set(Object.values(installed).map((tarball) => path.dirname(tarball)))].join(', ')})`);
  }
  const values = starterValues(name, simulator.version, source);
  let written: string[];
  try {
    written = writeStarter({ target, values, templateDirectory: path.join(simulator.root, TEMPLATE_DIRECTORY_IN_PACKAGE) });
  } catch (error) {
    if (!(error instanceof StarterRefusal)) throw error;
    context.io.stderr(`refused: ${error.message}\n`);
    return EXIT_CODE.REFUSED;
  }
  context.io.stdout(
    [
      `Wrote the app ${values.appName} (stack ${values.stackName}, idempotent-event-flow ${values.version}) into ${target}:`,
      ...written.map((file) => `  ${file}`),
      '',
      `Its packages ${Object.values(STARTER_PACKAGES).slice(0, -1).join(', ')} and ${Object.values(STARTER_PACKAGES).at(-1)}: ${values.packagesFrom}.`,
      ...(source.note === undefined ? [] : [source.note]),
      '',
      ...nextSteps(shownPath(cwd, target)),
      '',
    ].join('\n'),
  );
  return EXIT_CODE.OK;
}

/** The `init` command. */
export const initCommand: Command = {
  name: 'init',
  summary: 'write a starter app: a flow, a producer, a subscriber, Template tests, a scenario and a CI script',
  usage: USAGE,
  options: { name: { type: 'string' }, tarballs: { type: 'string' } },
  run,
};
