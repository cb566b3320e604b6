/**
 * The last-receive probe, run side (the steering side: ../faults/fault-steering.ts). Steering never fails a message's
 * last receive, so a consumer that gives up quietly there (drops the record from `batchItemFailures` when
 * `ApproximateReceiveCount` reaches `maxReceiveCount`: SQS deletes the message, its effect never done) would pass. So
 * one event of each probed subscriber is failed at every receive, its last included; a correct consumer reports the
 * record failed each time and SQS moves the message to the dead-letter queue. Once the run settled, the run redrives
 * that event's dead letters to the subscriber's queue by `dlq redrive`'s rules (./operator.ts, the operator pass's own
 * code), whether or not the scenario has an operator (the dead letter is the run's doing, not the app's; `--no-operator`
 * turns off the scenario's operator only), and the run settles again: a correct app applies the event once. A consumer
 * that acknowledged the message instead lost it: the `lost` check of a transactional subscriber names it
 * (simulator/check/acknowledged-uncommitted.ts).
 *
 * Probed: a subscriber with a consumer, on a standard queue with a redrive policy (a dead-lettered FIFO message lets its
 * group's later messages pass, beyond what the ordered path's checks take as the probe's), not in aggregate mode (whose
 * dead letters `dlq redrive` refuses), and whose deduplication window outlasts the queue's retention, `dlq redrive`'s
 * safety margin and the run's longest simulated time, so that the redrive's window rule cannot refuse the copy.
 */
import { DEFAULT_DEDUPLICATION_WINDOW_SECONDS, DEFAULT_SAFETY_MARGIN_SECONDS } from '../../operator/index';
import { ENV, PROCESSING_MODE } from '../../lambda/contract/environment';
import type { LastReceiveProbe } from '../faults/fault-steering';
import type { SubscriberView } from '../observation/run-facts';
import { dlqRedriveRules, redriveDeadLetters } from './operator';

/** What became of one subscriber's last-receive probe, for the report. */
export interface LastReceiveProbeOutcome {
  readonly subscriber: string;
  /** The event failed at every receive; undefined when none was chosen (no event reached a write at its first receive). */
  readonly eventId?: string;
  /** Its dead letters the run moved back to the subscriber's queue (SNS duplicates: more than one). */
  readonly redriven: number;
  /** Why `dlq redrive`'s rules left one where it is, if they did. */
  readonly refused: readonly string[];
}

/** Whether a subscriber gets a last-receive probe (see the module comment). */
export function isProbed(subscriber: SubscriberView, maxSimulatedSeconds: number): boolean {
  if (subscriber.function === undefined || subscriber.queue.model.fifo || subscriber.queue.model.redrive === undefined) return false;
  if (subscriber.environment[ENV.PROCESSING_MODE] === PROCESSING_MODE.AGGREGATE) return false;
  const window = Number(subscriber.environment[ENV.DEDUPLICATION_WINDOW_SECONDS]);
  const windowSeconds = Number.isFinite(window) && window > 0 ? window : DEFAULT_DEDUPLICATION_WINDOW_SECONDS;
  return subscriber.queue.model.messageRetentionSeconds + DEFAULT_SAFETY_MARGIN_SECONDS + maxSimulatedSeconds < windowSeconds;
}

/** The words a refusal of a dead letter that is not the probe's gets (never reported). */
const NOT_THE_PROBE = 'not the probed event';

/**
 * Redrives the dead letters of each probe's event to its subscriber's queue, by `dlq redrive`'s rules; the others stay.
 * Returns each probe's outcome; the caller lets the run settle again when something moved.
 */
export async function redriveProbes(
  probes: readonly LastReceiveProbe[],
  subscribers: readonly SubscriberView[],
  deps: Parameters<typeof dlqRedriveRules>[1],
): Promise<LastReceiveProbeOutcome[]> {
  const outcomes: LastReceiveProbeOutcome[] = [];
  for (const probe of probes) {
    const subscriber = subscribers.find((candidate) => candidate.function?.key === probe.functionKey);
    const { eventId } = probe;
    if (subscriber === undefined || eventId === undefined) {
      outcomes.push({ subscriber: probe.subscriber, redriven: 0, refused: [] });
      continue;
    }
    const rules = dlqRedriveRules(subscriber, deps);
    const redriven = await redriveDeadLetters(subscriber, async (view) => (view.eventId === eventId ? rules(view) : { redrive: false, refusal: NOT_THE_PROBE }));
    outcomes.push({ subscriber: probe.subscriber, eventId, redriven: redriven.moved, refused: redriven.refused.filter((why) => why.startsWith(`${eventId}: `)) });
  }
  return outcomes;
}
