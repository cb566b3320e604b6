/**
 * Synthesizes a CDK app into a cloud assembly with the CDK CLI of the user's project, without AWS: no credentials are
 * offered to the CLI (so it looks up no account), no context lookups, no notices, no version check, no telemetry.
 */
import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { createRequire } from 'node:module';
import * as os from 'node:os';
import * as path from 'node:path';
import { synthRefusal } from './synth-output';

/** Options of {@link synthesize}. */
export interface SynthesizeOptions {
  /** The app command, e.g. `npx tsx bin/app.ts`. @default the `app` of cdk.json in `cwd` (the CLI reads it) */
  readonly app?: string;
  /** The project directory: where cdk.json is and whose `aws-cdk` CLI runs. */
  readonly cwd: string;
  /** Where the cloud assembly goes; relative paths are relative to `cwd`. */
  readonly outputDirectory: string;
  /** Context values, each passed as `--context key=value`. @default none */
  readonly context?: Readonly<Record<string, string>>;
}

/** Synthesis failed; the message has the exit code, the command and the last lines of its output. */
export class SynthesisError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SynthesisError';
  }
}

/**
 * The app's `cdk synth` ran and failed: the app refused to synthesize (a construct's validation error, an exception of
 * the app's code). Its message is the CLI's failure with the output's last lines; {@link refusal} is the app's own
 * message alone (./synth-output.ts), {@link how} the exit code or signal, {@link commandLine} the command that ran.
 */
export class SynthRefusedError extends SynthesisError {
  constructor(
    message: string,
    public readonly refusal: string,
    public readonly how: string,
    public readonly commandLine: string,
  ) {
    // named as every synth failure is (what a caller that prints the name shows is unchanged)
    super(message);
  }
}

/** Nothing names the app: no `app` option, and no cdk.json (or ~/.cdk.json) with an `app` command. */
export class NoAppError extends SynthesisError {
  constructor(message: string) {
    super(message);
    this.name = 'NoAppError';
  }
}

/** How many trailing lines of the CLI's output a {@link SynthesisError} quotes. */
const QUOTED_OUTPUT_LINES = 40;
/** How much trailing output is kept while the CLI runs. */
const KEPT_OUTPUT_CHARACTERS = 64 * 1024;

/**
 * Environment variables that would give the CLI AWS credentials or a profile: removed, so that `cdk synth` does not
 * call STS to find the default account (the synthesized templates are then environment-agnostic, the same on every
 * machine).
 */
export const CREDENTIAL_VARIABLES = [
  'AWS_PROFILE',
  'AWS_DEFAULT_PROFILE',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_SECURITY_TOKEN',
  'AWS_WEB_IDENTITY_TOKEN_FILE',
  'AWS_ROLE_ARN',
  'AWS_ROLE_SESSION_NAME',
  'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
  'AWS_CONTAINER_CREDENTIALS_FULL_URI',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN',
  'AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE',
] as const;

/** Runs `cdk synth` of the app into outputDirectory (no AWS credentials needed) and returns the assembly directory. */
export async function synthesize(options: SynthesizeOptions): Promise<string> {
  const cwd = path.resolve(options.cwd);
  const outputDirectory = path.resolve(cwd, options.outputDirectory);
  if (options.app === undefined && !hasAppCommand(path.join(cwd, 'cdk.json')) && !hasAppCommand(path.join(os.homedir(), '.cdk.json'))) {
    throw new NoAppError(
      `no app to synthesize: ${cwd} has no cdk.json with an "app" command, and no --app was given. ` +
        'Run in the directory of your CDK app, or pass --app "<command>" (e.g. --app "npx tsx bin/app.ts"), or --assembly <dir> with a synthesized cloud assembly',
    );
  }
  const cli = cdkCommand(cwd);
  const args = [
    ...cli.args,
    'synth',
    ...(options.app === undefined ? [] : ['--app', options.app]),
    '--output',
    outputDirectory,
    '--quiet',
    '--no-notices',
    '--no-lookups',
    '--no-color',
    ...Object.entries(options.context ?? {}).flatMap(([key, value]) => ['--context', `${key}=${value}`]),
  ];
  const commandLine = [cli.command, ...args].map(quoteForDisplay).join(' ');
  const { exitCode, signal, output } = await run(cli.command, args, cwd, cli.shell);
  if (exitCode !== 0) {
    const how = signal === null ? `exit code ${exitCode}` : `signal ${signal}`;
    throw new SynthRefusedError(`cdk synth failed (${how}) in ${cwd}: ${commandLine}\n${lastLines(output, QUOTED_OUTPUT_LINES)}`, synthRefusal(output), how, commandLine);
  }
  if (!fs.existsSync(path.join(outputDirectory, 'manifest.json'))) {
    throw new SynthesisError(`cdk synth wrote no cloud assembly to ${outputDirectory} (no manifest.json): ${commandLine}\n${lastLines(output, QUOTED_OUTPUT_LINES)}`);
  }
  return outputDirectory;
}

/** Whether a CDK settings file (cdk.json, ~/.cdk.json) names the app command. */
export function hasAppCommand(file: string): boolean {
  try {
    const settings: unknown = JSON.parse(fs.readFileSync(file, 'utf8'));
    return typeof settings === 'object' && settings !== null && typeof (settings as { app?: unknown }).app === 'string';
  } catch (error) {
    // a cdk.json that is there but is not JSON: the CLI says what is wrong with it
    return (error as NodeJS.ErrnoException).code === undefined;
  }
}

/** The project's own CLI (`aws-cdk/bin/cdk` resolved from cwd), run by this Node.js; else a `cdk` on the PATH. */
function cdkCommand(cwd: string): { command: string; args: string[]; shell: boolean } {
  try {
    const bin = createRequire(path.join(cwd, 'package.json')).resolve('aws-cdk/bin/cdk');
    return { command: process.execPath, args: [bin], shell: false };
  } catch {
    const onPath = findOnPath(process.platform === 'win32' ? ['cdk.cmd', 'cdk.exe', 'cdk'] : ['cdk']);
    if (onPath === undefined) {
      throw new SynthesisError(
        `the AWS CDK CLI was not found: aws-cdk is not installed in ${cwd} and there is no cdk on the PATH; npm install --save-dev aws-cdk ` +
          '(or pass --assembly <dir> with a cloud assembly synthesized by other means)',
      );
    }
    // a .cmd script on Windows only a shell can start
    return { command: onPath, args: [], shell: process.platform === 'win32' };
  }
}

/** The first of these executable names in a directory of the PATH. */
function findOnPath(names: readonly string[]): string | undefined {
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    for (const name of names) {
      const candidate = path.join(directory, name);
      try {
        fs.accessSync(candidate, fs.constants.X_OK);
        if (fs.statSync(candidate).isFile()) return candidate;
      } catch {
        // not here
      }
    }
  }
  return undefined;
}

function synthesisEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CDK_DISABLE_VERSION_CHECK: '1',
    CDK_DISABLE_CLI_TELEMETRY: 'true',
    // No credentials from ~/.aws, the instance metadata service or a container: the account lookup finds none.
    AWS_CONFIG_FILE: os.devNull,
    AWS_SHARED_CREDENTIALS_FILE: os.devNull,
    AWS_EC2_METADATA_DISABLED: 'true',
  };
  for (const variable of CREDENTIAL_VARIABLES) delete env[variable];
  return env;
}

function run(
  command: string,
  args: readonly string[],
  cwd: string,
  shell: boolean,
): Promise<{ exitCode: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(shell ? quoteForShell(command) : command, shell ? args.map(quoteForShell) : args, { cwd, env: synthesisEnvironment(), shell, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    const keep = (chunk: Buffer): void => {
      output = (output + chunk.toString('utf8')).slice(-KEPT_OUTPUT_CHARACTERS);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', (error) => reject(new SynthesisError(`Cannot start the CDK CLI (${command}) in ${cwd}: ${error.message}`)));
    child.on('close', (exitCode, signal) => resolve({ exitCode, signal, output }));
  });
}

function lastLines(output: string, count: number): string {
  const lines = output.trimEnd().split(/\r?\n/);
  return lines.length === 0 || (lines.length === 1 && lines[0] === '') ? '(no output)' : lines.slice(-count).join('\n');
}

function quoteForDisplay(argument: string): string {
  return /^[\w./:=@+,-]+$/.test(argument) ? argument : JSON.stringify(argument);
}

function quoteForShell(argument: string): string {
  return /^[\w./:=@+,-]+$/.test(argument) ? argument : `"${argument.replace(/"/g, '\\"')}"`;
}
