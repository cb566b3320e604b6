/**
 * Comparing two runs of one seed (the replay tests): the result as `--json` writes it without the one figure that
 * measures this machine, and the fields in which two such documents differ. Not a test file.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { SimulationResult } from '../../../simulator/run/simulation';

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
