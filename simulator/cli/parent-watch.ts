/**
 * Whether the process that started this one is gone. `npx` (npm exec) does not pass SIGTERM on to the command it runs:
 * killing it leaves the command orphaned, and a `simulate --serve` would go on serving, its DynamoDB Local with it. A
 * serving command watches its parent and stops as at SIGTERM when the parent ends.
 */
import { readFileSync } from 'node:fs';

/** How {@link whenParentGone} looks. */
export interface ParentWatchOptions {
  /** The parent's pid. @default `process.ppid` (as at start) */
  readonly parentPid?: number;
  /**
   * Whether the parent is alive. @default it is still this process's parent (where `/proc/self/stat` says) and
   * `process.kill(pid, 0)` succeeds or is refused (EPERM: it exists)
   */
  readonly isAlive?: (pid: number) => boolean;
  /** How often to look, in ms. @default 1000 */
  readonly everyMs?: number;
  /** Stops watching (the promise then never resolves). @default watches until the parent is gone */
  readonly signal?: AbortSignal;
}

/**
 * This process's parent now, where the system says (Linux: `/proc/self/stat`, whose 4th field is the parent's pid; an
 * orphan's is init's, at once, though its dead parent may linger as a zombie that `kill(pid, 0)` still finds).
 */
function currentParentPid(): number | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ppid = Number(fields[1]);
    return Number.isInteger(ppid) ? ppid : undefined;
  } catch {
    return undefined;
  }
}

function processAlive(pid: number): boolean {
  const current = currentParentPid();
  if (current !== undefined && current !== pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Resolves once the parent process is gone (or this process was orphaned to init, pid 1, from the start: there is no
 * parent to watch, and it never resolves). The timer does not keep the process alive.
 */
export function whenParentGone(options: ParentWatchOptions = {}): Promise<void> {
  const parentPid = options.parentPid ?? process.ppid;
  const isAlive = options.isAlive ?? processAlive;
  return new Promise((resolve) => {
    if (parentPid <= 1) return;
    const timer = setInterval(() => {
      if (isAlive(parentPid)) return;
      clearInterval(timer);
      resolve();
    }, options.everyMs ?? 1000);
    timer.unref();
    options.signal?.addEventListener('abort', () => clearInterval(timer), { once: true });
  });
}
