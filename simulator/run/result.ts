/**
 * What a run did and found: the result `runSimulation` returns, the summary prints and `--json` writes.
 */
import type { LastReceiveProbeOutcome } from './last-receive-probe';
import type { TransactionConflictFigures } from '../aws/transaction-conflicts';
import type { AggregateOrderCoverage } from '../check/aggregate-order-coverage';
import type { DeadLetterFinding } from '../check/dead-letters';
import type { FailurePathCounts, FailurePathsNotMet, NotSteeredFailurePaths } from '../check/failure-paths';
import type { Violation } from '../check/invariants';
import type { NotExercised } from '../check/not-exercised';
import type { SendFigures } from '../check/repeated-sends';
import type { RunWarning } from '../check/lease-below-timeout';
import type { IamReport, UntakenEvents } from '../check/run-check';
import type { CausedViolations } from '../check/violation-cause';
import type { FaultKind } from '../faults/fault-plan';
import type { SynthAnnotation } from '../model/synth-annotations';
import type { ProducerFigures } from '../observation/run-facts';
import type { RealTimeEvent } from '../schedule/schedule-types';
import type { OperatorFigures } from './operator';

export type { IamReport } from '../check/run-check';

/** The figures of one subscriber, as the summary table shows them. */
export interface SubscriberReport {
  readonly name: string;
  /** `IEF_PROCESSING_MODE` of its consumer, when set. */
  readonly processingMode?: string;
  /** Events that matched its filter policy. */
  readonly events: number;
  /** Messages handed to its consumer, every receive counted. */
  readonly deliveries: number;
  /** Deliveries the runtime recognised as already applied (its `Duplicates` metric). */
  readonly duplicatesSuppressed: number;
  /** Faults injected on its subscription, queue and consumer. */
  readonly faults: number;
  /** The same faults by kind. */
  readonly faultsByKind: Partial<Record<FaultKind, number>>;
  /** Deliveries of a message received before. */
  readonly retries: number;
  /** Messages in its dead-letter queues at the end. */
  readonly deadLettered: number;
  /** Effect applications the scenario's probe counted, and the range exactly-once allows; absent without a probe. */
  readonly effects?: { readonly applied: number; readonly min: number; readonly max: number };
  /** How often its consumer met each failure path (simulator/check/failure-paths.ts): what this run proved of it. */
  readonly failurePaths: FailurePathCounts;
  /**
   * The paths of the run's rates the run cannot steer to it, its queue's `maxReceiveCount` being below the steerable
   * count (simulator/check/failure-paths.ts): not required of it; those it never met are not proven by this run.
   * @default absent: every path of the run's rates is steered to it
   */
  readonly failurePathsNotSteered?: NotSteeredFailurePaths;
  /**
   * Why the run cannot read the runtime's per-record outcome lines of its consumer (its application log level is above
   * WARN, simulator/check/hidden-outcomes.ts), in a sentence: its failed records are counted from its batch responses
   * and commits, without their reasons. @default absent: the lines are written
   */
  readonly outcomesHidden?: string;
  /** For a subscriber on a FIFO queue: the aggregates and events whose order the `aggregate-order` check read. */
  readonly orderChecked?: AggregateOrderCoverage;
}

/** What a run did and found. */
export interface SimulationResult {
  readonly assemblyDirectory: string;
  /** The synth's warnings and errors of the simulated stacks (an error is also a `synth-error` violation). */
  readonly synthAnnotations: readonly SynthAnnotation[];
  readonly seed: string;
  /** Where the run's clock started, as `--start-time` takes it (ISO 8601, UTC): with the seed and the concurrency, what replays the run. */
  readonly startTime: string;
  /** The same start in ms since the epoch. */
  readonly startTimeMs: number;
  /** Concurrent invocations per function (`--concurrency`). */
  readonly concurrency: number;
  readonly producer: ProducerFigures;
  readonly relay: RelayFigures;
  /** SNS → SQS deliveries: attempts that failed (and were retried), messages put on subscription DLQs, messages lost. */
  readonly sns: { readonly failedAttempts: number; readonly deadLettered: number; readonly undeliverable: number };
  /**
   * DynamoDB requests of the functions (and of the operator under its role) refused with a transaction conflict, as
   * DynamoDB refuses a request that meets an ongoing one on the same item (DynamoDB Local never does; docs/SIMULATOR.md).
   */
  readonly transactionConflicts: TransactionConflictFigures;
  /** The SQS messages the functions sent with their own clients, per function and queue (repeated-sends.ts). */
  readonly sqsSends: readonly SendFigures[];
  readonly subscribers: readonly SubscriberReport[];
  /** Every dead letter with its explanation, by subscriber name. */
  readonly deadLetters: ReadonlyMap<string, readonly DeadLetterFinding[]>;
  readonly violations: readonly Violation[];
  /**
   * The causes the checks could tell, by violation index (simulator/check/violation-cause.ts): what the user did, where,
   * and the change to make. `--json` writes them on each violation (`violations[].causes`).
   */
  readonly causes: readonly CausedViolations[];
  /**
   * What the run saw that fails no check of this run but would misbehave deployed, under timing the run does not
   * simulate: a lease written shorter than its function's timeout (simulator/check/lease-below-timeout.ts). The verdict
   * stands. @default none
   */
  readonly warnings?: readonly RunWarning[];
  /** Subscribers without an effect probe (their effects were not counted). */
  readonly effectsNotCounted: readonly string[];
  readonly notSimulated: readonly string[];
  readonly rounds: number;
  readonly simulatedSeconds: number;
  readonly realSeconds: number;
  readonly totalFaults: number;
  /**
   * Per probed subscriber, the event the last-receive probe failed at every receive and what became of it
   * (simulator/run/last-receive-probe.ts). @default none probed
   */
  readonly lastReceiveProbes?: readonly LastReceiveProbeOutcome[];
  /** What the scenario's operator resolved and redrove; absent when the scenario has no operator (or it was off). */
  readonly operator?: OperatorFigures;
  /** IAM: the figures of the evaluated requests, or why requests were not evaluated. */
  readonly iam: IamReport;
  /** Per type, the committed events no subscription's filter took (they reached a topic and no queue). */
  readonly untakenEvents: readonly UntakenEvents[];
  /**
   * The subscribers that received no event, so nothing of exactly-once was exercised for them, and why
   * (simulator/check/not-exercised.ts): without a violation, the verdict is NOT PROVEN.
   */
  readonly notExercised: readonly NotExercised[];
  /**
   * The subscribers events reached that never met some failure path the run's fault rates steer to them
   * (`not-exercised`, simulator/check/failure-paths.ts): the paths, and how many events reached each. Not a violation:
   * without one, the verdict is NOT PROVEN; with one, they are still what the run does not prove.
   */
  readonly failurePathsNotMet: readonly FailurePathsNotMet[];
  /**
   * Whether the run's seed replays it: false when something outside the seed acted on a worker between two steps (see
   * {@link realTimeEvents}), so the same seed, start and concurrency may give another run. The verdict stands: it says
   * what this run did.
   */
  readonly replayable: boolean;
  /**
   * Why the run is not replayable, when it is not: `real-time-events` (see {@link realTimeEvents}), `relay-catch-up-limit`
   * (a relay stopped waiting for its stream at its real-time limit: {@link RelayFigures.catchUpLimitMet}).
   * @default absent: the run is replayable
   */
  readonly notReplayableCauses?: readonly NotReplayableCause[];
  /** What acted on the workers between steps: how many times in all, and the first of them (see {@link RealTimeEvent}). */
  readonly realTimeEvents: RealTimeEvents;
  /** Whether the scenario's producer probe ran, so the producer's business changes were checked against the outbox. */
  readonly producerWritesChecked?: boolean;
}

/** Why a run is not replayable (see {@link SimulationResult.notReplayableCauses}). */
export type NotReplayableCause = 'real-time-events' | 'relay-catch-up-limit';

/** The real-time events of a run (see {@link SimulationResult.replayable}). */
export interface RealTimeEvents {
  /** How many there were. */
  readonly count: number;
  /** The first of them, in the order they came (at most 100). */
  readonly first: readonly RealTimeEvent[];
}

/** What the outbox relays did: records read, publish attempts that failed, what they gave up on. */
export interface RelayFigures {
  readonly streamRecords: number;
  readonly committedEvents: number;
  /**
   * Of the committed events, those whose data was offloaded to the flow's payload bucket (claim-check,
   * docs/LARGE-EVENTS.md): their outbox item carries a `dataref`, not the data.
   */
  readonly offloadedEvents: number;
  /** Publish attempts that failed (each retried, or the last before the pipe gave up). */
  readonly failedAttempts: number;
  /** Events the pipes put on their dead-letter queues (as stream-batch metadata), and in how many messages. */
  readonly deadLettered: number;
  readonly deadLetterMessages: number;
  /** Events the pipes gave up on with no dead letter: lost. */
  readonly lost: number;
  /**
   * How often a relay's poll gave up waiting, after a minute of real time, for its stream to show what its table holds
   * (a pipe that can never catch up, e.g. one starting at `LATEST` on a table written before its first poll): the
   * records it had not read reached the queues a round later, when the stream's lag decided, so the run may not replay.
   * @default 0 (absent)
   */
  readonly catchUpLimitMet?: number;
}
