/**
 * The checks of a verify run: the simulator's own rules (simulator/check/registry.ts), those whose facts can be read
 * on AWS, run over facts read from the deployed flow:
 * - `lost` / `unexplained-dead-letter`: every run event a subscriber's filter takes was applied or is in its
 *   dead-letter queue, explained; its queue is empty;
 * - `valid-event-rejected`: the runtime rejected for good only events the scenario marks as malformed;
 * - `unapplied-event`: no taken event ended only in the dead-letter queue;
 * - `effect-count`: each effect the scenario's probe counts in the real tables was applied exactly once (at most once
 *   for a dead-lettered event);
 * - `aggregate-order`: an ordered subscriber committed each aggregate's events in sequence, with no gap (read from its
 *   inbox records' commit times).
 * What AWS does not show (which invocation acknowledged which message, injected faults, IAM decisions) is not checked:
 * an event is taken as acknowledged when it is neither in a dead-letter queue nor on the queue once the flow is quiet
 * (SQS deletes a message only when its consumer succeeded).
 */
import type { Violation } from '../check/invariants';
import { RUN_CHECKS } from '../check/registry';
import type { DeadLetterFinding } from '../check/dead-letters';
import { runChecks, type EffectProbeOutcome, type RunFacts, type SubscriberFacts } from '../check/run-check';
import { RunLedger } from '../observation/ledger';
import type { SimulatedEvent, SubscriberView } from '../observation/run-facts';
import type { DeployedSubscriber } from './deployed-flow';

/** The rules verify runs, by name, in the registry's order. */
export const VERIFY_RULES: readonly string[] = ['lost', 'valid-event-rejected', 'unapplied-event', 'effect-count', 'aggregate-order'];

/** What verify read of one subscriber once the flow was quiet. */
export interface VerifiedSubscriber {
  readonly subscriber: DeployedSubscriber;
  /** The run's events its filter takes. */
  readonly taken: ReadonlySet<string>;
  readonly deadLetters: readonly DeadLetterFinding[];
  /** Messages still on its queue. */
  readonly onQueue: number;
  readonly effectProbe?: EffectProbeOutcome;
  /** An ordered subscriber's inbox commits of the run's events, grouped by instant, in time order. */
  readonly commitGroups?: readonly (readonly string[])[];
}

/** The subscriber as the rules see it: only what they read of a view is there (its name, keys, queue counts, FIFO). */
function viewOf(verified: VerifiedSubscriber): SubscriberView {
  const { subscriber, onQueue } = verified;
  const queueName = subscriber.deployment.queueUrl.split('/').pop() ?? subscriber.deployment.queueUrl;
  return {
    name: subscriber.name,
    subscription: { key: subscriber.name },
    queue: { model: { key: subscriber.deployment.queueUrl, fifo: subscriber.deployment.ordered === true }, address: { name: queueName }, counts: () => ({ total: onQueue }), messages: () => [] },
    deadLetterQueues: [],
    environment: subscriber.environment,
  } as unknown as SubscriberView;
}

/** Runs {@link VERIFY_RULES} over what verify read. */
export function checkVerifiedRun(
  subscribers: readonly VerifiedSubscriber[],
  eventsById: ReadonlyMap<string, SimulatedEvent>,
  isMalformed: (eventId: string) => boolean,
): Violation[] {
  const ledger = new RunLedger();
  const facts: SubscriberFacts[] = subscribers.map((verified) => {
    const deadLettered = new Set(verified.deadLetters.flatMap((finding) => (finding.eventId === undefined ? [] : [finding.eventId])));
    const applied = new Set([...verified.taken].filter((id) => !deadLettered.has(id)));
    const view = viewOf(verified);
    ledger.matchedEvents.set(view.subscription.key, new Set(verified.taken));
    ledger.acknowledgedEvents.set(view.subscription.key, verified.onQueue > 0 ? new Set() : applied);
    if (verified.commitGroups !== undefined) ledger.answeredTogether.set(view.subscription.key, verified.commitGroups.map((group) => [...group]));
    return {
      view,
      deadLetters: verified.deadLetters,
      matched: verified.taken,
      applied: verified.onQueue > 0 ? new Set() : applied,
      operator: 'none',
      ...(verified.effectProbe === undefined ? {} : { effectProbe: verified.effectProbe }),
      failurePaths: {} as SubscriberFacts['failurePaths'],
      applyCause: () => undefined,
      applyCauses: () => [],
      ownClientCause: () => undefined,
    };
  });
  const runFacts = { ledger, subscribers: facts, committed: { eventIdsByRelay: new Map(), eventsById, untracked: [] }, isMalformed } as unknown as RunFacts;
  return runChecks(
    RUN_CHECKS.filter((rule) => VERIFY_RULES.includes(rule.name)),
    runFacts,
  );
}
