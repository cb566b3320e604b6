/**
 * The one interface of the run's checks, and the one facts object they read. A run produces its facts once, after it
 * settled (simulator/run/facts.ts); each check is a rule in a file of its own under simulator/check/rules/, saying what
 * it checks and how (its violations with their causes, when it can tell them: ./violation-cause.ts), and simulator/check/registry.ts lists them in the order their violations are reported (the way
 * cdk-nag registers a rule per file). A check reads the facts and returns violations: it calls nothing that changes the
 * run (the probes a scenario gives ran before, their results are facts).
 */
import type { LastReceiveProbeOutcome } from './last-receive-probes';
import type { IamNotEvaluated } from './iam-not-evaluated';
import type { FaultRates } from '../faults/fault-plan';
import type { IamFigures } from '../iam/access-types';
import type { FlowModel } from '../model/flow-model';
import type { SynthAnnotation } from '../model/synth-annotations';
import type { RunLedger } from '../observation/ledger';
import type { BusinessChange, EffectTally, ObservableSubscriberView, ProducerFigures, RoundsOutcome, SimulatedEvent, SubscriberView, UntrackedItem } from '../observation/run-facts';
import type { DeadLetterFinding } from './dead-letters';
import type { Upstream, UpstreamReading } from './effect-causes';
import type { FailurePathCounts, FailurePathsNotMet } from './failure-paths';
import type { HistoryEntry } from './history';
import type { Finding } from './invariants';
import type { NotExercised } from './not-exercised';
import type { AttemptEvents } from './producer-failures';
import type { ViolationCause } from './violation-cause';
import type { AttributedSend } from './repeated-sends';
import type { DeadLetterQueueContents } from './unwatched-dead-letters';
import type { InjectedObjectFault } from '../aws/s3-endpoint';

/** What IAM evaluation did in a run. */
export type IamReport = ({ readonly evaluated: true } & IamFigures) | IamNotEvaluated;

/** What the scenario's effect probe of a subscriber returned: its tallies, or why it threw. */
export type EffectProbeOutcome = { readonly tallies: readonly EffectTally[] } | { readonly error: string };

/** What the scenario's producer probe of a producer returned, with the outbox events it was checked against, or why it threw. */
export type ProducerProbeOutcome =
  | {
      /** The producer, as the report names it. */
      readonly producer: string;
      readonly changes: readonly BusinessChange[];
      /** The committed event ids of the outbox the producer writes to. */
      readonly inOutbox: ReadonlySet<string>;
      /** Those the producer's function wrote, of its event types (all, when the scenario names none). */
      readonly producerEventIds: ReadonlySet<string>;
    }
  | { readonly producer: string; readonly error: string };

/**
 * The facts of one subscriber that a deployed flow shows too (`verify` reads them there: simulator/verify/), and the
 * checks {@link ObservableCheck} run on: built by ./subscriber-facts.ts for `simulate` and `verify` alike.
 */
export interface ObservableSubscriberFacts {
  readonly view: ObservableSubscriberView;
  /** Every dead letter in its dead-letter queues, with its explanation. */
  readonly deadLetters: readonly DeadLetterFinding[];
  /** The events its filter policy took. */
  readonly matched: ReadonlySet<string>;
  /** The events its consumer acknowledged or handled. */
  readonly applied: ReadonlySet<string>;
  /** Whether the scenario has an operator for it, and whether that operator acted (`off`: the run turned it off). */
  readonly operator: 'none' | 'off' | 'acted';
  /** The scenario's effect probe's outcome; absent without a probe. */
  readonly effectProbe?: EffectProbeOutcome;
  /** Which invocation applied the events again, and how (apply-attribution.ts); undefined when the run shows nothing. */
  readonly applyCause: (eventIds: readonly string[]) => string | undefined;
  /** The same, as one structured cause per event told (apply-attribution.ts). */
  readonly applyCauses: (eventIds: readonly string[]) => readonly ViolationCause[];
  /**
   * Why the events of a count found too LOW were applied fewer times than they were committed, in words (apply-attribution.ts:
   * a commit without the writes an earlier run of the handler staged, state kept in memory); undefined when the run shows nothing.
   */
  readonly shortCause: (eventIds: readonly string[]) => string | undefined;
  /** The same, as one structured cause per event told. */
  readonly shortCauses: (eventIds: readonly string[]) => readonly ViolationCause[];
  /**
   * For an aggregate consumer's event applied again because its aggregate's processed list had forgotten it
   * (`processed-list-overrun`, apply-attribution.ts): the events applied to the aggregate in between; none otherwise.
   */
  readonly appliedBetween: (eventId: string) => readonly string[];
  /** The writes outside its inbox transaction as a structured cause of the events given; undefined when none. */
  readonly ownClientCause: (eventIds: readonly string[]) => ViolationCause | undefined;
  /** The writes its consumer made outside its inbox transaction, in words (own-client-writes.ts); undefined when none. */
  readonly ownClientWrites?: string;
}

/** The facts of one subscriber of a simulated run: the observable ones, its whole view and its failure paths. */
export interface SubscriberFacts extends ObservableSubscriberFacts {
  readonly view: SubscriberView;
  /** How often its consumer met each failure path. */
  readonly failurePaths: FailurePathCounts;
}

/** The committed outbox: per relay the event ids that pass its filter, every envelope by id, the items with no id. */
export interface CommittedFacts {
  readonly eventIdsByRelay: ReadonlyMap<string, readonly string[]>;
  readonly eventsById: ReadonlyMap<string, SimulatedEvent>;
  readonly untracked: readonly UntrackedItem[];
}

/** The committed events of one type that no subscription's filter policy took (they reached a topic, and no queue). */
export interface UntakenEvents {
  readonly type: string;
  readonly eventIds: readonly string[];
}

/**
 * What a deployed flow shows of a run too (`verify`): the ledger of what was taken and acknowledged, the subscribers'
 * observable facts, the committed events, which are malformed. What an {@link ObservableCheck} may read.
 */
export interface ObservableRunFacts {
  readonly ledger: RunLedger;
  readonly subscribers: readonly ObservableSubscriberFacts[];
  readonly committed: Pick<CommittedFacts, 'eventsById'>;
  /** Whether the scenario marks the committed event as malformed. */
  readonly isMalformed: (eventId: string) => boolean;
  /**
   * The fault the run's S3 injected into the event's claim-check object (altered or deleted after it was written:
   * injected-object-faults.ts), if any. @default none: the app has no bucket, or the run is a deployed one (`verify`)
   */
  readonly injectedObjectFault?: (eventId: string) => InjectedObjectFault | undefined;
  /**
   * The causes upstream of a subscriber of a count read over these events (or of other events it applied, told as
   * `reading` says): a producer's command committed under two ids, another subscriber's outbox write outside its
   * transaction (effect-causes.ts). @default none: a deployed run
   * (`verify`) does not hear the functions' requests
   */
  readonly upstreamOf?: (subscriber: string, eventIds: readonly string[], reading?: UpstreamReading) => Upstream | undefined;
  /**
   * What became of each probed subscriber's last-receive probe (last-receive-probes.ts). @default none: a deployed run
   * (`verify`), or a run that probed nothing
   */
  readonly lastReceiveProbes?: readonly LastReceiveProbeOutcome[];
}

/** Everything a check may read of a settled run. */
export interface RunFacts extends ObservableRunFacts {
  readonly model: FlowModel;
  readonly synthAnnotations: readonly SynthAnnotation[];
  /** How the last rounds ended (cut off or settled). */
  readonly rounds: RoundsOutcome;
  readonly committed: CommittedFacts;
  /** Events committed to the outboxes (passing their relay's filter), over every relay. */
  readonly committedEvents: number;
  /** Of those, the events whose data was offloaded to the flow's payload bucket (claim-check: a `dataref`). */
  readonly offloadedEvents: number;
  /**
   * The producer side: its figures, the attempts a command gets, each producer probe's outcome, and the commands a
   * producer the run drove committed again at a later attempt (./committed-twice.ts; none when the run drove none).
   */
  readonly producer: {
    readonly figures: ProducerFigures;
    readonly attempts: number;
    readonly probes: readonly ProducerProbeOutcome[];
    readonly committedTwice?: readonly Finding[];
    /** What each attempt of a failed command put in the outbox (./producer-failures.ts). @default not heard */
    readonly attemptEvents?: AttemptEvents;
  };
  /**
   * The follow-ups a subscriber committed again at a redelivery, under a new id, with an outbox write outside its inbox
   * transaction (./follow-ups-committed-twice.ts). @default none
   */
  readonly followUpsCommittedTwice?: readonly Finding[];
  /**
   * The messages an app function other than a flow's relay published to a flow's event topic with its own SNS client
   * (./own-publishes.ts). @default none
   */
  readonly ownPublishes?: readonly Finding[];
  /** The SQS messages the functions sent with their own clients, each attributed to its event. */
  readonly sends: readonly AttributedSend[];
  readonly subscribers: readonly SubscriberFacts[];
  readonly iam: IamReport;
  /** Every dead-letter queue of the flow with its owner (relays first, then subscribers). */
  readonly deadLetterQueues: readonly DeadLetterQueueContents[];
  /** The history behind the verdict (history.ts). */
  readonly history: readonly HistoryEntry[];
  readonly rates: FaultRates;
  /** Per type, the committed events no subscription took (relayed, not given up on by the relay, matched by no filter). */
  readonly untaken: readonly UntakenEvents[];
  /** The event types the scenario expects consumed (`expectConsumed`). */
  readonly expectConsumed: readonly string[];
  /** The event types the scenario says the app publishes for consumers outside it (`publishedOutside`). @default none */
  readonly publishedOutside?: readonly string[];
  /** The event types each subscriber must consume, by subscriber name (the scenario's `consumes`). @default none */
  readonly consumes?: Readonly<Record<string, readonly string[]>>;
  /** The subscribers that received no event, and why (not-exercised.ts): not a violation, the verdict's NOT PROVEN. @default none */
  readonly notExercised?: readonly NotExercised[];
  /**
   * The subscribers events reached that never met a failure path the run's fault rates steer to them, and which
   * (failure-paths.ts): not a violation, the verdict's NOT PROVEN. @default none
   */
  readonly failurePathsNotMet?: readonly FailurePathsNotMet[];
}

interface CheckInfo {
  /** The rule's name, e.g. `deploy-rules`. */
  readonly name: string;
  /** What it checks, in a sentence. */
  readonly checks: string;
}

/** A check of the whole run (`R`: the facts it reads; an {@link ObservableCheck} reads the observable ones only). */
export interface RunWideCheck<R extends ObservableRunFacts = RunFacts> extends CheckInfo {
  readonly scope: 'run';
  check: (facts: R) => readonly Finding[];
}

/** A check of each subscriber; the checks of one subscriber are reported together, subscriber after subscriber. */
export interface SubscriberCheck<S extends ObservableSubscriberFacts = SubscriberFacts, R extends ObservableRunFacts = RunFacts> extends CheckInfo {
  readonly scope: 'subscriber';
  check: (subscriber: S, facts: R) => readonly Finding[];
}

/** A check the registry runs. */
export type RunCheck = RunWideCheck | SubscriberCheck;

/**
 * A check that reads only what a deployed flow shows too (`verify` runs these): typed on the observable facts, so such
 * a check that reads more does not compile. Every one is a {@link RunCheck} as well.
 */
export type ObservableCheck = RunWideCheck<ObservableRunFacts> | SubscriberCheck<ObservableSubscriberFacts, ObservableRunFacts>;

/**
 * Runs `checks` over `facts`, in order; consecutive subscriber checks run subscriber by subscriber (each subscriber's
 * violations together, in the registry's order).
 */
export function runChecks<S extends ObservableSubscriberFacts, R extends ObservableRunFacts & { readonly subscribers: readonly S[] }>(
  checks: readonly (RunWideCheck<R> | SubscriberCheck<S, R>)[],
  facts: R,
): Finding[] {
  const violations: Finding[] = [];
  for (let index = 0; index < checks.length; ) {
    const first = checks[index]!;
    if (first.scope === 'run') {
      violations.push(...first.check(facts));
      index += 1;
      continue;
    }
    const group: SubscriberCheck<S, R>[] = [];
    while (index < checks.length && checks[index]!.scope === 'subscriber') group.push(checks[index++] as SubscriberCheck<S, R>);
    for (const subscriber of facts.subscribers) for (const check of group) violations.push(...check.check(subscriber, facts));
  }
  return violations;
}
