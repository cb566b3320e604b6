/**
 * The example app's cloud assembly, synthesized ONCE per test run and shared by every test file that needs it (a
 * synthesis takes about 10 s). The first caller synthesizes into the run's directory (see global-setup.ts) under a
 * lock directory; the others wait for its `done` (or `failed`) marker.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { inject } from 'vitest';
import { synthesize } from '../../simulator/model/synthesize';

const PROJECT = path.resolve(__dirname, '../..');

/** Absolute path of the example's cloud assembly (synthesized from the current sources in this test run). */
export async function exampleAssembly(): Promise<string> {
  const runDirectory = inject('testRunDirectory');
  const assembly = path.join(runDirectory, 'example.out');
  const done = path.join(runDirectory, 'example.done');
  const failed = path.join(runDirectory, 'example.failed');
  try {
    mkdirSync(path.join(runDirectory, 'example.lock'));
  } catch {
    // another test file is synthesizing: wait for its marker, however long a loaded machine takes (a synthesis that
    // hangs is caught by the test's own timeout, see vitest.config.mts)
    for (;;) {
      if (existsSync(done)) return assembly;
      if (existsSync(failed)) throw new Error(`the example app failed to synthesize: ${readFileSync(failed, 'utf8')}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    await synthesize({ cwd: PROJECT, outputDirectory: assembly });
    writeFileSync(done, '');
    return assembly;
  } catch (error) {
    writeFileSync(failed, error instanceof Error ? error.message : String(error));
    throw error;
  }
}
