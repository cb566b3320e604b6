/**
 * A batch response must not acknowledge a record the runtime itself said was to be retried: when the runtime's
 * outcome line for a record says `failed` (or `skipped`) and the response of that same invocation does not list it in
 * `batchItemFailures`, the mapping deletes a message whose effect never happened (e.g. a wrapper around the handler
 * that answers `{ batchItemFailures: [] }`, or a mapping without `ReportBatchItemFailures`). Records the runtime
 * dead-lettered or blocked are acknowledged legitimately: their message is in the dead-letter queue.
 */
import type { LoggedRetry } from '../observation/ledger';
import type { Violation } from './invariants';

/** Records named per violation. */
const MAX_RECORDS_LISTED = 3;

/** One violation per subscriber listing the acknowledged records the runtime logged as failed. */
export function checkAcknowledgedFailures(subscriber: string, loggedRetries: readonly LoggedRetry[]): Violation[] {
  const acknowledged = loggedRetries.filter((retry) => !retry.reported);
  if (acknowledged.length === 0) return [];
  const listed = acknowledged
    .slice(0, MAX_RECORDS_LISTED)
    .map((retry) => `message ${retry.messageId} (event ${retry.eventId ?? 'unknown'}) logged ${retry.logged}`)
    .join('; ');
  const more = acknowledged.length > MAX_RECORDS_LISTED ? `; and ${acknowledged.length - MAX_RECORDS_LISTED} more` : '';
  return [
    {
      kind: 'acknowledged-failure',
      subscriber,
      detail:
        `${acknowledged.length} record(s) the runtime logged as failed were acknowledged by the batch response (not in batchItemFailures), ` +
        `so their messages were deleted without their effect: ${listed}${more}`,
    },
  ];
}
