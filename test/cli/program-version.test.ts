/**
 * `idempotent-event-flow --version` (nu10's trial: `--version` was an unknown option, so a user could not check the
 * version the three packages must share): prints the simulator package's version, exit 0.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { expect, test } from 'vitest';
import { main } from '../../simulator/cli/main';

const VERSION = (JSON.parse(readFileSync(path.join(__dirname, '..', '..', 'simulator', 'package.json'), 'utf8')) as { version: string }).version;

test.each([['--version'], ['-V']])('%s prints the version of @idempotent-event-flow/simulator and exits 0', async (flag) => {
  let stdout = '';
  let stderr = '';
  const code = await main([flag], { stdout: (text) => void (stdout += text), stderr: (text) => void (stderr += text) });
  expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: `${VERSION}\n`, stderr: '' });
});

test('the program help names --version', async () => {
  let stdout = '';
  const code = await main(['--help'], { stdout: (text) => void (stdout += text), stderr: () => undefined });
  expect(code).toBe(0);
  expect(stdout).toMatch(/-V, --version +print the version/);
});
