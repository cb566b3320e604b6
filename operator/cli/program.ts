/**
 * The `idempotent-event-flow` program: parses the command line, runs one of the commands it is given, and runs as the
 * process's program ({@link runFromProcess}). The operator package's bin (operator/cli/main.ts) runs the operator
 * commands with it; the simulator's (simulator/cli/main.ts) runs the same program with its own commands added.
 *
 * Exit codes: 0 success, 1 the command failed (stderr says why), 2 usage error or a command that can not run here
 * (`simulate`, `verify`, `init` without the simulator beside the operator package; `simulate` without DynamoDB Local's
 * package), 3 refused (an operator command
 * refused some or all of what it was asked, and said why: e.g. a dead letter past its deduplication window; `init`
 * refuses a directory that is not empty), 4 AWS not reached (`verify`), 5 NOT PROVEN (`simulate`: no violation, but a
 * subscriber received no event or never met a failure path steered to it), 6 not quiet in time (`verify`: no check ran).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { payloadS3Client } from './payload-client';
import { SQSClient } from '@aws-sdk/client-sqs';
import { getEventListeners } from 'node:events';
import { userInfo } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { S3PayloadStore, type PayloadReader } from '../../lambda/claim-check/payload-store';
import { EXIT_CODE, PROGRAM, type ClientOptions, type CliIo, type Command, type CommandContext, type ParsedArguments } from './command';
import { awsAccessHint, awsUnreachedReason } from './aws-access';
import { terminalConfirm } from './confirm';
import { terminalOutput } from './terminal-text';

/** Options every command accepts. */
export const GLOBAL_OPTIONS = {
  region: { type: 'string' },
  endpoint: { type: 'string' },
  'sqs-endpoint': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

/** What a program runs: its commands, the version `--version` prints, and commands it lists that run elsewhere. */
export interface Program {
  readonly commands: ReadonlyMap<string, Command>;
  /** The version of the package the program runs from, or undefined when no package.json names it. */
  readonly version: () => string | undefined;
  /** Commands listed in the usage that another package runs (name -> summary). @default none */
  readonly elsewhere?: ReadonlyMap<string, string>;
  /**
   * The commands whose errors of AWS access (no Region, no credentials, an endpoint that does not answer) are followed
   * by what to set ({@link awsAccessHint}). @default every command of {@link Program.commands}
   */
  readonly reachingAws?: ReadonlySet<string>;
}

function programUsage(program: Program): string {
  const entries: Array<[string, string]> = [...[...program.commands.values()].map((command): [string, string] => [command.name, command.summary]), ...(program.elsewhere ?? new Map())];
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const width = Math.max(...entries.map(([name]) => name.length));
  const commands = entries.map(([name, summary]) => `  ${name.padEnd(width)}  ${summary}`).join('\n');
  return [
    `Usage: ${PROGRAM} <command> [options]`,
    '',
    'Commands:',
    commands,
    '',
    'Global options:',
    '  --region <region>     AWS region (default: from the environment)',
    '  --endpoint <url>      DynamoDB endpoint, e.g. http://localhost:8000 for DynamoDB Local',
    '  --sqs-endpoint <url>  SQS endpoint, e.g. the simulator\'s SQS endpoint',
    '  -h, --help            show help (also after a command)',
    '  -V, --version         print the version (the four idempotent-event-flow packages share it)',
    '',
  ].join('\n');
}

/** Index of the command name in `argv`: the first token that is not a global option or its value. */
export function commandIndex(argv: readonly string[]): number {
  let index = 0;
  while (index < argv.length) {
    const token = argv[index] as string;
    if (token === '--region' || token === '--endpoint' || token === '--sqs-endpoint') index += 2;
    else if (token.startsWith('--region=') || token.startsWith('--endpoint=') || token.startsWith('--sqs-endpoint=') || token === '--help' || token === '-h') index += 1;
    else break;
  }
  return index;
}

function defaultUser(): string {
  try {
    return userInfo().username || 'operator';
  } catch {
    return 'operator';
  }
}

/**
 * `io` whose every output (and question) goes through {@link terminalOutput}: no control, bidi or other format
 * character from data reaches the terminal raw, whichever command wrote it, in text or JSON.
 */
function guardedIo(io: CliIo): CliIo {
  const confirm = io.confirm;
  return {
    ...io,
    stdout: (text) => io.stdout(terminalOutput(text)),
    stderr: (text) => io.stderr(terminalOutput(text)),
    ...(confirm === undefined ? {} : { confirm: (question: string) => confirm(terminalOutput(question)) }),
  };
}

/** Runs the command line `argv` (without `node` and the script) and returns the exit code. Never throws. */
export async function runProgram(argv: readonly string[], unguardedIo: CliIo, program: Program): Promise<number> {
  const io = guardedIo(unguardedIo);
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    io.stdout(`${program.version() ?? 'unknown'}\n`);
    return EXIT_CODE.OK;
  }
  const index = commandIndex(argv);
  const name = argv[index];
  if (name === undefined) {
    const asksForHelp = argv.includes('--help') || argv.includes('-h');
    (asksForHelp ? io.stdout : io.stderr)(programUsage(program));
    return asksForHelp ? EXIT_CODE.OK : EXIT_CODE.USAGE;
  }
  const command = program.commands.get(name);
  if (command === undefined) {
    io.stderr(`error: ${name.startsWith('-') ? `unknown option '${name}'` : `unknown command '${name}'`}\n\n${programUsage(program)}`);
    return EXIT_CODE.USAGE;
  }
  const usageError = (message: string): number => {
    io.stderr(`error: ${message}\n\n${command.usage}`);
    return EXIT_CODE.USAGE;
  };
  let parsed: ParsedArguments;
  try {
    const { values, positionals } = parseArgs({
      args: [...argv.slice(0, index), ...argv.slice(index + 1)],
      options: { ...command.options, ...GLOBAL_OPTIONS },
      allowPositionals: true,
      strict: true,
    });
    parsed = { values: values as ParsedArguments['values'], positionals };
  } catch (error) {
    return usageError((error as Error).message);
  }
  if (parsed.values.help === true) {
    io.stdout(command.usage);
    return EXIT_CODE.OK;
  }
  const clientOptions: ClientOptions = {
    ...(typeof parsed.values.region === 'string' ? { region: parsed.values.region } : {}),
    ...(typeof parsed.values.endpoint === 'string' ? { endpoint: parsed.values.endpoint } : {}),
    ...(typeof parsed.values['sqs-endpoint'] === 'string' ? { sqsEndpoint: parsed.values['sqs-endpoint'] } : {}),
  };
  let client: DynamoDBClient | undefined;
  let sqsClient: SQSClient | undefined;
  let payloadReader: PayloadReader | undefined;
  let s3Client: S3Client | undefined;
  const context: CommandContext = {
    io,
    clientOptions,
    client: () => (client ??= io.createClient?.(clientOptions) ?? new DynamoDBClient({ region: clientOptions.region, endpoint: clientOptions.endpoint })),
    sqsClient: () =>
      (sqsClient ??=
        io.createSqsClient?.(clientOptions) ??
        // the queue URL names the queue; requests go to the endpoint (useQueueUrlAsEndpoint off, as the runtime's client)
        new SQSClient({ region: clientOptions.region, endpoint: clientOptions.sqsEndpoint, useQueueUrlAsEndpoint: clientOptions.sqsEndpoint === undefined })),
    payloadReader: () => (payloadReader ??= io.createPayloadReader?.(clientOptions) ?? new S3PayloadStore((s3Client = payloadS3Client(clientOptions.region)))),
    now: io.now ?? (() => new Date()),
    user: io.user ?? defaultUser(),
    fail: (message) => {
      io.stderr(`error: ${message}\n`);
      return EXIT_CODE.FAILURE;
    },
    usageError,
  };
  try {
    return await command.run(parsed, context);
  } catch (error) {
    const message = error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error);
    const reachesAws = program.reachingAws?.has(name) ?? true;
    return context.fail(reachesAws && awsUnreachedReason(error) !== undefined ? `${message}. ${awsAccessHint(name)}` : message);
  } finally {
    client?.destroy();
    sqsClient?.destroy();
    s3Client?.destroy();
  }
}

/**
 * Runs `main` as the process's program: its output on the process's streams, a confirmation at a terminal, the exit
 * code as the process's. Ctrl-C: a command serving until then (simulate --serve) stops cleanly and returns; otherwise,
 * or at a second Ctrl-C, exit through Node's exit handlers, which stop child processes such as the simulator's DynamoDB Local.
 */
export function runFromProcess(main: (argv: readonly string[], io: CliIo) => Promise<number>): void {
  const stopping = new AbortController();
  const onSignal = (exitCode: number) => () => {
    if (!stopping.signal.aborted && getEventListeners(stopping.signal, 'abort').length > 0) stopping.abort();
    else process.exit(exitCode);
  };
  process.on('SIGINT', onSignal(130));
  process.on('SIGTERM', onSignal(143));
  void main(process.argv.slice(2), {
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    stderrIsTerminal: process.stderr.isTTY === true,
    confirm: terminalConfirm(),
    stopSignal: stopping.signal,
  }).then((code) => {
    process.exitCode = code;
  });
}
