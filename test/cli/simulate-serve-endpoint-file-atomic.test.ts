/**
 * Review r13, R13-6: a CI step waits for cdk.out/simulate-serve.env and sources it. The serve created the file empty and
 * then wrote it (a poller could source nothing between), and a file left by a serve that never reached its stop
 * (SIGKILL, OOM) stood there through the next serve's run, read at once as the live one. The file is now written under
 * a temporary name and renamed into place (a reader sees the old file or the whole new one, never an empty one), and a
 * serve removes any old file when it starts, before its run.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, expect, test } from 'vitest';
import { removeStaleEndpointFile } from '../../simulator/cli/simulate-serve';
import { PRIVATE_FILE_MODE, replacePrivateFile } from '../../simulator/run/private-file';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-serve-env-atomic-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

test('the file is replaced whole (a new file renamed over the old: another inode), 0600, no temporary file left', () => {
  const file = path.join(directory, 'simulate-serve.env');
  writeFileSync(file, 'export AWS_ENDPOINT_URL=http://127.0.0.1:1\n', { mode: 0o644 });
  const before = statSync(file).ino;
  replacePrivateFile(file, 'export AWS_ENDPOINT_URL=http://127.0.0.1:2\n');
  expect(readFileSync(file, 'utf8')).toBe('export AWS_ENDPOINT_URL=http://127.0.0.1:2\n');
  expect(statSync(file).ino).not.toBe(before);
  expect(statSync(file).mode & 0o777).toBe(PRIVATE_FILE_MODE);
  expect(readdirSync(directory)).toEqual(['simulate-serve.env']);
});

test("a serve's start removes an old file (left by a serve killed before its stop), and a missing one is no error", () => {
  const file = path.join(directory, 'stale.env');
  writeFileSync(file, 'export AWS_ENDPOINT_URL=http://127.0.0.1:3\n');
  removeStaleEndpointFile(file);
  expect(existsSync(file)).toBe(false);
  expect(() => removeStaleEndpointFile(file)).not.toThrow();
});
