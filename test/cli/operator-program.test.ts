/**
 * The operator package's `idempotent-event-flow` bin (operator/cli/main.ts): it runs the operator commands itself and
 * hands `simulate`, `verify` and `init` to the simulator installed beside it, of the same version; without one it says
 * what to install, and runs no simulator code.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { expect, test } from 'vitest';
import { EXIT_CODE, type CliIo } from '../../operator/cli/command';
import { main } from '../../operator/cli/main';
import { SIMULATOR_COMMANDS, SIMULATOR_PACKAGE, type SimulatorProgram } from '../../operator/cli/simulator-commands';

const VERSION = (JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'operator', 'package.json'), 'utf8')) as { version: string }).version;

function captured(): { io: CliIo; out: () => string; err: () => string } {
  let stdout = '';
  let stderr = '';
  return { io: { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) }, out: () => stdout, err: () => stderr };
}

/** A simulator that records what it was asked to run. */
function fakeSimulator(version: string): { program: () => SimulatorProgram; calls: string[][] } {
  const calls: string[][] = [];
  return { calls, program: () => ({ version, root: '/fake/simulator', main: async (argv) => (calls.push([...argv]), 0) }) };
}

test('--version prints the operator package version; --help lists the operator commands and the simulator commands with their package', async () => {
  const version = captured();
  expect(await main(['--version'], version.io, () => undefined)).toBe(EXIT_CODE.OK);
  expect(version.out()).toBe(`${VERSION}\n`);
  const help = captured();
  expect(await main(['--help'], help.io, () => undefined)).toBe(EXIT_CODE.OK);
  for (const name of ['blocked', 'dlq', 'fence', 'inbox', 'outbox', 'replay', ...SIMULATOR_COMMANDS.keys()]) expect(help.out()).toMatch(new RegExp(`^  ${name} +\\S`, 'm'));
  expect(help.out()).toContain(`(with ${SIMULATOR_PACKAGE})`);
});

test.each([...SIMULATOR_COMMANDS.keys()])('%s without the simulator: exit 2 (could not run here; 1 is a violated flow), naming the package to install at this version', async (name) => {
  const run = captured();
  expect(await main([name, '--help'], run.io, () => undefined)).toBe(EXIT_CODE.USAGE);
  expect(run.err()).toBe(`error: '${name}' comes with ${SIMULATOR_PACKAGE}, which is not installed here: npm install --save-dev ${SIMULATOR_PACKAGE}@${VERSION}\n`);
});

test('simulate with the simulator of the same version: the whole command line goes to the simulator, global options included', async () => {
  const simulator = fakeSimulator(VERSION);
  const run = captured();
  expect(await main(['--region', 'eu-west-1', 'simulate', '--seed', '7'], run.io, simulator.program)).toBe(0);
  expect(simulator.calls).toEqual([['--region', 'eu-west-1', 'simulate', '--seed', '7']]);
});

test('a simulator of another version is refused, naming both versions; the operator commands never go to it', async () => {
  const simulator = fakeSimulator('9.9.9');
  const run = captured();
  expect(await main(['verify'], run.io, simulator.program)).toBe(EXIT_CODE.USAGE);
  expect(run.err()).toContain(`${SIMULATOR_PACKAGE} 9.9.9 (/fake/simulator) is installed beside @idempotent-event-flow/operator ${VERSION}`);
  const help = captured();
  expect(await main(['dlq', '--help'], help.io, simulator.program)).toBe(EXIT_CODE.OK);
  expect(simulator.calls).toEqual([]);
  expect(help.out()).toMatch(/^  idempotent-event-flow dlq list/m);
});

test('a simulator that is installed but cannot be loaded (e.g. never built): exit 2, naming the package and why, not a crash', async () => {
  const run = captured();
  const broken = (): SimulatorProgram => {
    throw new Error("Cannot find module '/repo/simulator/dist/simulator/cli/main.js'");
  };
  expect(await main(['simulate', '--help'], run.io, broken)).toBe(EXIT_CODE.USAGE);
  expect(run.err()).toBe(`error: 'simulate' comes with ${SIMULATOR_PACKAGE}, which could not be loaded here: Cannot find module '/repo/simulator/dist/simulator/cli/main.js'\n`);
});
