/**
 * `idempotent-event-flow init <dir>`: writes a starter app (simulator/cli/starter/starter-files.ts) into a new or empty
 * directory, naming the packages at this command's own version. Refuses a directory that holds anything.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { EXIT_CODE, type Command, type CommandContext, type ParsedArguments } from './command';
import { starterFiles } from './starter/starter-files';

const USAGE = `Usage:
  idempotent-event-flow init <dir>

Writes a small app into <dir> (created when missing; refused when it holds anything): one flow, a producer
(PlaceOrder) and one subscriber (Billing), a simulation scenario, Template tests of the stack, and the scripts
  npm test            the stack's tests
  npm run synth       the CloudFormation templates
  npm run simulate    the flow on this machine with faults injected (DynamoDB Local needs Java 17 or newer)
Then: cd <dir> && npm install.
`;

/** The version of this command's package (the three packages share one version), from its package.json. */
export function ownVersion(start: string = __dirname): string {
  for (let directory = start; ; directory = path.dirname(directory)) {
    const candidate = path.join(directory, 'package.json');
    if (fs.existsSync(candidate)) {
      const manifest = JSON.parse(fs.readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (manifest.name === '@idempotent-event-flow/simulator' && manifest.version !== undefined) return manifest.version;
    }
    if (path.dirname(directory) === directory) throw new Error(`no package.json of @idempotent-event-flow/simulator above ${start}`);
  }
}

/** An npm package name from a directory name: lower case, only the characters npm allows. */
function packageName(directory: string): string {
  const name = path.basename(directory).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+/, '');
  return name === '' ? 'event-flow-app' : name;
}

export const initCommand: Command = {
  name: 'init',
  summary: 'write a starter app (a flow, a producer, a subscriber, a scenario and tests) into a new directory',
  usage: USAGE,
  options: {},
  async run(parsed: ParsedArguments, context: CommandContext): Promise<number> {
    if (parsed.positionals.length !== 1) return context.usageError(`init takes one directory, got ${parsed.positionals.length}`);
    const directory = path.resolve(context.io.cwd ?? process.cwd(), parsed.positionals[0] as string);
    if (fs.existsSync(directory)) {
      if (!fs.statSync(directory).isDirectory()) return context.fail(`${directory} exists and is not a directory`);
      const entries = fs.readdirSync(directory);
      if (entries.length > 0) {
        return context.fail(`${directory} is not empty (${entries.length} entr${entries.length === 1 ? 'y' : 'ies'}, e.g. ${entries.sort()[0]}): init writes only into a new or empty directory, so nothing of yours is overwritten`);
      }
    }
    const files = starterFiles(packageName(directory), ownVersion());
    for (const [file, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(directory, file)), { recursive: true });
      fs.writeFileSync(path.join(directory, file), content);
    }
    context.io.stdout(`wrote ${Object.keys(files).length} files into ${directory}\nnext: cd ${path.relative(context.io.cwd ?? process.cwd(), directory) || '.'} && npm install && npm test && npm run simulate\n`);
    return EXIT_CODE.OK;
  },
};
