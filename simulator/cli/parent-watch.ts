/**
 * Whether the npm process that started this one is gone. `npx` (npm exec) runs a command as `npm exec` -> `sh -c
 * '<bin>'` -> the command, and passes no SIGKILL on (nor SIGTERM, in some npm versions): killing it leaves the command
 * orphaned, and a `simulate --serve` would go on serving, its DynamoDB Local with it. A serving command started by npm
 * (npx, `npm exec`, an npm script: npm sets `npm_command` in its environment) watches its parent, and, when that parent
 * is the shell npm runs the command with, the npm process above it too, and stops as at SIGTERM when one of them ends.
 * One started otherwise (directly, with `nohup ... &`, by a CI step's shell that then ends) is not watched: it serves
 * until it is stopped (SIGINT/SIGTERM), as `nohup` means (review r13, R13-1 and R13-2).
 */
import { readFileSync } from 'node:fs';

/** How {@link whenParentGone} looks. */
export interface ParentWatchOptions {
  /**
   * The parent's pid. @default the parent this process had when this module was loaded (the command's start): a parent
   * that ended before the watch began (npx killed during the run, before serving) is then seen gone at the first look,
   * where `process.ppid` read late would name init or a subreaper and watch nothing
   */
  readonly parentPid?: number;
  /**
   * Whether npm started this process (then it watches; else it never resolves).
   * @default {@link startedByNpm} of `process.env`
   */
  readonly underNpm?: boolean;
  /**
   * The pids watched, child first, each the parent of the one before. @default the parent, and its parent too when the
   * parent is a shell ({@link watchedAncestors}), as they were when this module was loaded when `parentPid` is not given
   */
  readonly ancestors?: readonly number[];
  /**
   * Whether `pid` is alive and still the parent of `childPid` (undefined: this process). @default where `/proc/<child>/stat`
   * says (an orphan's parent is init's at once, though its dead parent may linger as a zombie that `kill(pid, 0)` still
   * finds) and `process.kill(pid, 0)` succeeds or is refused (EPERM: it exists)
   */
  readonly isAlive?: (pid: number, childPid: number | undefined) => boolean;
  /** How often to look, in ms. @default 1000 */
  readonly everyMs?: number;
  /** Stops watching (the promise then never resolves). @default watches until the parent is gone */
  readonly signal?: AbortSignal;
}

/** Whether npm started the process whose environment is `environment` (npx, `npm exec`, `npm run`: npm sets these). */
export function startedByNpm(environment: NodeJS.ProcessEnv): boolean {
  return environment.npm_command !== undefined || environment.npm_lifecycle_event !== undefined;
}

/** A process's parent pid where the system says (Linux: `/proc/<pid>/stat`, whose 4th field is the parent's pid). */
function parentPidOf(pid: number | 'self'): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(fields[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/** A process's command name (`/proc/<pid>/comm`), if it can be read. */
function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The shells npm runs a command with (`sh -c`; `script-shell` may name another). */
const SHELLS = new Set(['sh', 'dash', 'bash', 'ash', 'zsh']);

/** The pids to watch: `parentPid`, and its parent too when `parentPid` is a shell (npm's `sh -c`) whose parent is no init. */
export function watchedAncestors(parentPid: number): number[] {
  const command = commandOf(parentPid);
  const grandparent = command !== undefined && SHELLS.has(command) ? parentPidOf(parentPid) : undefined;
  return grandparent === undefined || grandparent <= 1 ? [parentPid] : [parentPid, grandparent];
}

/** This process's parent and the ancestors to watch, read once when the module loads (before any run could orphan it). */
const AT_LOAD = ((): { readonly parentPid: number; readonly ancestors: readonly number[] } => {
  const parentPid = process.ppid;
  return { parentPid, ancestors: parentPid <= 1 ? [parentPid] : watchedAncestors(parentPid) };
})();

function processAlive(pid: number, childPid: number | undefined): boolean {
  const current = parentPidOf(childPid ?? 'self');
  if (current !== undefined && current !== pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Resolves once a watched ancestor is gone (see the module comment). It never resolves when npm did not start this
 * process, or when it was orphaned to init (pid 1) from the start: there is no parent to watch. The timer does not keep
 * the process alive.
 */
export function whenParentGone(options: ParentWatchOptions = {}): Promise<void> {
  const parentPid = options.parentPid ?? AT_LOAD.parentPid;
  const isAlive = options.isAlive ?? processAlive;
  return new Promise((resolve) => {
    if (parentPid <= 1 || !(options.underNpm ?? startedByNpm(process.env))) return;
    const ancestors = options.ancestors ?? (options.parentPid === undefined ? AT_LOAD.ancestors : watchedAncestors(parentPid));
    const timer = setInterval(() => {
      if (ancestors.every((pid, index) => isAlive(pid, index === 0 ? undefined : ancestors[index - 1]))) return;
      clearInterval(timer);
      resolve();
    }, options.everyMs ?? 1000);
    timer.unref();
    options.signal?.addEventListener('abort', () => clearInterval(timer), { once: true });
  });
}
