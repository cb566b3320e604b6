/**
 * The producer side of the outbox: a business change and its events commit together or not at all. Every change the
 * producer probe found must have each of its events in the outbox, and every event of the producer in the outbox must
 * belong to a change. Either gap is the dual-write failure the outbox exists to prevent (the business write and the
 * event written separately, with a crash, a lost response or a retry in between). One violation per direction, with
 * the count and the first few named. An ordered event written for both paths (`alsoToStandardFlow`) brings its standard
 * event (`standardEventIdOf`) into its change: the two commit in one transaction.
 */
import { standardEventIdOf } from '../../lambda/contract/ordered-wire-format';
import type { BusinessChange } from '../observation/run-facts';
import type { Violation } from './invariants';

/** Gaps named per violation. */
const MAX_LISTED = 5;

function listed(items: readonly string[]): string {
  return items.slice(0, MAX_LISTED).join('; ') + (items.length > MAX_LISTED ? `; and ${items.length - MAX_LISTED} more` : '');
}

/**
 * Checks `changes` against the outbox: `outboxEventIds` is everything in the outbox the producer writes to,
 * `producerEventIds` the events of it that are the producer's (each must belong to a change).
 */
export function checkDualWrites(changes: readonly BusinessChange[], outboxEventIds: ReadonlySet<string>, producerEventIds: ReadonlySet<string>): Violation[] {
  const violations: Violation[] = [];
  const withoutEvent: string[] = [];
  const claimed = new Set<string>();
  for (const change of changes) {
    for (const eventId of change.eventIds) {
      claimed.add(eventId);
      // one fact on both paths (OrderedOutbox's alsoToStandardFlow): its standard event commits in the same transaction
      claimed.add(standardEventIdOf(eventId));
      if (!outboxEventIds.has(eventId)) withoutEvent.push(`${change.subject}: event ${eventId} missing`);
    }
  }
  if (withoutEvent.length > 0) {
    violations.push({
      kind: 'dual-write',
      detail: `${withoutEvent.length} event(s) of committed business changes are not in the outbox (the change committed without its event): ${listed(withoutEvent)}`,
    });
  }
  const orphans = [...producerEventIds].filter((eventId) => !claimed.has(eventId));
  if (orphans.length > 0) {
    violations.push({
      kind: 'dual-write',
      detail: `${orphans.length} event(s) of the producer are in the outbox without a business change that has them (the event committed without its change): ${listed(orphans)}`,
    });
  }
  return violations;
}
