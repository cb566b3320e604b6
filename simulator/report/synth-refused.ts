/**
 * The verdict of a `simulate` whose app the synth refused (a construct's validation error, the app's own exception):
 * nothing ran, and the run is violated with one `synth-error` (docs/SIMULATOR.md), said in the construct's words
 * without the synth's stack trace, in the text as a violated run says its violations and in `--json`.
 */
import type { Violation } from '../check/invariants';
import type { RunVerdict } from '../run/verdict';

/** The `synth-error` violation of a refused synth: `how` it failed (`exit code 1`) and the app's own message. */
export function synthRefusedViolation(how: string, refusal: string): Violation {
  return { kind: 'synth-error', detail: `cdk synth refused the app (${how}): ${refusal}` };
}

/** The text verdict of a refused synth: the violation, then that nothing ran and the command that was run. */
export function synthRefusedSummary(violation: Violation, commandLine: string): string {
  const detail = violation.detail.split('\n').join('\n    ');
  return (
    `VIOLATED: 1 invariant violation(s):\n  [${violation.kind}] ${detail}\n` +
    `nothing was simulated: the app did not synthesize. Fix what the message names and run again (the synth ran: ${commandLine})\n`
  );
}

/** The `--json` document of a refused synth: what would replay it, its verdict (`VIOLATED`, as every run's `verdict`) and its violation (no run, so no run's figures). */
export function synthRefusedJson(violation: Violation, run: { readonly seed: string; readonly startTime: number; readonly concurrency: number; readonly replayCommand: string }): Record<string, unknown> {
  return {
    seed: run.seed,
    startTime: new Date(run.startTime).toISOString(),
    startTimeMs: run.startTime,
    concurrency: run.concurrency,
    synthesized: false,
    verdict: 'VIOLATED' satisfies RunVerdict,
    violations: [violation],
    replayCommand: run.replayCommand,
  };
}
