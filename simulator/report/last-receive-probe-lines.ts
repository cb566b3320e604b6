/**
 * The report's lines on the last-receive probes (simulator/run/last-receive-probe.ts): per probed subscriber, the
 * event failed at every receive, its last included, and whether SQS dead-lettered it and the run redrove it.
 */
import type { LastReceiveProbeOutcome } from '../run/last-receive-probe';

/** The words the report's probe line starts with (tests build their expectation from it). */
export const LAST_RECEIVE_PROBE_TEXT = 'last-receive probe (one event per subscriber failed at every receive, its last included; a correct consumer lets SQS move it to the dead-letter queue, and the run redrove it by dlq redrive\'s rules)';

/** What became of one probe, in words. */
export function probeOutcomeText(probe: LastReceiveProbeOutcome): string {
  if (probe.eventId === undefined) return `${probe.subscriber}: no event chosen (none was written at its first receive)`;
  if (probe.redriven > 0) return `${probe.subscriber}: event ${probe.eventId} dead-lettered and redriven (dead-letter path met)`;
  if (probe.refused.length > 0) return `${probe.subscriber}: event ${probe.eventId} dead-lettered, left there by dlq redrive's rules (${probe.refused[0]!})`;
  return `${probe.subscriber}: event ${probe.eventId} was NOT dead-lettered: its consumer acknowledged it though its record failed at every receive (see the violations)`;
}

/** The probe lines of a run; none when no subscriber was probed. */
export function lastReceiveProbeLines(probes: readonly LastReceiveProbeOutcome[]): string[] {
  return probes.length === 0 ? [] : [`${LAST_RECEIVE_PROBE_TEXT}:`, ...probes.map((probe) => `  ${probeOutcomeText(probe)}`)];
}
