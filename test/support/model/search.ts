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

/** How to replay a failure: the environment the model tests read (IEF_MODEL_SEED, IEF_MODEL_PATH). */
function replayLine(result: { readonly seed: number; readonly counterexamplePath: string | null }): string {
  return `failed: seed ${result.seed}, path ${result.counterexamplePath ?? '(none)'} (replay with IEF_MODEL_SEED=${result.seed}, and IEF_MODEL_PATH=${result.counterexamplePath ?? ''} where the test reads it)`;
}
