/**
 * The checks of a verify run: the simulator's own rules (simulator/check/registry.ts), those whose facts can be read
 * on AWS, run over facts read from the deployed flow:
 * - `lost` / `unexplained-dead-letter`: every run event a subscriber's filter takes was applied or is in its
 *   dead-letter queue, explained; its queue holds none of them ({@link runMessagesOnQueue}: messages of
 *   other traffic on it do not count once every run event it took is in its inbox or dead-letter queues);
 * - `valid-event-rejected`: the runtime rejected for good only events the scenario marks as malformed;
 * - `unapplied-event`: no taken event ended only in the dead-letter queue;
 * - `effect-count`: each effect the scenario's probe counts in the real tables was applied exactly once (at most once
 *   for a dead-lettered event);
 * - `aggregate-order`: an ordered subscriber committed each aggregate's events in sequence, with no gap (read from its
 *   inbox records' commit times);
 * - `untaken-event` (first, as in simulate): every run event of a type the scenario expects consumed (`expectConsumed`)
 *   was taken by some subscriber's deployed filter policy.
 * What AWS does not show (which invocation acknowledged which message, injected faults, IAM decisions) is not checked.
 * An event is taken as applied when the subscriber's inbox has its record (read by exact key: an inbox record, or a
 * processing record COMPLETED); a subscriber that keeps no inbox (aggregate mode) has an event applied when it is
 * neither in a dead-letter queue nor possibly on the queue once the flow is quiet (SQS deletes a message only when its
 * consumer succeeded), and its probe counts the effects (without a probe, the verdict says it is unproven).
 * The rules are the registry's observable ones (OBSERVABLE_CHECKS), typed on the facts a deployed flow shows, and the
 * facts are built by the builder `simulate` uses (../check/subscriber-facts.ts): a rule that came to read more would
 * not compile here, rather than fail at run time.
 */
import type { Violation } from '../check/invariants';
import { OBSERVABLE_CHECKS } from '../check/registry';
import type { DeadLetterFinding } from '../check/dead-letters';
import { runChecks, type EffectProbeOutcome, type ObservableRunFacts, type UntakenEvents } from '../check/run-check';
import { untakenEventsRule } from '../check/rules/untaken-events';
import { subscriberFacts } from '../check/subscriber-facts';
import { RunLedger } from '../observation/ledger';
import type { ObservableSubscriberView, SimulatedEvent } from '../observation/run-facts';
import type { DeployedSubscriber } from './deployed-flow';

/** The rules verify runs, by name, in the registry's order. */
export const VERIFY_RULES: readonly string[] = [untakenEventsRule.name, ...OBSERVABLE_CHECKS.map((rule) => rule.name)];

/** What the untaken-event rule needs besides what verify read of the checked subscribers. */
export interface UntakenInput {
  /** The event types the scenario expects consumed (its `expectConsumed`). @default none */
  readonly expectConsumed?: readonly string[];
  /** The event types the scenario says the app publishes for consumers outside it (its `publishedOutside`). @default none */
  readonly publishedOutside?: readonly string[];
  /** The run's events taken by subscribers left out of the checks (their dead letters unread). @default none */
  readonly takenElsewhere?: ReadonlySet<string>;
}

/** Per type (in the order first seen), the run's events no subscriber's filter took, as simulate groups them. */
function untakenRunEvents(eventsById: ReadonlyMap<string, SimulatedEvent>, taken: ReadonlySet<string>): UntakenEvents[] {
  const byType = new Map<string, string[]>();
  for (const [id, event] of eventsById) {
    if (taken.has(id)) continue;
    byType.set(event.type, [...(byType.get(event.type) ?? []), id]);
  }
  return [...byType].map(([type, eventIds]) => ({ type, eventIds }));
}

/** What verify read of one subscriber once the flow was quiet. */
export interface VerifiedSubscriber {
  readonly subscriber: DeployedSubscriber;
  /** The run's events its filter takes. */
  readonly taken: ReadonlySet<string>;
  readonly deadLetters: readonly DeadLetterFinding[];
  /** Messages still on its queue. */
  readonly onQueue: number;
  /** The taken events its inbox shows applied. @default it keeps no inbox (aggregate mode) */
  readonly applied?: ReadonlySet<string>;
  readonly effectProbe?: EffectProbeOutcome;
  /** An ordered subscriber's inbox commits of the run's events, grouped by instant, in time order. */
  readonly commitGroups?: readonly (readonly string[])[];
}

/**
 * The messages on a subscriber's queue that may be the run's. verify never receives from a subscriber's queue (a
 * receive counts against the message's maxReceiveCount), so it cannot read which message is which event; but when the
 * subscriber took none of the run's events, or its inbox holds or its dead-letter queues hold every one it took, none
 * of the run's events waits on the queue: what is there is other traffic (another run, a scheduled producer, a retried
 * poison message) or a duplicate its inbox absorbs, and is not counted (review r12, R12-8; the checks see that state when
 * the wait ended at its limit held only by such messages: the verdict is then NOT PROVEN, naming the queues, ./settle.ts). Otherwise every message
 * counts (a subscriber without an inbox cannot be told apart).
 */
export function runMessagesOnQueue(verified: VerifiedSubscriber, deadLettered: ReadonlySet<string>): number {
  const { taken, applied, onQueue } = verified;
  if (taken.size === 0) return 0;
  if (applied !== undefined && [...taken].every((id) => applied.has(id) || deadLettered.has(id))) return 0;
  return onQueue;
}

/**
 * The subscriber as the rules see it, from what the deployed stacks say: its queue's URL as its key, the count of
 * messages on it that may be the run's ({@link runMessagesOnQueue}; which events they are is not read: such a message
 * makes every event unacknowledged), its dead-letter queues' URLs, no function the run tracked.
 */
function viewOf(verified: VerifiedSubscriber, onQueue: number): ObservableSubscriberView {
  const { subscriber } = verified;
  const { queueUrl, deadLetterQueueUrl, subscriptionDeadLetterQueueUrl, ordered } = subscriber.deployment;
  return {
    name: subscriber.name,
    // keyed by its queue, not its name: two subscribers of one name (an 'Audit' on each of two flows) are two subscribers
    subscription: { key: queueUrl },
    queue: { model: { key: queueUrl, fifo: ordered === true }, address: { name: queueUrl.split('/').pop() ?? queueUrl }, counts: () => ({ total: onQueue }), messages: () => [] },
    deadLetterQueues: [...new Set([deadLetterQueueUrl, subscriptionDeadLetterQueueUrl].filter((url): url is string => url !== undefined))].map((key) => ({ model: { key } })),
    environment: subscriber.environment,
  };
}

/** Runs the registry's observable rules over what verify read. */
export function checkVerifiedRun(
  subscribers: readonly VerifiedSubscriber[],
  eventsById: ReadonlyMap<string, SimulatedEvent>,
  isMalformed: (eventId: string) => boolean,
  untaken: UntakenInput = {},
): Violation[] {
  const ledger = new RunLedger();
  const facts = subscribers.map((verified) => {
    const deadLettered = new Set(verified.deadLetters.flatMap((finding) => (finding.eventId === undefined ? [] : [finding.eventId])));
    // an event is acknowledged when it is neither dead-lettered nor possibly on the queue (SQS keeps a message until its consumer succeeds)
    const applied =
      verified.applied !== undefined
        ? new Set([...verified.taken].filter((id) => verified.applied!.has(id)))
        : verified.onQueue > 0
          ? new Set<string>()
          : new Set([...verified.taken].filter((id) => !deadLettered.has(id)));
    const view = viewOf(verified, runMessagesOnQueue(verified, deadLettered));
    ledger.matchedEvents.set(view.subscription.key, new Set(verified.taken));
    ledger.acknowledgedEvents.set(view.subscription.key, applied);
    if (verified.commitGroups !== undefined) ledger.answeredTogether.set(view.subscription.key, verified.commitGroups.map((group) => [...group]));
    return subscriberFacts({
      view,
      deadLetters: verified.deadLetters,
      matched: verified.taken,
      applied,
      operator: 'none',
      ...(verified.effectProbe === undefined ? {} : { effectProbe: verified.effectProbe }),
    });
  });
  const runFacts: ObservableRunFacts = { ledger, subscribers: facts, committed: { eventsById }, isMalformed };
  const taken = new Set([...(untaken.takenElsewhere ?? []), ...subscribers.flatMap((verified) => [...verified.taken])]);
  const untakenFindings = untakenEventsRule.check({ ...runFacts, untaken: untakenRunEvents(eventsById, taken), expectConsumed: untaken.expectConsumed ?? [], publishedOutside: untaken.publishedOutside ?? [] });
  return [...untakenFindings, ...runChecks(OBSERVABLE_CHECKS, runFacts)];
}
