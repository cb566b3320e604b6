/**
 * verify's --json is checked before the run and written after it (review r12b, R12B-6): outputFileProblem names what
 * is wrong with a path and creates nothing; writeOutputFile reports a failure instead of throwing, so a write that
 * fails after the run cannot turn its verdict into another exit code.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { outputFileProblem, writeOutputFile } from '../../simulator/cli/output-file';

const directory = mkdtempSync(path.join(tmpdir(), 'ief-output-file-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('the --json output file', () => {
  test('a new file in an existing directory is fine, and checking it creates nothing', () => {
    const file = path.join(directory, 'result.json');
    expect(outputFileProblem(file)).toBeUndefined();
    expect(existsSync(file)).toBe(false);
  });

  test('a missing directory or a directory in the place of the file is named', () => {
    expect(outputFileProblem(path.join(directory, 'missing', 'result.json'))).toBe(`there is no directory ${path.join(directory, 'missing')}`);
    expect(outputFileProblem(directory)).toBe(`${directory} is a directory`);
  });

  test('writing returns the reason it failed instead of throwing, and writes 0600 when it can', () => {
    expect(writeOutputFile(directory, '{}')).toMatch(/EISDIR/);
    const file = path.join(directory, 'written.json');
    expect(writeOutputFile(file, '{"a":1}')).toBeUndefined();
    expect(readFileSync(file, 'utf8')).toBe('{"a":1}');
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });
});
