/**
 * Which JDK a command on the PATH belongs to, told without running it (a `javac -version` cost about 160 ms of each
 * DynamoDB Local start): the compiled launcher and the class-data archive are kept per JDK.
 */
import { realpathSync, statSync } from 'node:fs';
import * as path from 'node:path';

/** The real path and modification time of `command` on the PATH (what names the JDK it belongs to), or undefined. */
export function commandOnPath(command: string): string | undefined {
  for (const directory of (process.env.PATH ?? '').split(path.delimiter)) {
    if (directory === '') continue;
    try {
      const found = realpathSync(path.join(directory, command));
      const stat = statSync(found);
      if (stat.isFile()) return `${found}\n${stat.mtimeMs}`;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}
