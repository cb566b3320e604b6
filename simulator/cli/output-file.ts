/**
 * An output file a command writes at its end (`verify --json`): checked before the command does anything, so that a
 * path it cannot write is a usage error up front, not an error after the run that hides its verdict.
 */
import { accessSync, constants, statSync } from 'node:fs';
import * as path from 'node:path';
import { writePrivateFile } from '../run/private-file';

/**
 * Why `file` cannot be written (its directory is missing or not writable, or it is a directory or a read-only file),
 * or undefined when it can. Creates nothing.
 */
export function outputFileProblem(file: string): string | undefined {
  const directory = path.dirname(file);
  try {
    if (!statSync(directory).isDirectory()) return `${directory} is not a directory`;
  } catch {
    return `there is no directory ${directory}`;
  }
  try {
    accessSync(directory, constants.W_OK);
  } catch {
    return `the directory ${directory} is not writable`;
  }
  try {
    const stats = statSync(file);
    if (stats.isDirectory()) return `${file} is a directory`;
    accessSync(file, constants.W_OK);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return `${file} is not writable`;
  }
  return undefined;
}

/**
 * Writes `content` to `file` (0600, writePrivateFile) and returns undefined, or the reason it could not: a failure
 * here must not turn the command's outcome into another.
 */
export function writeOutputFile(file: string, content: string): string | undefined {
  try {
    writePrivateFile(file, content);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}
