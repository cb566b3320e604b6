#!/usr/bin/env node
/**
 * The operator package's `idempotent-event-flow` bin: the operator commands (`blocked`, `dlq`, `fence`, `inbox`,
 * `outbox`, `replay`), and `simulate`, `verify` and `init` handed to `@idempotent-event-flow/simulator` when it is
 * installed beside this package at the same version; when it is not (missing, not loadable, another version), those
 * three exit 2, the code of a command that could not run as asked, never 1, a violated flow's. `main(argv, io)` runs
 * in-process, so tests call it with captured output; run as a script, it uses the process.
 */
import { EXIT_CODE, type CliIo } from './command';
import { OPERATOR_COMMANDS } from './commands';
import { operatorPackage } from './package-manifest';
import { commandIndex, runFromProcess, runProgram } from './program';
import { installedSimulator, SIMULATOR_COMMANDS, SIMULATOR_PACKAGE, type SimulatorProgram } from './simulator-commands';

/** Runs the command line `argv` (without `node` and the script) and returns the exit code. Never throws. */
export async function main(argv: readonly string[], io: CliIo, simulator: () => SimulatorProgram | undefined = installedSimulator): Promise<number> {
  const version = operatorPackage()?.version;
  const name = argv[commandIndex(argv)];
  if (name !== undefined && SIMULATOR_COMMANDS.has(name)) {
    let program: SimulatorProgram | undefined;
    try {
      program = simulator();
    } catch (error) {
      io.stderr(`error: '${name}' comes with ${SIMULATOR_PACKAGE}, which could not be loaded here: ${error instanceof Error ? error.message : String(error)}\n`);
      return EXIT_CODE.USAGE;
    }
    if (program === undefined) {
      io.stderr(`error: '${name}' comes with ${SIMULATOR_PACKAGE}, which is not installed here: npm install --save-dev ${SIMULATOR_PACKAGE}${version === undefined ? '' : `@${version}`}\n`);
      return EXIT_CODE.USAGE;
    }
    if (version !== undefined && program.version !== version) {
      io.stderr(`error: ${SIMULATOR_PACKAGE} ${program.version} (${program.root}) is installed beside @idempotent-event-flow/operator ${version}: install both at one version\n`);
      return EXIT_CODE.USAGE;
    }
    return program.main(argv, io);
  }
  return runProgram(argv, io, { commands: OPERATOR_COMMANDS, version: () => version, elsewhere: SIMULATOR_COMMANDS });
}

// run as a script (not when imported, e.g. by tests)
if (typeof require !== 'undefined' && typeof module !== 'undefined' && require.main === module) runFromProcess((argv, io) => main(argv, io));
