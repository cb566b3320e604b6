/**
 * What a run exercised, per subscriber: which failure paths its consumer met, and how often. An OK says only what the
 * run put the consumer through; a path it never met is not proven (a wrapper that swallows failures passes a run in
 * which no record of that subscriber failed). The paths:
 *
 * - `handler-error`: a record the runtime logged as failed (the handler or a write threw), to be retried;
 * - `lost-response`: a write of its function applied, its response lost;
 * - `conflict`: a write of its function refused with a transaction conflict;
 * - `crash-before-commit` and `crash-after-commit`: its process died at a write, before it was sent and after it was
 *   applied;
 * - `redelivery`: a message handed to it again after an earlier receive;
 * - `dead-letter`: a message of it put on its dead-letter queues (by the runtime, by SQS after `maxReceiveCount`, by SNS).
 *
 * The faults of the run's rates are steered to every subscriber (../faults/fault-steering.ts); a path it still never
 * met is listed as not proven by the run (the summary, `--json`), not a violation: steering does not reach every path
 * of a small run yet (6 events of the package test's app met no crash). A dead letter is counted, not required: a
 * valid event's dead letter fails the run (unapplied-events.ts).
 */
import type { SubscriberView } from '../observation/run-facts';
import type { RunLedger } from '../observation/ledger';

/** The failure paths, in the order the report shows them. */
export const FAILURE_PATHS = ['handler-error', 'lost-response', 'conflict', 'crash-before-commit', 'crash-after-commit', 'redelivery', 'dead-letter'] as const;

/** A failure path (see the module comment). */
export type FailurePath = (typeof FAILURE_PATHS)[number];

/** How often a subscriber met each failure path. */
export type FailurePathCounts = Readonly<Record<FailurePath, number>>;

/** How often `subscriber` met each path, from the ledger; `conflictsRefused` counts its function's refused requests. */
export function failurePathsOf(subscriber: SubscriberView, ledger: RunLedger, conflictsRefused: number): FailurePathCounts {
  const functionKey = subscriber.function?.key;
  const faults = ledger.faultsByKind([functionKey]);
  const mapping = subscriber.mapping === undefined ? undefined : ledger.mappings.get(subscriber.mapping.key);
  const retries = subscriber.mapping === undefined ? [] : (ledger.loggedRetries.get(subscriber.mapping.key) ?? []);
  return {
    'handler-error': retries.filter((retry) => retry.logged.startsWith('failed')).length,
    'lost-response': faults['lost-response'] ?? 0,
    conflict: (faults['transaction-conflict'] ?? 0) + conflictsRefused,
    'crash-before-commit': faults.crash ?? 0,
    'crash-after-commit': faults['crash-after-commit'] ?? 0,
    redelivery: mapping?.redeliveries ?? 0,
    'dead-letter': subscriber.deadLetterQueues.reduce((sum, queue) => sum + (ledger.deadLettersReceived.get(queue.model.key) ?? 0), 0),
  };
}
