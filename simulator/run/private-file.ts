/**
 * The simulator's output files (the run's log, the JSON result) hold what handlers printed and the events' payloads:
 * they are readable and writable by their owner only (mode 0600), also when the file existed with wider permissions.
 */
import { chmodSync, renameSync, rmSync, writeFileSync } from 'node:fs';

/** The permissions of every file the simulator writes: read and write for the owner, nothing for anyone else. */
export const PRIVATE_FILE_MODE = 0o600;

/**
 * Empties `file` (creating it if needed) and makes it 0600 before anything is written to it, then writes `content`.
 * `writeFileSync`'s `mode` applies only to a file it creates, hence the `chmod`.
 */
export function writePrivateFile(file: string, content = ''): void {
  writeFileSync(file, '', { mode: PRIVATE_FILE_MODE });
  chmodSync(file, PRIVATE_FILE_MODE);
  if (content !== '') writeFileSync(file, content);
}

/**
 * Writes `content` to `file` (0600) as a whole: to a temporary name beside it, then renamed into place, so that a reader
 * polling for the file (a CI step sourcing `simulate --serve`'s endpoint file) sees the old file or the whole new one,
 * never an empty or partly written one.
 */
export function replacePrivateFile(file: string, content: string): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writePrivateFile(temporary, content);
    renameSync(temporary, file);
  } finally {
    rmSync(temporary, { force: true });
  }
}
