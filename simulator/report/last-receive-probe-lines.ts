/**
 * The report's lines on the last-receive probes (simulator/run/last-receive-probe.ts): per probed subscriber, the
 * event failed at every receive, its last included, and whether SQS dead-lettered it and the run redrove it.
 */
import type { LastReceiveProbeOutcome } from '../run/last-receive-probe';

/** The words the report's probe line starts with (tests build their expectation from it). */
export const LAST_RECEIVE_PROBE_TEXT = 'last-receive probe (one event per subscriber failed at every receive, its last included; a correct consumer lets SQS move it to the dead-letter queue, and the run redrove it by dlq redrive\'s rules)';

/** What became of one probe, in words: the consumer is blamed only when the event's message was deleted. */
export function probeOutcomeText(probe: LastReceiveProbeOutcome): string {
  const event = `${probe.subscriber}: event ${probe.eventId ?? ''}`;
  switch (probe.state) {
    case 'not-chosen':
      return `${probe.subscriber}: no event chosen (none was written at its first receive whose own time dlq redrive's window rule would take when the run redrives it)`;
    case 'redriven':
      return `${event} dead-lettered and redriven (dead-letter path met)`;
    case 'refused':
      return `${event} left in the dead-letter queue: dlq redrive refuses it: ${(probe.refused[0] ?? '').replace(/^[^:]*: /, '')} (the run's own dead letter: not counted as unapplied)`;
    case 'cut-off':
      return `${event} not redriven: the run was cut off before it settled (the event may still be on its queue; the probe proved nothing)`;
    case 'expired':
      return (
        `${event} not redriven: SQS dropped it by retention (${probe.expired?.queue ?? 'its queue'}, retention ${probe.expired?.retentionSeconds ?? '?'} s` +
        `${probe.expired?.at === undefined ? '' : `, at ${probe.expired.at}`}) before the run redrove it (the run's own doing: not counted against the consumer; the probe proved nothing)`
      );
    case 'on-queue':
      return `${event} not redriven: it was still on its queue when the run settled, not dead-lettered (the probe proved nothing)`;
    case 'acknowledged':
      // its answer acknowledged it at a refused receive, and SQS still dead-lettered a copy (a lost delete, another copy)
      if (probe.acknowledgedAt !== undefined && (probe.redriven > 0 || probe.refused.length > 0)) {
        return (
          `${event} was acknowledged by its consumer at receive ${probe.acknowledgedAt.receiveCount} (message ${probe.acknowledgedAt.messageId} left out of batchItemFailures) ` +
          'though the run failed its record at every receive, so nothing committed it: lost (see the violations), whatever SQS did with the message after'
        );
      }
      return (
        `${event} was NOT dead-lettered: its consumer acknowledged it though the run failed its record at every receive (the last seen: receive ${probe.lastReceive ?? '?'}), ` +
        'so nothing committed it: lost (see the violations)'
      );
  }
}

/** The probe lines of a run; none when no subscriber was probed. */
export function lastReceiveProbeLines(probes: readonly LastReceiveProbeOutcome[]): string[] {
  return probes.length === 0 ? [] : [`${LAST_RECEIVE_PROBE_TEXT}:`, ...probes.map((probe) => `  ${probeOutcomeText(probe)}`)];
}
