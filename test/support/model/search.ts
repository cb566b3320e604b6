/** How a model-based test searches: its property checked for a number of runs, a failure reported in full. Not a test file. */
import fc from 'fast-check';

/** How long a search is, and which seed it replays. */
export interface SearchOptions {
  readonly runs: number;
  readonly seed?: number;
  /** With `seed`: replays only this run of fast-check's path (a reported counterexample, shrunk), not a search. */
  readonly path?: string;
}

/**
 * Checks `property` for `options.runs` runs; resolves with the report of a failure, or undefined when every run held.
 * The report names how to replay it (seed and path) on its first line, then gives the failing run's own message (its
 * violations and history), then fast-check's message (the seed again, and the shrunk counterexample) last: CI prints
 * only the tail of a long failure (issue 38: CI run 48 showed neither the seed nor the commands), so both ends say it.
 */
export async function failureReport<T>(property: fc.IAsyncProperty<T>, options: SearchOptions): Promise<string | undefined> {
  const result = await fc.check(property, { numRuns: options.runs, ...(options.seed === undefined ? {} : { seed: options.seed }), ...(options.path === undefined ? {} : { path: options.path }), endOnFailure: false });
  if (!result.failed) return undefined;
  const cause = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
  return `${replayLine(result)}\n${cause}\n${fc.defaultReportMessage(result)}\n${replayLine(result)}`;
}

/**
 * The commands' replay path of a counterexample (`fc.commands`' `replayPath`: which commands ran at each shrink), or
 * undefined when it holds no commands. fast-check's `path` alone does not replay a shrunk command sequence: walking the
 * path shrinks values that never ran, and a command that never ran is dropped, so the walk reaches another value
 * (issue 38: seeds 13013 and 20020 did not reproduce from their path).
 */
export function commandsReplayPath(counterexample: unknown): string | undefined {
  return /replayPath="([^"]*)"/.exec(fc.stringify(counterexample))?.[1];
}

/** How to replay a failure: the environment the model tests read (IEF_MODEL_SEED, IEF_MODEL_PATH, IEF_MODEL_REPLAY_PATH). */
function replayLine(result: { readonly seed: number; readonly counterexamplePath: string | null; readonly counterexample: unknown }): string {
  const commands = commandsReplayPath(result.counterexample);
  const environment = [`IEF_MODEL_SEED=${result.seed}`, ...(result.counterexamplePath === null ? [] : [`IEF_MODEL_PATH=${result.counterexamplePath}`]), ...(commands === undefined ? [] : [`IEF_MODEL_REPLAY_PATH='${commands}'`])];
  return `failed: seed ${result.seed}, path ${result.counterexamplePath ?? '(none)'} (replay with ${environment.join(' ')} where the test reads them)`;
}

/**
 * The search a model test runs from its environment: `IEF_MODEL_SEED` (a seed), `IEF_MODEL_PATH` (with it, only that
 * counterexample of fast-check's path) and `IEF_MODEL_REPLAY_PATH` (with the path, the commands' replay path the
 * failure printed; `fc.commands`' `replayPath`). `runs` is the search's length; a replayed path runs once.
 */
export function searchFromEnvironment(runs: number, environment: NodeJS.ProcessEnv = process.env): SearchOptions & { readonly replayPath?: string } {
  const seed = environment.IEF_MODEL_SEED === undefined ? undefined : Number(environment.IEF_MODEL_SEED);
  const path = seed === undefined ? undefined : environment.IEF_MODEL_PATH;
  const replayPath = path === undefined ? undefined : environment.IEF_MODEL_REPLAY_PATH;
  return { runs: path === undefined ? runs : 1, ...(seed === undefined ? {} : { seed }), ...(path === undefined ? {} : { path }), ...(replayPath === undefined ? {} : { replayPath }) };
}
