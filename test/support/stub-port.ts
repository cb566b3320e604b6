/**
 * The port of a fixture app's local HTTP stub (test/support/local-http-stub.ts), read from the environment variable
 * {@link STUB_PORT_VARIABLE} in both places that must agree: the app at synth (the functions' `STUB_URL`) and the
 * scenario when it starts the stub. No fixture fixes a port: a test file gives its own free one (use-stub-port.ts),
 * so two test files at once, or two checkouts on one machine, never share a stub. Not a test file; no vitest import
 * (the scenario module that reads it is bundled and run by the simulator).
 */

/** The environment variable that names the stub's port on 127.0.0.1. */
export const STUB_PORT_VARIABLE = 'STUB_PORT';

/** The port {@link STUB_PORT_VARIABLE} names; throws, naming `fixture`, when it is unset or not a port. */
export function stubPort(fixture: string): number {
  const text = process.env[STUB_PORT_VARIABLE];
  const port = Number(text);
  if (text === undefined || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw new Error(`the ${fixture} fixture reads its stub's port from ${STUB_PORT_VARIABLE}, which is '${text ?? ''}': set it to a free port (a test does so with useStubPort, test/support/use-stub-port.ts)`);
  }
  return port;
}

/** The stub's address as the fixture's functions call it, `http://127.0.0.1:<port>` ({@link stubPort}). */
export function stubUrl(fixture: string): string {
  return `http://127.0.0.1:${stubPort(fixture)}`;
}
