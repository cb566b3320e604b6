/**
 * The last-receive probe, run side (the steering side: ../faults/fault-steering.ts). Steering never fails a message's
 * last receive, so a consumer that gives up quietly there (drops the record from `batchItemFailures` when
 * `ApproximateReceiveCount` reaches `maxReceiveCount`: SQS deletes the message, its effect never done) would pass. So
 * one event of each probed subscriber is failed at every receive, its last included; a correct consumer reports the
 * record failed each time and SQS moves the message to the dead-letter queue. Once the run settled, the run redrives
 * that event's dead letters to the subscriber's queue by `dlq redrive`'s rules (./operator.ts, the operator pass's own
 * code), whether or not the scenario has an operator (the dead letter is the run's doing, not the app's; `--no-operator`
 * turns off the scenario's operator only), and the run settles again: a correct app applies the event once. A consumer
 * that acknowledged the message instead lost it: the run refused every write of its record, so nothing committed it. The
 * run judges the consumer by its own answer at each receive it refused (its batch response left the message out of
 * `batchItemFailures`), whatever SQS did after (a lost delete, another SNS copy dead-lettered), and by the message leaving
 * the queue without a dead letter; the `lost` check names it in every processing mode
 * (simulator/check/last-receive-probes.ts). A run cut off before the redrive redrives nothing and blames no one but a
 * consumer whose answer already acknowledged the event.
 *
 * Probed: a subscriber with a consumer, on a standard queue with a redrive policy (a dead-lettered FIFO message lets its
 * group's later messages pass, beyond what the ordered path's checks take as the probe's), not in aggregate mode (whose
 * dead letters `dlq redrive` refuses), whose retention keeps a message through `maxReceiveCount` visibility timeouts
 * (else SQS's retention, not the consumer, decides; a dead letter dropped by retention all the same is `expired`), and whose deduplication window outlasts the queue's retention, `dlq redrive`'s
 * safety margin and the run's longest simulated time; of its events, only one whose own envelope `time` is young enough
 * for the redrive's window rule at the run's latest moment ({@link probeTakes}). Should the rules still refuse its dead
 * letter, the report says why and the dead letter, the run's doing, is not counted as unapplied.
 */
import { DEFAULT_DEDUPLICATION_WINDOW_SECONDS, DEFAULT_SAFETY_MARGIN_SECONDS } from '../../operator/index';
import { ENV, PROCESSING_MODE } from '../../lambda/contract/environment';
import { probeStateOf, type LastReceiveProbeOutcome } from '../check/last-receive-probes';
import type { LastReceiveProbe } from '../faults/fault-steering';
import { eventIdOf } from '../aws/message-ids';
import type { SubscriberView } from '../observation/run-facts';
import { dlqRedriveRules, redriveDeadLetters } from './operator';

export type { LastReceiveProbeOutcome, LastReceiveProbeState } from '../check/last-receive-probes';

/** Whether a subscriber gets a last-receive probe (see the module comment). */
export function isProbed(subscriber: SubscriberView, maxSimulatedSeconds: number): boolean {
  if (subscriber.function === undefined || subscriber.queue.model.fifo || subscriber.queue.model.redrive === undefined) return false;
  if (subscriber.environment[ENV.PROCESSING_MODE] === PROCESSING_MODE.AGGREGATE) return false;
  // a queue whose retention drops a message failed at every receive before its last: SQS, not the consumer, would decide
  const { messageRetentionSeconds, visibilityTimeoutSeconds, redrive } = subscriber.queue.model;
  if (messageRetentionSeconds < redrive.maxReceiveCount * visibilityTimeoutSeconds) return false;
  return subscriber.queue.model.messageRetentionSeconds + DEFAULT_SAFETY_MARGIN_SECONDS + maxSimulatedSeconds < windowSecondsOf(subscriber);
}

function windowSecondsOf(subscriber: SubscriberView): number {
  const window = Number(subscriber.environment[ENV.DEDUPLICATION_WINDOW_SECONDS]);
  return Number.isFinite(window) && window > 0 ? window : DEFAULT_DEDUPLICATION_WINDOW_SECONDS;
}

/**
 * Whether `dlq redrive`'s window rule takes a dead letter of an event whose envelope `time` is `eventTime` (epoch
 * milliseconds) at the run's latest moment (`startTime` + `maxSimulatedSeconds`): its age then, plus the queue's
 * retention and the redrive's margin, stays within the subscriber's deduplication window. An event without a readable
 * time is aged from its message's send, which {@link isProbed} covers.
 */
export function probeTakes(subscriber: SubscriberView, startTime: number, maxSimulatedSeconds: number): (eventTime: number | undefined) => boolean {
  const latest = startTime + maxSimulatedSeconds * 1000;
  return (eventTime) =>
    eventTime === undefined || eventTime >= startTime || (latest - eventTime) / 1000 + subscriber.queue.model.messageRetentionSeconds + DEFAULT_SAFETY_MARGIN_SECONDS < windowSecondsOf(subscriber);
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
  expiredMessages: readonly { readonly queue: string; readonly eventId?: string; readonly expiredAt?: number }[] = [],
): Promise<LastReceiveProbeOutcome[]> {
  const outcomes: LastReceiveProbeOutcome[] = [];
  for (const probe of probes) {
    const subscriber = subscribers.find((candidate) => candidate.function?.key === probe.functionKey);
    const { eventId } = probe;
    if (subscriber === undefined || eventId === undefined) {
      outcomes.push({ subscriber: probe.subscriber, state: 'not-chosen', redriven: 0, refused: [] });
      continue;
    }
    const rules = dlqRedriveRules(subscriber, deps);
    const redriven = await redriveDeadLetters(subscriber, async (view) => (view.eventId === eventId ? rules(view) : { redrive: false, refusal: NOT_THE_PROBE }));
    const refused = redriven.refused.filter((why) => why.startsWith(`${eventId}: `));
    // neither redriven nor refused: still on its queue (a settled run may leave a message there) or a dead-letter queue
    // (not as this subscriber's dead letter), else deleted
    const onQueue = [subscriber.queue, ...subscriber.deadLetterQueues].some((queue) => queue.messages().some((message) => (message.origin.eventId ?? eventIdOf(message.body)) === eventId));
    // the consumer's own answer at a refused receive first: a lost delete or another copy's dead letter does not undo it
    const acknowledgedAt = probe.acknowledged?.[0];
    // SQS dropped its message (or its dead letter) by retention: the run's doing, not the consumer's
    const queues = [subscriber.queue, ...subscriber.deadLetterQueues];
    const dropped = expiredMessages.find((entry) => entry.eventId === eventId && queues.some((queue) => queue.model.key === entry.queue));
    const droppedFrom = dropped === undefined ? undefined : queues.find((queue) => queue.model.key === dropped.queue);
    const expired =
      dropped === undefined || droppedFrom === undefined
        ? undefined
        : { queue: droppedFrom.address.name, retentionSeconds: droppedFrom.model.messageRetentionSeconds, ...(dropped.expiredAt === undefined ? {} : { at: new Date(dropped.expiredAt).toISOString() }) };
    const state = probeStateOf({ ...(acknowledgedAt === undefined ? {} : { acknowledgedAt }), redriven: redriven.moved, refused: refused.length, onQueue, expired: expired !== undefined });
    outcomes.push({
      subscriber: probe.subscriber,
      eventId,
      state,
      ...(probe.lastReceive === undefined ? {} : { lastReceive: probe.lastReceive }),
      redriven: redriven.moved,
      refused,
      ...(acknowledgedAt === undefined ? {} : { acknowledgedAt }),
      ...(state === 'expired' && expired !== undefined ? { expired } : {}),
    });
  }
  return outcomes;
}
