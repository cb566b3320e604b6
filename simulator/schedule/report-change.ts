/**
 * What changed between two quiet reports of a worker (simulator/lambda/worker-protocol.ts), in words: the text of a
 * real-time event (see `RealTimeEvent`).
 */
import type { QuietReport } from '../lambda/worker-protocol';

/** The counts of a report that say what the worker did, and what each is called. */
const COUNTS: readonly (readonly [keyof QuietReport, string])[] = [
  ['invocations', 'invocations received'],
  ['started', 'HTTP calls started'],
  ['finished', 'HTTP calls finished'],
  ['scheduledStarted', 'requests to the simulated services started'],
  ['scheduledFinished', 'requests to the simulated services finished'],
  ['timersFired', 'virtual timers fired'],
];

/** How `after` differs from `before`, or undefined when it does not. */
export function reportChange(before: QuietReport, after: QuietReport): string | undefined {
  const changes: string[] = [];
  if (after.timers !== before.timers || after.nextTimerDue !== before.nextTimerDue) {
    changes.push(`virtual timers pending ${before.timers} → ${after.timers}` + (after.nextTimerDue === before.nextTimerDue ? '' : ` (${earliest(before.nextTimerDue, after.nextTimerDue)})`));
  }
  for (const [field, name] of COUNTS) if (after[field] !== before[field]) changes.push(`${name} ${String(before[field])} → ${String(after[field])}`);
  return changes.length === 0 ? undefined : changes.join('; ');
}

/** The earliest timer's move, `nextTimerDue` before and after (-1: none). */
function earliest(before: number, after: number): string {
  if (before >= 0 && after >= 0) return `the earliest due ${before} → ${after} ms into its invocation`;
  return before < 0 ? `the earliest now due ${after} ms into its invocation` : `none left of the earliest, due ${before} ms into its invocation`;
}
