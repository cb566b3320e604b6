/**
 * The cloud assembly a run reuses: a run synthesizes the app into the project's cache and, next time, reads it again
 * instead of synthesizing (about 10 s of the example's run, bundling included) as long as it is newer than every
 * source of the app and was made by the same app command. `--synth` synthesizes anyway.
 *
 * Two runs in one project may synthesize at once, and a run reads its assembly's function code until it ends (each
 * cold start loads it): so each synthesis writes a directory of its own (`assemblies/<time>-<random>`), never touched
 * again, and then points `current.json` at it (written to a temporary file and renamed: a reader sees the old pointer
 * or the new one, whole). Directories the pointer left are removed once they are an hour old, when no run still reads
 * them. The cache is the project's `node_modules/.cache/idempotent-event-flow`, else a directory of this user's
 * (`$XDG_CACHE_HOME` or `~/.cache`), never the system's shared temporary directory, where another user could put an
 * assembly whose code the simulator would run.
 *
 * The app's sources are every file under the project directory but dependencies and outputs (`node_modules`,
 * `cdk.out*`, `dist`, `coverage` and hidden directories such as `.git`): a change anywhere else (a construct, a
 * handler, cdk.json, package-lock.json) makes the next run synthesize.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { synthesize } from './synthesize';

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
export interface AssemblyCacheOptions {
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
}

/** How long an assembly the pointer no longer names is kept for the runs still reading it. */
const UNUSED_ASSEMBLY_KEPT_MS = 60 * 60 * 1000;
const POINTER = 'current.json';
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

/** The assembly the project's cache points at (whether or not it is current), or undefined. */
export function cachedAssemblyDirectory(cwd: string): string | undefined {
  return readPointer(assemblyCacheRoot(cwd));
}

/** The newest file under `directory` that is a source of the app (see the module comment). */
export function newestSource(directory: string): { file: string; modifiedAt: number } | undefined {
  let newest: { file: string; modifiedAt: number } | undefined;
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
        const modifiedAt = fs.statSync(file).mtimeMs;
        if (newest === undefined || modifiedAt > newest.modifiedAt) newest = { file, modifiedAt };
      }
    }
  };
  visit(directory);
  return newest;
}

/** How a synthesis fills a directory; the real one runs the app's `cdk synth`. */
export type Synthesizer = (options: { readonly cwd: string; readonly outputDirectory: string; readonly app?: string }) => Promise<unknown>;

/** Reads the cached assembly when it is current (see the module comment), else synthesizes into the cache. */
export async function synthesizeOrReuse(options: AssemblyCacheOptions & { readonly synthesizer?: Synthesizer }): Promise<AssemblySource> {
  const cwd = path.resolve(options.cwd);
  const root = assemblyCacheRoot(cwd);
  const source = newestSource(cwd);
  const app = options.app ?? null;
  const current = readPointer(root);
  const stamp = current === undefined ? undefined : readStamp(current);
  if (options.force !== true && current !== undefined && stamp !== undefined && stamp.app === app && (source === undefined || source.modifiedAt < stamp.synthesizedAt)) {
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
  fs.writeFileSync(path.join(directory, STAMP), `${JSON.stringify({ app, synthesizedAt } satisfies Stamp)}\n`);
  writePointer(root, directory);
  removeUnused(root, directory);
  return { directory, reused: false, synthesizedAt, ...(source === undefined ? {} : { newestSource: source }) };
}

function readPointer(root: string): string | undefined {
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(root, POINTER), 'utf8')) as { directory?: unknown };
    if (typeof parsed.directory !== 'string') return undefined;
    // the pointer names a directory of the cache, nothing else
    const directory = path.join(root, ASSEMBLIES, path.basename(parsed.directory));
    return fs.existsSync(directory) ? directory : undefined;
  } catch {
    return undefined;
  }
}

function writePointer(root: string, directory: string): void {
  const temporary = path.join(root, `${POINTER}.${process.pid}.${Math.random().toString(36).slice(2)}`);
  fs.writeFileSync(temporary, `${JSON.stringify({ directory: path.basename(directory) })}\n`);
  fs.renameSync(temporary, path.join(root, POINTER));
}

/** Removes the assemblies the pointer left an hour ago or more, and the single directory of earlier versions. */
function removeUnused(root: string, kept: string): void {
  const pointed = readPointer(root);
  const now = Date.now();
  let names: string[] = [];
  try {
    names = fs.readdirSync(path.join(root, ASSEMBLIES));
  } catch {
    return;
  }
  for (const name of names) {
    const directory = path.join(root, ASSEMBLIES, name);
    if (directory === kept || directory === pointed) continue;
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
    return { app: typeof parsed.app === 'string' ? parsed.app : null, synthesizedAt: parsed.synthesizedAt };
  } catch {
    return undefined;
  }
}
