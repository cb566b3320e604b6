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
 * Checks `property` for `options.runs` runs; resolves with the report of a failure (fast-check's message with the
 * shrunk counterexample and its seed, then the failing run's own message: its violations and history), or undefined
 * when every run held.
 */
export async function failureReport<T>(property: fc.IAsyncProperty<T>, options: SearchOptions): Promise<string | undefined> {
  const result = await fc.check(property, { numRuns: options.runs, ...(options.seed === undefined ? {} : { seed: options.seed }), ...(options.path === undefined ? {} : { path: options.path }), endOnFailure: false });
  if (!result.failed) return undefined;
  const cause = result.errorInstance instanceof Error ? result.errorInstance.message : String(result.errorInstance);
  return `${fc.defaultReportMessage(result)}\n${cause}`;
}
