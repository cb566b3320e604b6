/**
 * The files a run of the simulator writes into the project (its `--json`, its `--log`, the file its stdout or stderr is
 * redirected to), which are no sources of the app for the assembly cache (./assembly-cache.ts): writing them must not
 * make the next run synthesize again. A file is one of them while this run writes it (by its path, or as the file one of
 * the run's descriptors is open on), and afterwards while it is as a run left it: each run records, in the project's
 * cache, the identity (device and inode), size and modification time of each output it wrote, and a later run leaves
 * out a file that matches a record in all four. So a loop of seeds writing `seed-1.json`, `seed-2.json`, ... into the
 * project reads one assembly, and a file the user changes afterwards is a source again.
 *
 * Two runs that record at once may lose one's records (the last rename wins): its outputs then count as sources once,
 * and the next run synthesizes. Only the newest {@link KEPT_RECORDS} records are kept.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { replaceFile } from './replace-file';

/** What a run writes into the project, which is therefore no source of the app. */
export interface RunOutputs {
  /** Files the run writes (its `--json`, its `--log`), relative to the project or absolute. @default none */
  readonly outputFiles?: readonly string[];
  /**
   * Open file descriptors the run writes to (the command's stdout and stderr, 1 and 2): a file of the project one of
   * them is open on (`simulate ... > run.txt`) is an output. A descriptor that is not a file (a terminal, a pipe) is
   * none. @default none
   */
  readonly outputDescriptors?: readonly number[];
}

/** One output a run left: the file's identity, size and modification time when the run was done with it. */
interface OutputRecord {
  readonly device: number;
  readonly inode: number;
  readonly size: number;
  readonly modifiedAt: number;
}

const RECORDS = 'run-outputs.json';
/** How many records are kept (the newest): a loop of seeds, each with its --json, --log and stdout file, fits. */
export const KEPT_RECORDS = 300;

/** Whether a file of the project, by its path and stat, is one of the run's outputs, or an earlier run's as it left it. */
export type OutputTest = (file: string, stat: fs.Stats) => boolean;

/**
 * The test of {@link RunOutputs} for files under `directory`, with the records kept in `cacheRoot` (the project's
 * assembly cache).
 */
export function outputTest(directory: string, cacheRoot: string, outputs: RunOutputs = {}): OutputTest {
  const paths = new Set((outputs.outputFiles ?? []).map((file) => path.resolve(directory, file)));
  const open = new Set<string>();
  for (const descriptor of outputs.outputDescriptors ?? []) {
    const stat = openFileStat(descriptor);
    if (stat !== undefined) open.add(identity(stat));
  }
  const left = new Set(readRecords(cacheRoot).map((record) => `${record.device}:${record.inode}:${record.size}:${record.modifiedAt}`));
  return (file, stat) => {
    if (paths.has(path.resolve(directory, file))) return true;
    // a file system without inode numbers (0) cannot tell one file from another: no file is an output by its identity
    if (stat.ino === 0) return false;
    return open.has(identity(stat)) || left.has(`${identity(stat)}:${stat.size}:${stat.mtimeMs}`);
  };
}

/**
 * Records the outputs a run is done with (call it once it wrote them: after its --json, at its end for its log and
 * stdout), in `cacheRoot`, so that later runs leave them out while they are as they are now. A file that does not exist
 * or is outside `directory`, or a descriptor open on no file, is not recorded; a failure to record is ignored (the next
 * run synthesizes).
 */
export function recordRunOutputs(directory: string, cacheRoot: string, outputs: RunOutputs): void {
  const stats: fs.Stats[] = [];
  for (const file of outputs.outputFiles ?? []) {
    // a file outside the project is no source anyway
    const relative = path.relative(directory, path.resolve(directory, file));
    if (relative === '..' || relative.startsWith(`..${path.sep}`) || path.isAbsolute(relative)) continue;
    try {
      const stat = fs.statSync(path.resolve(directory, file));
      if (stat.isFile()) stats.push(stat);
    } catch {
      // not written
    }
  }
  for (const descriptor of outputs.outputDescriptors ?? []) {
    const stat = openFileStat(descriptor);
    if (stat !== undefined) stats.push(stat);
  }
  const added = stats.filter((stat) => stat.ino !== 0).map((stat) => ({ device: stat.dev, inode: stat.ino, size: stat.size, modifiedAt: stat.mtimeMs }));
  if (added.length === 0) return;
  const kept = readRecords(cacheRoot).filter((record) => !added.some((one) => one.device === record.device && one.inode === record.inode));
  const records = [...kept, ...added].slice(-KEPT_RECORDS);
  try {
    fs.mkdirSync(cacheRoot, { recursive: true, mode: 0o700 });
    replaceFile(path.join(cacheRoot, RECORDS), `${JSON.stringify({ outputs: records })}\n`);
  } catch {
    // not recorded: the next run counts these files as sources and synthesizes
  }
}

function identity(stat: fs.Stats): string {
  return `${stat.dev}:${stat.ino}`;
}

/** The stat of the file `descriptor` is open on, or undefined when it is open on no file (a terminal, a pipe) or closed. */
function openFileStat(descriptor: number): fs.Stats | undefined {
  try {
    const stat = fs.fstatSync(descriptor);
    return stat.isFile() ? stat : undefined;
  } catch {
    return undefined;
  }
}

function readRecords(cacheRoot: string): OutputRecord[] {
  try {
    const parsed = JSON.parse(fs.readFileSync(path.join(cacheRoot, RECORDS), 'utf8')) as { outputs?: unknown };
    if (!Array.isArray(parsed.outputs)) return [];
    return parsed.outputs.filter(
      (record): record is OutputRecord =>
        typeof record === 'object' && record !== null && ['device', 'inode', 'size', 'modifiedAt'].every((field) => typeof (record as Record<string, unknown>)[field] === 'number'),
    );
  } catch {
    return [];
  }
}
