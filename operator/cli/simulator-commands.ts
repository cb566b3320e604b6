/**
 * The commands of `@idempotent-event-flow/simulator` (`simulate`, `verify`, `init`), which the operator package's bin
 * hands to the simulator's own program when the simulator is installed beside it, of the same version. The operator
 * package does not depend on the simulator: a machine that operates production has no simulator, and these commands
 * say what to install.
 */
import { createRequire } from 'node:module';
import * as path from 'node:path';
import type { CliIo } from './command';

/** The simulator package's name. */
export const SIMULATOR_PACKAGE = '@idempotent-event-flow/simulator';

/** The commands the simulator runs, with the summary the operator's usage lists for each. */
export const SIMULATOR_COMMANDS: ReadonlyMap<string, string> = new Map([
  ['init', `write a starter app into a new directory (with ${SIMULATOR_PACKAGE})`],
  ['simulate', `run the app on this machine with faults injected and check it is exactly-once (with ${SIMULATOR_PACKAGE})`],
  ['verify', `run a scenario against the deployed app and check it (with ${SIMULATOR_PACKAGE})`],
]);

/** The simulator's program, as its package exports it. */
export interface SimulatorProgram {
  readonly version: string;
  readonly root: string;
  readonly main: (argv: readonly string[], io: CliIo) => Promise<number>;
}

/**
 * The simulator installed where this package is (its own node_modules tree first, then the working directory's), or
 * undefined when there is none.
 */
export function installedSimulator(): SimulatorProgram | undefined {
  const resolver = createRequire(__filename);
  let manifestPath: string;
  try {
    manifestPath = resolver.resolve(`${SIMULATOR_PACKAGE}/package.json`, { paths: [__dirname, process.cwd()] });
  } catch {
    return undefined;
  }
  const { version } = resolver(manifestPath) as { version: string };
  const root = path.dirname(manifestPath);
  const { main } = resolver(`${SIMULATOR_PACKAGE}/cli`) as { main: SimulatorProgram['main'] };
  return { version, root, main };
}
