#!/usr/bin/env node
/**
 * The `idempotent-event-flow` command line: a dispatcher of subcommands (`blocked`; more register in {@link COMMANDS}).
 * `main(argv, io)` runs in-process, so tests call it with captured output; run as a script, it uses the process.
 *
 * Exit codes: 0 success, 1 the command failed (stderr says why), 2 usage error, 3 refused (an operator command
 * refused some or all of what it was asked, and said why: e.g. a dead letter past its deduplication window; `init`
 * refuses a directory that is not empty), 4 AWS not reached (`verify`), 5 NOT PROVEN (`simulate`: no violation, but a
 * subscriber received no event), 6 not quiet in time (`verify`: no check ran).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { payloadS3Client } from './payload-client';
import { SQSClient } from '@aws-sdk/client-sqs';
import { getEventListeners } from 'node:events';
import { userInfo } from 'node:os';
import { parseArgs, type ParseArgsConfig } from 'node:util';
import { S3PayloadStore, type PayloadReader } from '../../lambda/claim-check/payload-store';
import { blockedCommand } from '../../operator/cli/blocked-command';
import { EXIT_CODE, PROGRAM, type ClientOptions, type CliIo, type Command, type CommandContext, type ParsedArguments } from '../../operator/cli/command';
import { terminalConfirm } from '../../operator/cli/confirm';
import { dlqCommand } from '../../operator/cli/dlq-command';
import { fenceCommand } from '../../operator/cli/fence-command';
import { inboxCommand } from '../../operator/cli/inbox-command';
import { initCommand } from './init-command';
import { outboxCommand } from '../../operator/cli/outbox-command';
import { simulatorPackage } from './package-manifest';
import { replayCommand } from '../../operator/cli/replay-command';
import { simulateCommand } from './simulate-command';
import { verifyCommand } from './verify-command';
import { terminalOutput } from '../../operator/cli/terminal-text';

/** Re-exported for callers of {@link main} (tests, the simulator's served run). */
export { EXIT_CODE, PROGRAM, type ClientOptions, type CliIo, type Command, type CommandContext, type ParsedArguments } from '../../operator/cli/command';

/** The subcommands, by name. */
export const COMMANDS: ReadonlyMap<string, Command> = new Map([
  [blockedCommand.name, blockedCommand],
  [dlqCommand.name, dlqCommand],
  [fenceCommand.name, fenceCommand],
  [inboxCommand.name, inboxCommand],
  [initCommand.name, initCommand],
  [outboxCommand.name, outboxCommand],
  [replayCommand.name, replayCommand],
  [simulateCommand.name, simulateCommand],
  [verifyCommand.name, verifyCommand],
]);

/** Options every command accepts. */
export const GLOBAL_OPTIONS = {
  region: { type: 'string' },
  endpoint: { type: 'string' },
  'sqs-endpoint': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies NonNullable<ParseArgsConfig['options']>;

function programUsage(): string {
  const width = Math.max(...[...COMMANDS.keys()].map((name) => name.length));
  const commands = [...COMMANDS.values()].map((command) => `  ${command.name.padEnd(width)}  ${command.summary}`).join('\n');
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
    '  -V, --version         print the version of @idempotent-event-flow/simulator (the three packages share it)',
    '',
  ].join('\n');
}

/** Index of the command name in `argv`: the first token that is not a global option or its value. */
function commandIndex(argv: readonly string[]): number {
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
export async function main(argv: readonly string[], unguardedIo: CliIo): Promise<number> {
  const io = guardedIo(unguardedIo);
  if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-V')) {
    io.stdout(`${simulatorPackage()?.version ?? 'unknown'}\n`);
    return EXIT_CODE.OK;
  }
  const index = commandIndex(argv);
  const name = argv[index];
  if (name === undefined) {
    const asksForHelp = argv.includes('--help') || argv.includes('-h');
    (asksForHelp ? io.stdout : io.stderr)(programUsage());
    return asksForHelp ? EXIT_CODE.OK : EXIT_CODE.USAGE;
  }
  const command = COMMANDS.get(name);
  if (command === undefined) {
    io.stderr(`error: ${name.startsWith('-') ? `unknown option '${name}'` : `unknown command '${name}'`}\n\n${programUsage()}`);
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
    return context.fail(error instanceof Error ? `${error.name === 'Error' ? '' : `${error.name}: `}${error.message}` : String(error));
  } finally {
    client?.destroy();
    sqsClient?.destroy();
    s3Client?.destroy();
  }
}

// run as a script (not when imported, e.g. by tests)
if (typeof require !== 'undefined' && typeof module !== 'undefined' && require.main === module) {
  // Ctrl-C: a command serving until then (simulate --serve) stops cleanly and returns; otherwise, or at a second
  // Ctrl-C, exit through Node's exit handlers, which stop child processes such as the simulator's DynamoDB Local
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
