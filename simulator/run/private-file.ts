/**
 * The simulator's output files (the run's log, the JSON result) hold what handlers printed and the events' payloads:
 * they are readable and writable by their owner only (mode 0600), also when the file existed with wider permissions.
 */
import { chmodSync, writeFileSync } from 'node:fs';

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
