/**
 * Writing a file of the assembly cache whole or not at all: another run of the simulator may read it at any moment (a
 * pointer to an assembly, the records of runs' outputs).
 */
import * as fs from 'node:fs';

/** Temporary files this process has written: with the process id, a name no other writer uses at the same time. */
let written = 0;

/**
 * Writes `text` to `file` through a temporary file beside it and a rename, so a reader sees the old file or the new
 * one, never a part of one.
 */
export function replaceFile(file: string, text: string): void {
  written += 1;
  const temporary = `${file}.${process.pid}.${written}.tmp`;
  fs.writeFileSync(temporary, text);
  fs.renameSync(temporary, file);
}
