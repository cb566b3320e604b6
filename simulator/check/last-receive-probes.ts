/**
 * The last-receive probe's outcome as a check (simulator/run/last-receive-probe.ts runs the probe): the run refused
 * every write naming the probed event's inbox or claim record, at every receive, its last included, so the runtime
 * could not have committed it in any of them. When the message then left the queue without a dead letter (the event
 * source mapping deleted it: the consumer acknowledged it), the event is lost, in every processing mode: the queue
 * forgot it and its effect never ran. A run cut off before the redrive, a message still on its queue, and a dead letter
 * redriven or left where it is by `dlq redrive`'s rules are not (the last is the run's own dead letter, not counted as
 * unapplied: ./unapplied-events.ts).
 */
import type { Finding } from './invariants';
import { fixFor, type ViolationCause } from './violation-cause';

/**
 * What became of a probed event: `acknowledged` (its consumer's batch response acknowledged a copy at a receive where the
 * run refused its write, whatever became of the message after, or its message was deleted without a dead letter: lost),
 * `redriven` (SQS dead-lettered it, the run redrove it), `refused` (dead-lettered, left
 * there by `dlq redrive`'s rules), `expired` (SQS dropped its message or its dead letter by retention before the redrive:
 * the run's doing, no one blamed), `on-queue` (still
 * on the subscriber's queue when the run settled), `cut-off` (the run stopped at its limits before the redrive),
 * `not-chosen` (no event was written at its first receive).
 */
export type LastReceiveProbeState = 'redriven' | 'refused' | 'acknowledged' | 'on-queue' | 'expired' | 'cut-off' | 'not-chosen';

/** What became of one subscriber's last-receive probe, for the checks and the report. */
export interface LastReceiveProbeOutcome {
  readonly subscriber: string;
  /** The event failed at every receive; undefined when none was chosen (no event reached a write at its first receive). */
  readonly eventId?: string;
  /** What became of it (see {@link LastReceiveProbeState}). */
  readonly state: LastReceiveProbeState;
  /** The highest receive at which the run refused a write of it. @default none: no event chosen */
  readonly lastReceive?: number;
  /** Its dead letters the run moved back to the subscriber's queue (SNS duplicates: more than one). */
  readonly redriven: number;
  /** Why `dlq redrive`'s rules left one where it is, if they did. */
  readonly refused: readonly string[];
  /**
   * The first copy its consumer's batch response acknowledged at a receive where the run refused the event's write (the
   * evidence of `acknowledged`, whatever SQS did with the message after). @default none seen
   */
  readonly acknowledgedAt?: { readonly messageId: string; readonly receiveCount: number };
  /**
   * Where SQS dropped its message by retention (state `expired`): the queue (the subscriber's or its dead-letter queue),
   * that queue's retention period, and when (ISO 8601, simulated). @default none
   */
  readonly expired?: { readonly queue: string; readonly retentionSeconds: number; readonly at?: string };
}

/** What the run saw of a probed event once it settled and redrove (see {@link probeStateOf}). */
export interface ProbeFacts {
  /** A copy the consumer's answer acknowledged at a refused receive. @default none */
  readonly acknowledgedAt?: { readonly messageId: string; readonly receiveCount: number };
  /** Its dead letters the run redrove. */
  readonly redriven: number;
  /** Its dead letters `dlq redrive`'s rules left where they are. */
  readonly refused: number;
  /** Whether a message of it is still on the subscriber's queue or a dead-letter queue. */
  readonly onQueue: boolean;
  /** Whether SQS dropped a message of it (or its dead letter) by retention. @default false */
  readonly expired?: boolean;
}

/**
 * A probed event's state from what the run saw: the consumer's own answer first (an acknowledgement at a refused
 * receive is the violation, whatever SQS did after: a lost delete or another copy may still have put a dead letter
 * there); then the queues.
 */
export function probeStateOf(facts: ProbeFacts): LastReceiveProbeState {
  if (facts.acknowledgedAt !== undefined) return 'acknowledged';
  return facts.redriven > 0 ? 'redriven' : facts.refused > 0 ? 'refused' : facts.onQueue ? 'on-queue' : facts.expired === true ? 'expired' : 'acknowledged';
}

/** The words the violation's detail gives after the event's id (tests build their expectation from it). */
export const LAST_RECEIVE_PROBE_LOST_TEXT =
  'was acknowledged by its consumer although the run refused every write of its inbox or claim record at every receive, so nothing committed it';

/** One `lost` violation per probed subscriber whose probed event was acknowledged (see the module comment). */
export function checkLastReceiveProbes(probes: readonly LastReceiveProbeOutcome[]): Finding[] {
  return probes.flatMap((probe) => {
    if (probe.state !== 'acknowledged' || probe.eventId === undefined) return [];
    const fix = fixFor('acknowledged-uncommitted');
    const cause: ViolationCause = { kind: 'acknowledged-uncommitted', subscriber: probe.subscriber, eventIds: [probe.eventId], invocations: [], requests: [], fix };
    const receive = probe.lastReceive === undefined ? 'every receive' : `every receive, up to receive ${probe.lastReceive}`;
    const answer =
      probe.acknowledgedAt === undefined
        ? 'the batch response left it out of batchItemFailures, so the event source mapping deleted the message'
        : `at receive ${probe.acknowledgedAt.receiveCount} the batch response left its message ${probe.acknowledgedAt.messageId} out of batchItemFailures, so the event source mapping deleted it (whatever SQS did after: a lost delete or another copy's dead letter does not undo it)`;
    return [
      {
        kind: 'lost' as const,
        subscriber: probe.subscriber,
        detail: `event ${probe.eventId} ${LAST_RECEIVE_PROBE_LOST_TEXT} (the last-receive probe): its record failed at ${receive}, and ${answer}: lost, never applied; ${fix}`,
        causes: [cause],
      },
    ];
  });
}

/** The probed event of `subscriber` whose dead letter `dlq redrive`'s rules refused, if any (./unapplied-events.ts leaves it out). */
export function probeDeadLetterRefused(probes: readonly LastReceiveProbeOutcome[], subscriber: string): string | undefined {
  return probes.find((probe) => probe.subscriber === subscriber && probe.state === 'refused')?.eventId;
}

/** The probed event of `subscriber` whose message SQS dropped by retention, if any (the run's doing: ./invariants.ts's delivery check does not count it). */
export function probeExpired(probes: readonly LastReceiveProbeOutcome[], subscriber: string): string | undefined {
  return probes.find((probe) => probe.subscriber === subscriber && probe.state === 'expired')?.eventId;
}

/** The probed event of `subscriber` that was acknowledged, if any (the probe's violation names it; ./acknowledged-uncommitted.ts need not). */
export function probeAcknowledged(probes: readonly LastReceiveProbeOutcome[], subscriber: string): string | undefined {
  return probes.find((probe) => probe.subscriber === subscriber && probe.state === 'acknowledged')?.eventId;
}
