/**
 * The cloud assembly a run reuses: a run synthesizes the app into the project's cache and, next time, reads it again
 * instead of synthesizing (about 10 s of the example's run, bundling included) as long as nothing that can change it
 * changed: the app command, the environment the synthesis sees, the user's ~/.cdk.json, and the project's files
 * (cdk.json and cdk.context.json among them), each by its path, size and modification time, none newer than the
 * assembly. Each such key has its own assembly, so runs that alternate between two environments (a stage variable set
 * and not) each read their own. `--synth` synthesizes anyway, and the next run reads what it synthesized.
 *
 * Two runs in one project may synthesize at once, and a run reads its assembly's function code until it ends (each
 * cold start loads it): so each synthesis writes a directory of its own (`assemblies/<time>-<random>`), never touched
 * again, and then points the key's pointer (`current-<key>.json`) at it (written to a temporary file and renamed: a
 * reader sees the old pointer or the new one, whole). Directories no pointer names are removed once they are an hour
 * old, when no run still reads them; a key not synthesized for a week loses its pointer. The cache is the project's
 * `node_modules/.cache/idempotent-event-flow`, else a directory of this user's (`$XDG_CACHE_HOME` or `~/.cache`), never
 * the system's shared temporary directory, where another user could put an assembly whose code the simulator would run.
 *
 * The app's sources are every file under the project directory but dependencies and outputs (`node_modules`,
 * `cdk.out*`, `dist`, `coverage` and hidden directories such as `.git`): a change anywhere else (a construct, a
 * handler, cdk.json, package-lock.json), a file added, removed or put back with an older time, makes the next run
 * synthesize. The run's own outputs are no sources either (./run-outputs.ts: its `--json` and `--log`, the file its
 * stdout or stderr is redirected to, and an earlier run's as that run left them), so that runs writing them into the
 * project read one assembly; any other file written there (a `| tee` copy, a report of another tool) is a source like
 * any file. The environment is every variable but the credentials the synthesis never sees and the shell's own
 * bookkeeping ({@link IGNORED_VARIABLES}).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { replaceFile } from './replace-file';
import { outputTest, recordRunOutputs, type RunOutputs } from './run-outputs';
import { CREDENTIAL_VARIABLES, synthesize } from './synthesize';

/** Where a run's cloud assembly came from: read again, or synthesized (by `synthesizeOrReuse`). */
export interface AssemblySource {
  readonly directory: string;
  /** Whether an earlier synthesis was read again. */
  readonly reused: boolean;
  /** When the assembly was synthesized (epoch ms). */
  readonly synthesizedAt: number;
  /** The newest source file and its modification time, when the project has one. */
  readonly newestSource?: { readonly file: string; readonly modifiedAt: number };
}

/** Options of {@link synthesizeOrReuse}. */
export interface AssemblyCacheOptions extends RunOutputs {
  /** The project directory (cdk.json). */
  readonly cwd: string;
  /** The app command. @default cdk.json's */
  readonly app?: string;
  /** Synthesize even when the cached assembly is current. @default false */
  readonly force?: boolean;
}

/** Directories that hold no source of the app. */
const NOT_SOURCES = new Set(['node_modules', 'dist', 'coverage']);
const STAMP = 'ief-assembly.json';

interface Stamp {
  readonly app: string | null;
  readonly synthesizedAt: number;
  /** What the assembly was synthesized from ({@link assemblyKey}). */
  readonly key?: string;
}

/**
 * Variables of the shell's own bookkeeping, which change from one terminal or `npm run` to the next and which no app
 * reads to decide what it synthesizes: left out of the key.
 */
export const IGNORED_VARIABLES: ReadonlySet<string> = new Set([
  '_',
  'SHLVL',
  'OLDPWD',
  'PWD',
  'COLUMNS',
  'LINES',
  'TERM',
  'TERM_PROGRAM',
  'TERM_PROGRAM_VERSION',
  'TERM_SESSION_ID',
  'COLORTERM',
  'WINDOWID',
  'SSH_CLIENT',
  'SSH_CONNECTION',
  'SSH_TTY',
  'SSH_AUTH_SOCK',
  'TMUX',
  'TMUX_PANE',
  'STY',
  'DISPLAY',
  'INIT_CWD',
  'npm_command',
  'npm_lifecycle_event',
  'npm_lifecycle_script',
]);

/** How long an assembly the pointer no longer names is kept for the runs still reading it. */
const UNUSED_ASSEMBLY_KEPT_MS = 60 * 60 * 1000;
/** How long the pointer of a key nobody synthesized (or read) for is kept. */
const UNUSED_POINTER_KEPT_MS = 7 * 24 * 60 * 60 * 1000;
const POINTER_PREFIX = 'current-';
const ASSEMBLIES = 'assemblies';

/** Where a project's reused assemblies live: under its node_modules/.cache, else in this user's cache directory. */
export function assemblyCacheRoot(cwd: string): string {
  const project = path.resolve(cwd);
  const nodeModules = path.join(project, 'node_modules');
  if (fs.existsSync(nodeModules)) return path.join(nodeModules, '.cache', 'idempotent-event-flow');
  const hash = createHash('sha256').update(project).digest('hex').slice(0, 12);
  const userCache = process.env.XDG_CACHE_HOME !== undefined && path.isAbsolute(process.env.XDG_CACHE_HOME) ? process.env.XDG_CACHE_HOME : path.join(os.homedir(), '.cache');
  return path.join(userCache, 'idempotent-event-flow', hash);
}

/** The assembly the project's cache points at for `key` (whether or not it is current), or undefined. */
export function cachedAssemblyDirectory(cwd: string, key: string): string | undefined {
  return readPointer(assemblyCacheRoot(cwd), key);
}

/** One source file of the app: its path (relative to the project), size and modification time. */
interface SourceFile {
  readonly file: string;
  readonly size: number;
  readonly modifiedAt: number;
}

/** The newest file under `directory` that is a source of the app (see the module comment), the run's `outputs` left out. */
export function newestSource(directory: string, outputs: RunOutputs = {}): { file: string; modifiedAt: number } | undefined {
  let newest: { file: string; modifiedAt: number } | undefined;
  for (const { file, modifiedAt } of sourceFiles(directory, outputs)) {
    if (newest === undefined || modifiedAt > newest.modifiedAt) newest = { file: path.join(directory, file), modifiedAt };
  }
  return newest;
}

/** Every source file of the app under `directory` (see the module comment), the run's `outputs` left out, in a stable order. */
function sourceFiles(directory: string, outputs: RunOutputs = {}): SourceFile[] {
  const files: SourceFile[] = [];
  const isOutput = outputTest(directory, assemblyCacheRoot(directory), outputs);
  const visit = (folder: string): void => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.name.startsWith('.') || NOT_SOURCES.has(entry.name) || entry.name.startsWith('cdk.out')) continue;
      const file = path.join(folder, entry.name);
      if (entry.isDirectory()) {
        visit(file);
      } else if (entry.isFile()) {
        const stat = fs.statSync(file);
        if (isOutput(file, stat)) continue;
        files.push({ file: path.relative(directory, file), size: stat.size, modifiedAt: stat.mtimeMs });
      }
    }
  };
  visit(path.resolve(directory));
  return files.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
}

/** The environment as it can change a synthesis: every variable but the credentials and {@link IGNORED_VARIABLES}. */
function synthesisInputs(environment: NodeJS.ProcessEnv): [string, string][] {
  const credentials = new Set<string>(CREDENTIAL_VARIABLES);
  return Object.entries(environment)
    .filter((entry): entry is [string, string] => entry[1] !== undefined && !credentials.has(entry[0]) && !IGNORED_VARIABLES.has(entry[0]))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function readOptional(file: string): string | null {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/**
 * Records the outputs a run is done with (its --json once written, its log and stdout at its end) in the project's
 * cache, so that later runs leave them out while they are as they are now (./run-outputs.ts).
 */
export function recordOutputs(cwd: string, outputs: RunOutputs): void {
  recordRunOutputs(path.resolve(cwd), assemblyCacheRoot(cwd), outputs);
}

/**
 * The key of what a synthesis of the app in `cwd` is made from: the app command, the environment, ~/.cdk.json, and
 * every source file's path, size and modification time, the run's outputs left out (see the module comment). Two runs
 * with one key synthesize the same assembly.
 */
export function assemblyKey(
  options: RunOutputs & {
    readonly cwd: string;
    readonly app?: string;
    readonly environment?: NodeJS.ProcessEnv;
  },
): string {
  const cwd = path.resolve(options.cwd);
  const inputs = {
    app: options.app ?? null,
    environment: synthesisInputs(options.environment ?? process.env),
    userSettings: readOptional(path.join(os.homedir(), '.cdk.json')),
    sources: sourceFiles(cwd, options).map(({ file, size, modifiedAt }) => [file, size, modifiedAt]),
  };
  return createHash('sha256').update(JSON.stringify(inputs)).digest('hex').slice(0, 32);
}

/** How a synthesis fills a directory; the real one runs the app's `cdk synth`. */
export type Synthesizer = (options: { readonly cwd: string; readonly outputDirectory: string; readonly app?: string }) => Promise<unknown>;

/** Reads the cached assembly when it is current (see the module comment), else synthesizes into the cache. */
export async function synthesizeOrReuse(options: AssemblyCacheOptions & { readonly synthesizer?: Synthesizer }): Promise<AssemblySource> {
  const cwd = path.resolve(options.cwd);
  const root = assemblyCacheRoot(cwd);
  const outputs: RunOutputs = { outputFiles: options.outputFiles ?? [], outputDescriptors: options.outputDescriptors ?? [] };
  const source = newestSource(cwd, outputs);
  const app = options.app ?? null;
  const key = assemblyKey({ cwd, ...outputs, ...(options.app === undefined ? {} : { app: options.app }) });
  const current = readPointer(root, key);
  const stamp = current === undefined ? undefined : readStamp(current);
  const unchanged = stamp !== undefined && stamp.key === key && stamp.app === app && (source === undefined || source.modifiedAt < stamp.synthesizedAt);
  if (options.force !== true && current !== undefined && unchanged) {
    touch(pointerFile(root, key));
    return { directory: current, reused: true, synthesizedAt: stamp.synthesizedAt, ...(source === undefined ? {} : { newestSource: source }) };
  }
  // the sources are read from here on: a file changed during the synthesis is newer than the stamp
  const synthesizedAt = Date.now();
  fs.mkdirSync(path.join(root, ASSEMBLIES), { recursive: true, mode: 0o700 });
  const directory = fs.mkdtempSync(path.join(root, ASSEMBLIES, `${synthesizedAt}-`));
  try {
    await (options.synthesizer ?? synthesize)({ cwd, outputDirectory: directory, ...(options.app === undefined ? {} : { app: options.app }) });
  } catch (error) {
    fs.rmSync(directory, { recursive: true, force: true });
    throw error;
  }
  fs.writeFileSync(path.join(directory, STAMP), `${JSON.stringify({ app, synthesizedAt, key } satisfies Stamp)}\n`);
  writePointer(root, key, directory);
  removeUnused(root, directory);
  return { directory, reused: false, synthesizedAt, ...(source === undefined ? {} : { newestSource: source }) };
}

function pointerFile(root: string, key: string): string {
  return path.join(root, `${POINTER_PREFIX}${key}.json`);
}

function readPointer(root: string, key: string): string | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(pointerFile(root, key), 'utf8')) as { directory?: unknown };
    if (typeof parsed.directory !== 'string') return undefined;
    // the pointer names a directory of the cache, nothing else
    const directory = path.join(root, ASSEMBLIES, path.basename(parsed.directory));
    return fs.existsSync(directory) ? directory : undefined;
  } catch {
    return undefined;
  }
}

/** Marks a pointer as used now (it is kept a week from its last use). */
function touch(file: string): void {
  try {
    const now = new Date();
    fs.utimesSync(file, now, now);
  } catch {
    // another run removed it: the next run synthesizes
  }
}

function writePointer(root: string, key: string, directory: string): void {
  replaceFile(pointerFile(root, key), `${JSON.stringify({ directory: path.basename(directory) })}\n`);
}

/**
 * The directories the pointers name; a pointer last written a week ago or more is removed first, and so are the
 * single pointer and directory of earlier versions (`current.json`, `cdk.out`).
 */
function pointedDirectories(root: string, now: number): Set<string> {
  const pointed = new Set<string>();
  fs.rmSync(path.join(root, 'current.json'), { force: true });
  for (const name of fs.readdirSync(root)) {
    const match = /^current-([0-9a-f]+)\.json$/.exec(name);
    if (match === null) continue;
    try {
      if (now - fs.statSync(path.join(root, name)).mtimeMs >= UNUSED_POINTER_KEPT_MS) {
        fs.rmSync(path.join(root, name), { force: true });
        continue;
      }
    } catch {
      continue;
    }
    const directory = readPointer(root, match[1]!);
    if (directory !== undefined) pointed.add(directory);
  }
  return pointed;
}

/** Removes the assemblies no pointer names that are an hour old or more, and the single directory of earlier versions. */
function removeUnused(root: string, kept: string): void {
  const now = Date.now();
  const pointed = pointedDirectories(root, now);
  let names: string[] = [];
  try {
    names = fs.readdirSync(path.join(root, ASSEMBLIES));
  } catch {
    return;
  }
  for (const name of names) {
    const directory = path.join(root, ASSEMBLIES, name);
    if (directory === kept || pointed.has(directory)) continue;
    try {
      if (now - fs.statSync(directory).mtimeMs >= UNUSED_ASSEMBLY_KEPT_MS) fs.rmSync(directory, { recursive: true, force: true });
    } catch {
      // another run removed it first
    }
  }
  fs.rmSync(path.join(root, 'cdk.out'), { recursive: true, force: true });
}

function readStamp(directory: string): Stamp | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(directory, STAMP), 'utf8')) as Partial<Stamp>;
    if (typeof parsed.synthesizedAt !== 'number' || !fs.existsSync(path.join(directory, 'manifest.json'))) return undefined;
    return { app: typeof parsed.app === 'string' ? parsed.app : null, synthesizedAt: parsed.synthesizedAt, ...(typeof parsed.key === 'string' ? { key: parsed.key } : {}) };
  } catch {
    return undefined;
  }
}
