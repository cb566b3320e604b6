/**
 * What `verify` prints: the run id, the producer's figures, a line per subscriber, the subscribers whose deployed filter
 * policy differs from their Operator output's (./subscription-filters.ts), the dead letters of the run's events
 * by reason (the simulator's report lines: ../report/summary.ts), then the verdict (./verdict.ts) as `simulate` prints
 * it: `OK: ...`, or `VIOLATED: <n> invariant violation(s):` with one `[kind] subscriber: detail` line each; and
 * `NOT PROVEN: ...` with one line per thing verify could not see, when it cannot say OK though no check failed.
 * With `--cleanup`: what it removed, or why it kept everything (a verdict not OK), before the verdict; a cleanup that
 * failed, after it.
 */
import { deadLetterLines } from '../report/summary';
import { filterDifferenceLine } from './subscription-filters';
import { verifyVerdict } from './verdict';
import type { VerifyResult } from './verify-run';

/**
 * Says that verify did not run the scenario's producer probes (`producers`: their `function`), so the dual write (a
 * business change committed without its event) was not checked: its events are not among the run's, and no subscriber
 * is expected to apply them.
 */
export function producerProbesNotRunLine(producers: readonly string[]): string {
  return `Not checked: the producer side of the outbox (dual-write): verify does not run the scenario's producer probe(s) of ${producers.join(', ')}, so a business change committed without its event goes unseen here; simulate runs them.`;
}

/** The report of a verify run. */
export function formatVerifyReport(result: VerifyResult): string {
  const { producer } = result;
  const verdict = verifyVerdict(result);
  const out = [
    `verify run ${result.runId} (seed ${result.seed}) against ${result.stacks.join(', ')}`,
    `producer: ${producer.succeeded}/${producer.total} command(s) succeeded, ${producer.retried} retried, ${producer.failed.length} failed; ${result.committedEvents} event(s) of the run committed`,
    ...producer.failed.slice(0, 5).map((failure) => `  command #${failure.index + 1}${failure.producer === undefined ? '' : ` of ${failure.producer}`}: ${failure.reason}`),
    'subscribers:',
    ...result.subscribers.map(
      (row) => `  ${row.name}: ${row.events} event(s) taken, ${row.deadLettered} dead-lettered${row.effectsApplied === undefined ? ', effects not counted' : `, ${row.effectsApplied} effect(s) applied`}`,
    ),
  ];
  const differences = result.filterDifferences ?? [];
  if (differences.length > 0) out.push("filter policies that differ from the subscribers' Operator outputs (the run's events were matched with the deployed subscription's):", ...differences.map((difference) => `  ${filterDifferenceLine(difference)}`));
  const deadLetters = Object.entries(result.deadLetters).flatMap(([name, findings]) => (findings.length === 0 ? [] : deadLetterLines(name, findings)));
  if (deadLetters.length > 0) out.push("dead letters of the run's events:", ...deadLetters);
  if (result.cleanedUp !== undefined) out.push(result.cleanedUp.length === 0 ? 'cleanup: nothing of the run to remove' : 'cleanup removed:', ...result.cleanedUp.map((line) => `  ${line}`));
  if (result.cleanupSkipped !== undefined) out.push(`cleanup: ${result.cleanupSkipped}`);
  out.push('');
  const notCounted = result.effectsNotCounted.length === 0 ? [] : [`Effects were NOT checked for ${result.effectsNotCounted.join(', ')} (no effect probe in the scenario): exactly-once is unproven for them.`];
  const producerProbes = result.producerProbesNotRun === undefined ? [] : [producerProbesNotRunLine(result.producerProbesNotRun)];
  if (verdict.status === 'OK') {
    const counted = result.effectsNotCounted.length === 0 ? 'each effect' : 'each counted effect';
    out.push(`OK: ${counted} applied exactly once (at most once when dead-lettered); every valid event of the run applied by every subscriber its filter took; every dead letter explained.`, ...notCounted, ...producerProbes);
  } else {
    out.push(...notCounted, ...producerProbes);
    if (verdict.violations.length > 0) {
      out.push(`VIOLATED: ${verdict.violations.length} invariant violation(s):`);
      for (const violation of verdict.violations) out.push(`  [${violation.kind}]${violation.subscriber ? ` ${violation.subscriber}:` : ''} ${violation.detail}`);
    }
    if (verdict.unproven.length > 0) {
      out.push(`NOT PROVEN: verify could not see everything that might have failed (${verdict.unproven.length}):`);
      for (const reason of verdict.unproven) out.push(`  ${reason}`);
    }
  }
  // after the verdict, which it does not change
  if (result.cleanupFailed !== undefined) out.push('', `cleanup failed: ${result.cleanupFailed}`);
  return `${out.join('\n')}\n`;
}
