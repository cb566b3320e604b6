#!/usr/bin/env node
/**
 * The simulator's `idempotent-event-flow` program: the operator package's program with the simulator's commands
 * (`init`, `simulate`, `verify`) added to the operator commands. The operator package's bin hands those three to this
 * module's {@link main} (the package's `./cli` export); `npm run demo` and the tests run it from source.
 */
import type { CliIo, Command } from '../../operator/cli/command';
import { OPERATOR_COMMANDS } from '../../operator/cli/commands';
import { runFromProcess, runProgram } from '../../operator/cli/program';
import { initCommand } from './init-command';
import { simulatorPackage } from './package-manifest';
import { simulateCommand } from './simulate-command';
import { verifyCommand } from './verify-command';

/** Re-exported for callers of {@link main} (tests, the simulator's served run). */
export { EXIT_CODE, PROGRAM, type ClientOptions, type CliIo, type Command, type CommandContext, type ParsedArguments } from '../../operator/cli/command';

/** The subcommands, by name: the operator's and the simulator's. */
export const COMMANDS: ReadonlyMap<string, Command> = new Map([...OPERATOR_COMMANDS, ...[initCommand, simulateCommand, verifyCommand].map((command): [string, Command] => [command.name, command])]);

/** Runs the command line `argv` (without `node` and the script) and returns the exit code. Never throws. */
export function main(argv: readonly string[], io: CliIo): Promise<number> {
  return runProgram(argv, io, { commands: COMMANDS, version: () => simulatorPackage()?.version, reachingAws: new Set(OPERATOR_COMMANDS.keys()) });
}

// run as a script (not when imported, e.g. by tests)
if (typeof require !== 'undefined' && typeof module !== 'undefined' && require.main === module) runFromProcess(main);
