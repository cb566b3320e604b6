/**
 * What the `idempotent-event-flow` program and its subcommands share: the program's name, its exit codes, where a run
 * reads and writes, and the shape of a subcommand. Below main.ts and every command file, so they import it, not each
 * other.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SQSClient } from '@aws-sdk/client-sqs';
import type { PayloadReader } from '../../lambda/claim-check/payload-store';
import type { ParseArgsConfig } from 'node:util';

/** The program's name, as users type it. */
export const PROGRAM = 'idempotent-event-flow';

/**
 * How a printed command runs the program where README's install put it (a dev dependency of the app, whose bin is not
 * on the PATH): through npx, so a command pasted as printed runs.
 */
export const INVOCATION = ['npx', PROGRAM] as const;

/**
 * Exit codes. `NOT_PROVEN`: `simulate` found no violation, but the run proved too little: some subscriber received no
 * event, or never met a failure path the run's fault rates steer to it (simulator/run/verdict.ts): a CI step must not
 * go green on it.
 */
export const EXIT_CODE = { OK: 0, FAILURE: 1, USAGE: 2, REFUSED: 3, AWS_UNREACHED: 4, NOT_PROVEN: 5, NOT_QUIET: 6 } as const;

/** Where a run reads and writes; tests pass their own. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** Creates the DynamoDB client. @default `new DynamoDBClient({ region, endpoint })`, credentials from the environment */
  readonly createClient?: (options: ClientOptions) => DynamoDBClient;
  /** Creates the SQS client. @default `new SQSClient({ region, endpoint: sqsEndpoint })`, credentials from the environment */
  readonly createSqsClient?: (options: ClientOptions) => SQSClient;
  /**
   * Creates what reads offloaded events' data from the payload bucket (`dlq show --fetch`).
   * @default an `S3PayloadStore` over `new S3Client({ region })`, credentials from the environment
   */
  readonly createPayloadReader?: (options: ClientOptions) => PayloadReader;
  /** The clock of operator timestamps. @default the system clock */
  readonly now?: () => Date;
  /** Who runs the command, for audit entries. @default the OS user name */
  readonly user?: string;
  /** The directory relative paths are read from. @default the process's working directory */
  readonly cwd?: string;
  /** Whether stderr is a terminal (progress is then redrawn in place). @default false */
  readonly stderrIsTerminal?: boolean;
  /**
   * Asks the operator a yes/no question before a command without `--yes` changes anything (dlq redrive, replay).
   * @default none: without `--yes` those commands are dry runs (run as a script at a terminal: a prompt)
   */
  readonly confirm?: (question: string) => Promise<boolean>;
  /**
   * Aborted when the operator asks the program to stop (Ctrl-C, SIGTERM): a command that serves until then
   * (`simulate --serve`) listens on it, stops what it runs and returns.
   * @default the process's SIGINT and SIGTERM
   */
  readonly stopSignal?: AbortSignal;
}

/** What the global options say about the DynamoDB client. */
export interface ClientOptions {
  readonly region?: string;
  readonly endpoint?: string;
  /** The SQS endpoint (`--sqs-endpoint`), e.g. the simulator's. */
  readonly sqsEndpoint?: string;
}

/** The parsed command line of a subcommand (its own options merged with the global ones). */
export interface ParsedArguments {
  readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>;
  readonly positionals: readonly string[];
}

/** What a subcommand gets to run with. */
export interface CommandContext {
  readonly io: CliIo;
  readonly clientOptions: ClientOptions;
  /** The DynamoDB client (created on first use). */
  client(): DynamoDBClient;
  /** The SQS client (created on first use). */
  sqsClient(): SQSClient;
  /** The reader of offloaded events' data (created on first use). */
  payloadReader(): PayloadReader;
  now(): Date;
  /** Who runs the command. */
  readonly user: string;
  /** Writes `error: <message>` to stderr and returns {@link EXIT_CODE.FAILURE}. */
  fail(message: string): number;
  /** Writes `error: <message>` and the command's usage to stderr and returns {@link EXIT_CODE.USAGE}. */
  usageError(message: string): number;
}

/** A subcommand. */
export interface Command {
  readonly name: string;
  /** One line for the program's help. */
  readonly summary: string;
  /** The command's help text. */
  readonly usage: string;
  /** Its options (`parseArgs` format); the global options are added. */
  readonly options: NonNullable<ParseArgsConfig['options']>;
  run(parsed: ParsedArguments, context: CommandContext): Promise<number>;
}
