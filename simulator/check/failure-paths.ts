/**
 * What a run exercised, per subscriber: which failure paths its consumer met, and how often. An OK says only what the
 * run put the consumer through; a path it never met is not proven (a wrapper that swallows failures passes a run in
 * which no record of that subscriber failed). The paths:
 *
 * - `handler-error`: a record the runtime failed (the handler or a write threw), to be retried: logged by the runtime
 *   as failed, or reported in its invocation's `batchItemFailures` with no outcome line of the runtime's (a log level
 *   above WARN hides those lines);
 * - `lost-response`: a write of its function applied, its response lost;
 * - `conflict`: a write of its function refused with a transaction conflict;
 * - `crash-before-commit` and `crash-after-commit`: its process died at a write, before it was sent and after it was
 *   applied;
 * - `redelivery`: a message handed to it again after an earlier receive;
 * - `dead-letter`: a message of it put on its dead-letter queues (by the runtime, by SQS after `maxReceiveCount`, by SNS).
 *
 * The faults of the run's rates are steered to the app's write sites of every subscriber, and to the runtime's own
 * until each path is met (../faults/fault-steering.ts); a path those faults should have made it meet and did not (too few events reached it, or too few invocations: one
 * steered fault each) leaves the run NOT PROVEN (`not-exercised`, {@link failurePathsNotMet}), named: the run proves
 * too little of that subscriber, which is not a violation of exactly-once. A dead letter is counted, not required: the
 * only valid event steered there is a probed subscriber's last-receive probe (../run/last-receive-probe.ts: redriven
 * once the run settled, so the run still passes), which not every subscriber gets, and a lease or multi-step subscriber
 * meets it when a step's outcome is unknown (blocked for the operator). Nor is a path the run cannot steer to a subscriber
 * whose queue's `maxReceiveCount` is below {@link MIN_RECEIVES_STEERED} (no conflict there, and no crash at 2: each
 * would dead-letter a valid event by the simulator's injection alone; nothing is received again at 1): the verdict
 * rests on what the run steers, and such a path, when the run's random faults did not meet it, is named as not
 * proven ({@link notSteeredFailurePaths}), never as the subscriber's fault.
 */
import { MIN_RECEIVES_STEERED, steeredFaultsTo, type SteeredFault } from '../faults/fault-steering';
import type { FaultRates } from '../faults/fault-plan';
import type { SubscriberView } from '../observation/run-facts';
import type { RunLedger } from '../observation/ledger';

/** The failure paths, in the order the report shows them. */
export const FAILURE_PATHS = ['handler-error', 'lost-response', 'conflict', 'crash-before-commit', 'crash-after-commit', 'redelivery', 'dead-letter'] as const;

/** A failure path (see the module comment). */
export type FailurePath = (typeof FAILURE_PATHS)[number];

/** How often a subscriber met each failure path. */
export type FailurePathCounts = Readonly<Record<FailurePath, number>>;

/** The paths each steered fault makes a subscriber meet. */
const PATHS_OF_FAULT: Readonly<Record<SteeredFault, readonly FailurePath[]>> = {
  // a refused commit fails the record, which is retried
  conflict: ['conflict', 'handler-error', 'redelivery'],
  'lose-response': ['lost-response'],
  'crash-before': ['crash-before-commit', 'redelivery'],
  'crash-after': ['crash-after-commit', 'redelivery'],
};

/**
 * The paths a run at `rates` must have made a reached subscriber whose queue has `maxReceiveCount` meet: those of the
 * faults steered to it (@default no redrive policy: every fault the rates allow). At `maxReceiveCount` 1 a failed
 * receive is the message's last, so no fault leads to a redelivery.
 */
export function requiredFailurePaths(rates: FaultRates, maxReceiveCount?: number): FailurePath[] {
  const required = new Set(steeredFaultsTo(rates, maxReceiveCount).flatMap((fault) => PATHS_OF_FAULT[fault]));
  if (maxReceiveCount === 1) required.delete('redelivery');
  return FAILURE_PATHS.filter((path) => required.has(path));
}

/**
 * The paths the run's rates stand for that it cannot steer to a subscriber whose queue has `maxReceiveCount` (below
 * {@link MIN_RECEIVES_STEERED}; @default no redrive policy: none): not required of it, not proven when not met.
 */
export function notSteeredFailurePaths(rates: FaultRates, maxReceiveCount?: number): FailurePath[] {
  const steered = new Set(requiredFailurePaths(rates, maxReceiveCount));
  return requiredFailurePaths(rates).filter((path) => !steered.has(path));
}

/**
 * The paths of the run's rates a subscriber's queue is too short to have steered to it, and that queue's
 * `maxReceiveCount` (simulator/check/failure-paths.ts): what its OK leaves unproven unless the run's random faults met them.
 */
export interface NotSteeredFailurePaths {
  /** The `maxReceiveCount` of the subscriber's queue (1 or 2). */
  readonly maxReceiveCount: number;
  /** The paths of the run's rates the run cannot steer there, in the order of {@link FAILURE_PATHS}. */
  readonly paths: readonly FailurePath[];  /** Whether the last-receive probe steered conflicts to one of its events (so the reason does not say none). @default false */
  readonly probed?: boolean;
}

/**
 * Why a path of {@link NotSteeredFailurePaths} is not steered, for the report: no production setting is advised.
 * `probed`: the last-receive probe steered conflicts to one event of the subscriber, at every receive (what became of it
 * is the probe's line: dead-lettered and redriven, or not).
 */
export function notSteeredReason(maxReceiveCount: number, probed = false): string {
  const conflicts = probed ? "no transaction conflict to it but the last-receive probe's (one event, failed at every receive: see its line)" : 'no transaction conflict to it';
  return (
    `its queue's maxReceiveCount is ${maxReceiveCount}, so the run steers ${conflicts} (${maxReceiveCount === 1 ? 'and one crash at most' : 'nor a crash'}): ` +
    'one would dead-letter a valid event by the simulator\'s injection alone; these paths are not required of it, and only a conflict or a crash the run drew at random (or real contention) meets them'
  );
}

/** The faults of `allowed` that would make a subscriber with `counts` meet a path it has not met yet. */
export function faultsStillNeeded(counts: FailurePathCounts, allowed: readonly SteeredFault[]): ReadonlySet<SteeredFault> {
  return new Set(allowed.filter((fault) => PATHS_OF_FAULT[fault].some((path) => counts[path] === 0)));
}

/** How often `subscriber` met each path, from the ledger; `conflictsRefused` counts its function's refused requests. */
export function failurePathsOf(subscriber: SubscriberView, ledger: RunLedger, conflictsRefused: number): FailurePathCounts {
  const functionKey = subscriber.function?.key;
  const faults = ledger.faultsByKind([functionKey]);
  const mapping = subscriber.mapping === undefined ? undefined : ledger.mappings.get(subscriber.mapping.key);
  const retries = subscriber.mapping === undefined ? [] : (ledger.loggedRetries.get(subscriber.mapping.key) ?? []);
  return {
    'handler-error': retries.filter((retry) => retry.logged.startsWith('failed')).length + (subscriber.mapping === undefined ? 0 : (ledger.reportedUnlogged.get(subscriber.mapping.key) ?? 0)),
    'lost-response': faults['lost-response'] ?? 0,
    conflict: (faults['transaction-conflict'] ?? 0) + conflictsRefused,
    'crash-before-commit': faults.crash ?? 0,
    'crash-after-commit': faults['crash-after-commit'] ?? 0,
    redelivery: mapping?.redeliveries ?? 0,
    'dead-letter': subscriber.deadLetterQueues.reduce((sum, queue) => sum + (ledger.deadLettersReceived.get(queue.model.key) ?? 0), 0),
  };
}

/** What a run advises when a subscriber events reached never met a path steered to it: the run was too small. */
export const FAILURE_PATHS_NOT_MET_ADVICE = 'run more commands (--count): each invocation gets one steered fault, each event a few';

/**
 * A subscriber events reached that never met some of the failure paths the run's fault rates steer to it
 * (`not-exercised`): the run proves too little of it, not that it broke exactly-once, so its verdict is NOT PROVEN
 * (a violation still wins).
 */
export interface FailurePathsNotMet {
  readonly subscriber: string;
  /** The paths it never met, in the order of {@link FAILURE_PATHS}. */
  readonly paths: readonly FailurePath[];
  /** The events of the run that reached it. */
  readonly eventsReached: number;
}

/**
 * The paths of `required` (the paths steered to it: {@link requiredFailurePaths}) that a subscriber events reached
 * never met, as one {@link FailurePathsNotMet}; none when it met them all or no event reached it.
 */
export function failurePathsNotMet(subscriber: string, counts: FailurePathCounts, required: readonly FailurePath[], eventsReached: number): FailurePathsNotMet[] {
  if (eventsReached === 0) return [];
  const missed = required.filter((path) => counts[path] === 0);
  if (missed.length === 0) return [];
  return [{ subscriber, paths: missed, eventsReached }];
}
