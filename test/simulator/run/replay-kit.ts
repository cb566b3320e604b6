/**
 * Comparing two runs of one seed (the replay tests): the result as `--json` writes it without the one figure that
 * measures this machine, the fields in which two such documents differ, and the run of a fixture app's seed
 * ({@link useFixtureReplay}). Not a test file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { synthesize } from '../../../simulator/model/synthesize';
import { loadScenario } from '../../../simulator/run/scenario';
import { runSimulation, type SimulationResult } from '../../../simulator/run/simulation';

const PROJECT = path.resolve(__dirname, '../../..');

/** The result as `--json` writes it, without the one figure that is a measurement of this machine (`realSeconds`). */
export function asJson(result: SimulationResult): string {
  const { realSeconds: _measured, ...rest } = result;
  return JSON.stringify({ ...rest, deadLetters: Object.fromEntries(result.deadLetters) }, null, 2);
}

/** The leaf fields in which two JSON values differ, in document order, as `path: first → second`. */
export function differingFields(first: unknown, second: unknown, at = ''): string[] {
  if (typeof first === 'object' && first !== null && typeof second === 'object' && second !== null) {
    const keys = [...new Set([...Object.keys(first), ...Object.keys(second)])];
    return keys.flatMap((key) =>
      differingFields((first as Record<string, unknown>)[key], (second as Record<string, unknown>)[key], at === '' ? key : `${at}.${key}`),
    );
  }
  return JSON.stringify(first) === JSON.stringify(second) ? [] : [`${at}: ${JSON.stringify(first)} → ${JSON.stringify(second)}`];
}

/**
 * Two busy loops beside a run (each a Node process spinning, stopped by the test, and by itself after `seconds` should
 * the test die first): what a loaded CI machine does to the run's real timing.
 */
export function busyLoops(seconds: number): { stop(): void } {
  const loops: ChildProcess[] = [1, 2].map(() =>
    spawn(process.execPath, ['-e', `const end = Date.now() + ${seconds * 1000}; while (Date.now() < end) {}`], { stdio: 'ignore' }),
  );
  return { stop: () => loops.forEach((loop) => loop.kill('SIGKILL')) };
}

/** The fixture app and the seed a replay test runs. */
export interface FixtureReplay {
  /** The fixture's directory from the project's root (its `app.ts` and `scenario.ts`). */
  readonly fixture: string;
  /** The prefix of the temporary directory the app is synthesized into. */
  readonly tmpPrefix: string;
  readonly seed: string;
  readonly startTime: number;
}

/**
 * Synthesizes the fixture's app into a temporary directory before the calling file's tests (removed after), and
 * returns one run of the seed (eight orders, concurrency 4, no IAM), as `--json` writes it less wall-clock time.
 */
export function useFixtureReplay(replay: FixtureReplay): () => Promise<{ result: SimulationResult; json: string }> {
  let directory: string;
  let assemblyDirectory: string;
  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), replay.tmpPrefix));
    assemblyDirectory = await synthesize({ app: `npx tsx ${replay.fixture}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, 'cdk.out') });
  }, 900_000);
  afterAll(() => {
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });
  return async () => {
    const scenario = await loadScenario(`${replay.fixture}/scenario.ts`, PROJECT);
    const result = await runSimulation({
      cwd: PROJECT,
      assemblyDirectory,
      scenario,
      dynamoDbEndpoint: inject('dynamoDbEndpoint'),
      seed: replay.seed,
      startTime: replay.startTime,
      count: 8,
      concurrency: 4,
      iam: false,
    });
    return { result, json: asJson(result) };
  };
}
