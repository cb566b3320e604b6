/**
 * The invariants a run must end with. Each violation names the subscriber, the event and what is wrong:
 * - every event committed to an outbox (and passing the pipe's filter) was relayed to the topic, and carries an id the
 *   simulator can follow it by;
 * - the run settled before its time limit;
 * - every event that matched a subscription's filter policy was either acknowledged by its consumer or is in one of its
 *   dead-letter queues, and nothing is left on a consumer queue;
 * - every dead letter is explained (the runtime's reason, or the failures that made SQS move it);
 * - no message outlived its queue's retention;
 * - effects, where the scenario counts them: an acknowledged event's effect applied exactly once (even when another
 *   copy of it was dead-lettered), an event that is only dead-lettered at most once (a message blocked for an operator
 *   may or may not have had its effect: never twice).
 *
 * "Acknowledged" is the ledger's: the consumer deleted a message of the event from the subscription's queue after
 * handling it; a deletion after the runtime dead-lettered that receive does not count (its event is settled only while
 * its dead letter is on a dead-letter queue).
 */
import type { ObservableSubscriberView } from '../observation/run-facts';
import type { UntrackedItem } from '../observation/run-facts';
import type { RunLedger } from '../observation/ledger';
import type { RoundsOutcome } from '../observation/run-facts';
import type { EffectTally } from '../observation/run-facts';
import type { DeadLetterFinding } from './dead-letters';
import type { ViolationCause } from './violation-cause';

/** What kind of invariant a violation breaks. */
export type ViolationKind =
  | 'not-relayed'
  | 'untracked'
  | 'lost'
  | 'not-drained'
  | 'not-settled'
  | 'unexplained-dead-letter'
  | 'effect-count'
  | 'probe-failed'
  /** IAM (an identity, resource or key policy) denied a request the flow made: deployed, it would fail the same way. */
  | 'access-denied'
  // the "no false OK" checks: each in its own module under simulator/check/
  /** A producer command failed every attempt (producer-failures.ts). */
  | 'producer-failed'
  /** Events matched a subscriber, and it acknowledged none of them (nothing-acknowledged.ts). */
  | 'nothing-acknowledged'
  /** Dead letters whose reason is a configuration or deployment error, not the event (configuration-dead-letters.ts). */
  | 'configuration-error'
  /** A batch response acknowledged a record the runtime logged as failed (acknowledged-failures.ts). */
  | 'acknowledged-failure'
  /** A producer's business change without its outbox event, or an outbox event without its change (dual-writes.ts). */
  | 'dual-write'
  /** A later attempt of a producer's command committed it again under new ids (committed-twice.ts). */
  | 'command-committed-twice'
  /** A consumer committed a follow-up of one event it received again, under a new id, at a redelivery (follow-ups-committed-twice.ts). */
  | 'follow-up-committed-twice'
  /** Dead letters on a queue no CloudWatch alarm of the templates watches: nobody would be told (unwatched-dead-letters.ts). */
  | 'unwatched-dead-letters'
  /** The scenario probes a subscriber's effects, and no event reached it (unreached-subscribers.ts). */
  | 'nothing-reached'
  /** The runtime rejected for good an event the scenario did not mark as malformed (rejected-events.ts). */
  | 'valid-event-rejected'
  /** An event a subscriber's filter took ended only in its dead-letter queues, never applied (unapplied-events.ts). */
  | 'unapplied-event'
  /**
   * Deprecated, no run reports it since 1.1.0: a subscriber that never met a failure path the run's fault rates steer to
   * it makes the run NOT PROVEN (`failurePathsNotMet`), not a violation. Kept in the type so code written against 1.0.0
   * still compiles; it is removed in the next major version.
   */
  | 'not-exercised'
  /** A function sent one event's SQS message from more than one invocation (repeated-sends.ts). */
  | 'repeated-send'
  /** The templates break a rule AWS enforces at deploy (deploy-rules.ts, subscription-rules.ts). */
  | 'deploy-refused'
  /** The topic's account subscribes another account's queue: pending confirmation, SNS delivers nothing (subscription-rules.ts). */
  | 'unconfirmed-subscription'
  /** The queue is in an opt-in Region other than its topic's: SNS would not deliver through it (subscription-rules.ts). */
  | 'undeliverable-subscription'
  /** The synth reported an error (an `aws:cdk:error` of the assembly): `cdk deploy` refuses the app. */
  | 'synth-error'
  /** The history of a key shows two owners running its effect at once, or a lost response applied twice (history.ts). */
  | 'history'
  /** An ordered subscriber applied an aggregate's events out of sequence order, or left a gap (aggregate-order.ts). */
  | 'aggregate-order'
  /** Ordered events of one subject spread over many one-event aggregates: the producer orders nothing (subject-spread.ts). */
  | 'subject-spread'
  /** Committed events of a type the scenario expects consumed that no subscription's filter took (rules/untaken-events.ts). */
  | 'untaken-event'
  /** A lease outlasting the queue's visibility timeout refused redeliveries, whatever the operator did later (lease-refused-redeliveries.ts). */
  | 'lease-outlasts-redelivery';

/** A broken invariant. */
export interface Violation {
  readonly kind: ViolationKind;
  /** The subscriber it concerns, when it concerns one. */
  readonly subscriber?: string;
  readonly detail: string;
}

/**
 * A violation as a check finds it: with its causes, when the check can tell them (./violation-cause.ts). The run's
 * result keeps the causes apart from the violations (`SimulationResult.causes`), `--json` writes them on each.
 */
export interface Finding extends Violation {
  readonly causes?: readonly ViolationCause[];
}

/** Events committed to the outboxes: per relay key, the event ids that pass its filter. */
export type CommittedEvents = ReadonlyMap<string, readonly string[]>;

/**
 * Every committed event reached the topic, or is accounted for in the relay's dead-letter queue (the pipe gave up on
 * it and put its stream batch's metadata there; the queue-alarm check says whether anyone would be told). An event the
 * pipe gave up on without a dead letter (no dead-letter queue, the pipe may not send there, the stream trimmed it) is
 * lost, with the reason.
 */
export function checkRelayed(committed: CommittedEvents, ledger: RunLedger): Violation[] {
  const violations: Violation[] = [];
  for (const [relay, eventIds] of committed) {
    const published = ledger.published.get(relay);
    for (const eventId of eventIds) {
      if (published?.has(eventId)) continue;
      const gaveUp = ledger.relayGaveUp.find((entry) => entry.relay === relay && entry.eventIds.includes(eventId));
      if (gaveUp?.deadLetterQueue !== undefined) continue;
      const why = gaveUp === undefined ? '' : `: the pipe gave up on it and it is lost (${gaveUp.reason})`;
      violations.push({ kind: 'not-relayed', detail: `event ${eventId} is in the outbox but relay ${relay} never published it${why}` });
    }
  }
  return violations;
}

/** Every committed outbox item the pipe relays carries an event id, so its deliveries could be followed and checked. */
export function checkTracked(untracked: readonly UntrackedItem[]): Violation[] {
  return untracked.map(({ relay, item }) => ({
    kind: 'untracked',
    detail: `outbox item ${item} passes the filter of relay ${relay}, but the message it renders has no event id ('id'), so the simulator cannot follow it to check it was delivered`,
  }));
}

/** The run settled: it did not stop at its time limit with messages still in flight. */
export function checkSettled(outcome: RoundsOutcome): Violation[] {
  if (outcome.cutOff === undefined) return [];
  const { limit, maxSimulatedSeconds, maxRounds, inFlight } = outcome.cutOff;
  const queues = inFlight.map(({ queue, messages }) => `${messages} on ${queue}`).join(', ') || 'none in flight';
  const stoppedAt = limit === 'rounds' ? `${maxRounds} rounds (work was still being done in every round)` : `${maxSimulatedSeconds} simulated seconds`;
  return [{ kind: 'not-settled', detail: `the run stopped at its limit of ${stoppedAt} before it settled (messages in flight: ${queues})` }];
}

/** The ids of the events the dead letters carry. */
export function deadLetteredEventIds(deadLetters: readonly DeadLetterFinding[]): Set<string> {
  return new Set(deadLetters.flatMap((finding) => (finding.eventId === undefined ? [] : [finding.eventId])));
}

/**
 * Every matched event was acknowledged or dead-lettered with a reason; queues are drained; nothing expired but
 * `probeExpired`, the last-receive probe's event whose message or dead letter SQS dropped by retention (the run failed
 * its every receive: its doing, not the app's; ./last-receive-probes.ts). @default none
 */
export function checkDeliveries(subscriber: ObservableSubscriberView, deadLetters: readonly DeadLetterFinding[], ledger: RunLedger, probeExpired?: string): Violation[] {
  const violations: Violation[] = [];
  const name = subscriber.name;
  const { total } = subscriber.queue.counts();
  if (total > 0) violations.push({ kind: 'not-drained', subscriber: name, detail: `${total} message(s) still on queue ${subscriber.queue.address.name} when the run ended` });
  const deadLettered = deadLetteredEventIds(deadLetters);
  const acknowledged = ledger.acknowledgedEvents.get(subscriber.subscription.key) ?? new Set<string>();
  const deadLetterQueueKeys = new Set(subscriber.deadLetterQueues.map((queue) => queue.model.key));
  // an event with a message still on the queue is reported as not drained, not as lost
  const stillQueued = new Set(subscriber.queue.messages().flatMap((message) => (message.origin.eventId === undefined ? [] : [message.origin.eventId])));
  for (const eventId of ledger.matchedEvents.get(subscriber.subscription.key) ?? []) {
    if (!acknowledged.has(eventId) && !deadLettered.has(eventId) && !stillQueued.has(eventId) && eventId !== probeExpired) {
      const expired = ledger.expired.find((entry) => entry.eventId === eventId && deadLetterQueueKeys.has(entry.queue));
      const undeliverable = ledger.undeliverable.find((entry) => entry.eventId === eventId && entry.subscription === subscriber.subscription.key);
      const why = expired
        ? `: its dead letter ${expired.messageId} outlived the retention period of ${expired.queue}`
        : undeliverable
          ? `: SNS could not deliver it (${undeliverable.reason})`
          : '';
      violations.push({ kind: 'lost', subscriber: name, detail: `event ${eventId} matched the filter policy but was neither acknowledged nor dead-lettered${why}` });
    }
  }
  for (const finding of deadLetters) {
    if (finding.explanation === undefined) {
      violations.push({ kind: 'unexplained-dead-letter', subscriber: name, detail: `message ${finding.messageId} (event ${finding.eventId ?? 'unknown'}) is in ${finding.queueName} with no reason` });
    }
  }
  for (const expired of ledger.expired) {
    if (expired.queue === subscriber.queue.model.key && (probeExpired === undefined || expired.eventId !== probeExpired)) {
      violations.push({ kind: 'lost', subscriber: name, detail: `message ${expired.messageId} (event ${expired.eventId ?? 'unknown'}) outlived the queue's retention period` });
    }
  }
  return violations;
}

/**
 * The effect count a tally must have: [min, max]. Per event: exactly 1 when acknowledged (a copy was handled and
 * deleted, so its effect is done, whatever became of other copies), 0 to 1 when only dead-lettered, else 0.
 */
export function expectedApplications(tally: EffectTally, acknowledged: ReadonlySet<string>, deadLettered: ReadonlySet<string>): { readonly min: number; readonly max: number } {
  let min = 0;
  let max = 0;
  for (const eventId of tally.eventIds) {
    if (acknowledged.has(eventId)) {
      min += 1;
      max += 1;
    } else if (deadLettered.has(eventId)) max += 1;
  }
  return { min, max };
}

/** What {@link checkEffects} found: the violations, and the counts summed over the tallies (for the report). */
export interface EffectsCheck {
  readonly violations: Finding[];
  readonly totals: { readonly applied: number; readonly min: number; readonly max: number };
}

/**
 * Each tally is within what exactly-once allows. `causeOf` tells, for a tally outside its range (`expected`), why: above its
 * maximum, which invocation applied its events again and how; below its minimum (`below`), which commit lacked what an
 * earlier run of the handler staged (simulator/check/apply-attribution.ts); it is added to the violation, and
 * `causesOf`'s structured causes are its `causes`.
 */
export function checkEffects(
  subscriber: ObservableSubscriberView,
  tallies: readonly EffectTally[],
  deadLetters: readonly DeadLetterFinding[],
  ledger: RunLedger,
  causeOf?: (tally: EffectTally, below: boolean, expected: { readonly min: number; readonly max: number }) => string | undefined,
  causesOf?: (tally: EffectTally, below: boolean, expected: { readonly min: number; readonly max: number }) => readonly ViolationCause[],
): EffectsCheck {
  const acknowledged = ledger.acknowledgedEvents.get(subscriber.subscription.key) ?? new Set<string>();
  const deadLettered = deadLetteredEventIds(deadLetters);
  const violations: Finding[] = [];
  const totals = { applied: 0, min: 0, max: 0 };
  for (const tally of tallies) {
    const { min, max } = expectedApplications(tally, acknowledged, deadLettered);
    totals.applied += tally.applied;
    totals.min += min;
    totals.max += max;
    if (tally.applied >= min && tally.applied <= max) continue;
    const expected = min === max ? `exactly ${min}` : `${min} to ${max}`;
    const below = tally.applied < min;
    const cause = causeOf?.(tally, below, { min, max });
    const detail = `${tally.subject}: applied ${tally.applied} time(s), expected ${expected} (events ${tally.eventIds.join(', ')})${cause === undefined ? '' : `; ${cause}`}`;
    const causes = causesOf?.(tally, below, { min, max }) ?? [];
    violations.push({ kind: 'effect-count', subscriber: subscriber.name, detail, ...(causes.length === 0 ? {} : { causes }) });
  }
  return { violations, totals };
}
