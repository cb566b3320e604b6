/**
 * A fixture app synthesized once for a test file, into a temporary directory removed after the file's tests, and the
 * simulator's `simulate` run on its assembly with the test run's DynamoDB Local. Not a test file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { main } from '../../../simulator/cli/main';
import { synthesize } from '../../../simulator/model/synthesize';

const PROJECT = path.resolve(__dirname, '../../..');

/** The synthesized fixture: its temporary directory, and `simulate` on its assembly. */
export interface SynthesizedFixture {
  /** The temporary directory (for files a test writes beside the assembly). */
  directory(): string;
  /** `simulate` with `argv`, on the fixture's assembly, quiet: its exit code and what it printed. */
  simulate(...argv: string[]): Promise<{ code: number; stdout: string }>;
}

/** Synthesizes `fixture` (a folder with an app.ts, from the project's root) in the file's `beforeAll`. */
export function synthesizedFixture(fixture: string): SynthesizedFixture {
  let directory: string | undefined;
  let assembly = '';
  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), `ief-${path.basename(fixture)}-`));
    assembly = await synthesize({ app: `npx tsx ${fixture}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, 'cdk.out') });
  });
  afterAll(() => {
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });
  return {
    directory: () => {
      if (directory === undefined) throw new Error('the fixture is synthesized in beforeAll');
      return directory;
    },
    simulate: async (...argv) => {
      let stdout = '';
      const code = await main(['simulate', ...argv, '--assembly', assembly, '--quiet', '--endpoint', inject('dynamoDbEndpoint')], {
        stdout: (text) => void (stdout += text),
        stderr: (text) => void (stdout += text),
        cwd: PROJECT,
      });
      return { code, stdout };
    },
  };
}
