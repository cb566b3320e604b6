/**
 * Where the simulator package is on disk and its version, read from its package.json: the nearest one above this
 * module named `@idempotent-event-flow/simulator` (simulator/ in the repository, the installed package's root for a
 * user). `--version` prints the version and `init` pins the three packages to it.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

/** The simulator package's name. */
export const SIMULATOR_PACKAGE = '@idempotent-event-flow/simulator';

/** The simulator package's root directory and version, or undefined when no package.json above names it. */
export function simulatorPackage(): { readonly root: string; readonly version: string } | undefined {
  for (let directory = __dirname; ; directory = path.dirname(directory)) {
    const manifest = path.join(directory, 'package.json');
    if (existsSync(manifest)) {
      const { name, version } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string };
      if (name === SIMULATOR_PACKAGE && version !== undefined) return { root: directory, version };
    }
    if (path.dirname(directory) === directory) return undefined;
  }
}
