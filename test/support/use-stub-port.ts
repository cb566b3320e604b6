/**
 * A test file's own port for a fixture's local HTTP stub (stub-port.ts): a free port, found by listening on 0, set in
 * {@link STUB_PORT_VARIABLE} before the file's tests (and before the synth of a `beforeAll` registered after it, whose
 * child process inherits it), restored after them.
 */
import { afterAll, beforeAll, vi } from 'vitest';
import { freePort } from './dynamodb-local';
import { STUB_PORT_VARIABLE } from './stub-port';

/**
 * Sets {@link STUB_PORT_VARIABLE} to a free port before the calling file's tests; call it before the `beforeAll` that
 * synthesizes the fixture app. Returns the port (read it once the file's tests run).
 */
export function useStubPort(): () => number {
  let port: number | undefined;
  beforeAll(async () => {
    port = await freePort();
    vi.stubEnv(STUB_PORT_VARIABLE, String(port));
  });
  afterAll(() => {
    vi.unstubAllEnvs();
  });
  return () => {
    if (port === undefined) throw new Error('the stub port is set before the tests of the file that calls useStubPort');
    return port;
  };
}
