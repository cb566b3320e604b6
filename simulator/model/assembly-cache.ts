/**
 * The cloud assembly a run reuses: a run synthesizes the app into one directory per project and, next time, reads it
 * again instead of synthesizing (about 10 s of the example's run, bundling included) as long as it is newer than every
 * source of the app and was made by the same app command. `--synth` synthesizes anyway.
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

/** Where a project's reused assembly lives: under its node_modules/.cache, else in the system's temporary directory. */
export function assemblyCacheDirectory(cwd: string): string {
  const project = path.resolve(cwd);
  const nodeModules = path.join(project, 'node_modules');
  if (fs.existsSync(nodeModules)) return path.join(nodeModules, '.cache', 'idempotent-event-flow', 'cdk.out');
  const hash = createHash('sha256').update(project).digest('hex').slice(0, 12);
  return path.join(os.tmpdir(), `idempotent-event-flow-${hash}`, 'cdk.out');
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

/** Reads the cached assembly when it is current (see the module comment), else synthesizes into the cache. */
export async function synthesizeOrReuse(options: AssemblyCacheOptions): Promise<AssemblySource> {
  const cwd = path.resolve(options.cwd);
  const directory = assemblyCacheDirectory(cwd);
  const source = newestSource(cwd);
  const stamp = readStamp(directory);
  const app = options.app ?? null;
  if (options.force !== true && stamp !== undefined && stamp.app === app && (source === undefined || source.modifiedAt < stamp.synthesizedAt)) {
    return { directory, reused: true, synthesizedAt: stamp.synthesizedAt, ...(source === undefined ? {} : { newestSource: source }) };
  }
  // the sources are read from here on: a file changed during the synthesis is newer than the stamp
  const synthesizedAt = Date.now();
  fs.rmSync(directory, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(directory), { recursive: true });
  await synthesize({ cwd, outputDirectory: directory, ...(options.app === undefined ? {} : { app: options.app }) });
  fs.writeFileSync(path.join(directory, STAMP), `${JSON.stringify({ app, synthesizedAt } satisfies Stamp)}\n`);
  return { directory, reused: false, synthesizedAt, ...(source === undefined ? {} : { newestSource: source }) };
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
