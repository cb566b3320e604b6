/**
 * Where the simulator package is on disk and its version, read from its package.json: the nearest one above this
 * module named `@idempotent-event-flow/simulator` (simulator/ in the repository, the installed package's root for a
 * user). `--version` prints the version and `init` pins the four packages to it.
 */
import { packageAbove } from '../../operator/cli/package-manifest';

/** The simulator package's name. */
export const SIMULATOR_PACKAGE = '@idempotent-event-flow/simulator';

/** The simulator package's root directory and version, or undefined when no package.json above names it. */
export function simulatorPackage(): { readonly root: string; readonly version: string } | undefined {
  return packageAbove(__dirname, SIMULATOR_PACKAGE);
}
