/**
 * Every producer command must succeed within its attempts: a command that failed every one was refused for good, so
 * the events it was meant to commit are missing, and the flow's delivery checks cannot see that (they only follow what
 * did commit). One violation per kind of reason (the error name), naming the commands (numbered from 1 in the scenario's order) and one reason in full.
 */
import type { ProducerFigures } from '../observation/run-facts';
import type { Violation } from './invariants';

/** Commands named per violation. */
const MAX_COMMANDS_LISTED = 5;

/** What kind of reason a failure has: its text up to the first `: ` (e.g. `the invocation threw Error`). */
function reasonKind(reason: string): string {
  const colon = reason.indexOf(': ');
  return colon === -1 ? reason : reason.slice(0, colon);
}

/**
 * Why a command failed, when it failed because it could not survive its own retry: a write of an earlier attempt was
 * applied unseen, and the retry's transaction was cancelled by the conditions that write now fails.
 */
function ownRetryHint(reason: string, afterUnseenWrite: boolean): string {
  if (!afterUnseenWrite || !/TransactionCancel/.test(reason) || !/ConditionalCheckFailed/.test(reason)) return '';
  return (
    '. why: a write of an earlier attempt was applied, but the producer did not see it (a lost response, or a crash after the write), and the retry ' +
    'was refused by the conditions that write now fails (ConditionalCheckFailed): the change may be committed while its caller was told it failed. ' +
    'Outbox.transactWrite cannot tell its own earlier write from a conflict; Outbox.transactWriteOnce, with event ids derived from the command ' +
    "(e.g. `order-placed-${orderId}`), answers such a retry with { written: false } and the stored events"
  );
}

/** A violation per producer and kind of reason among the commands that failed every attempt. */
export function checkProducerFailures(figures: ProducerFigures, attempts: number): Violation[] {
  const byKind = new Map<string, { producer?: string; indexes: number[]; example: string; hint: string }>();
  for (const failure of figures.failed) {
    const hint = ownRetryHint(failure.reason, failure.afterUnseenWrite === true);
    const key = JSON.stringify([failure.producer ?? null, reasonKind(failure.reason), hint !== '']);
    const entry = byKind.get(key) ?? { ...(failure.producer === undefined ? {} : { producer: failure.producer }), indexes: [], example: failure.reason, hint };
    entry.indexes.push(failure.index);
    byKind.set(key, entry);
  }
  return [...byKind.values()].map(({ producer, indexes, example, hint }) => {
    const listed = [...indexes].sort((a, b) => a - b).slice(0, MAX_COMMANDS_LISTED).map((index) => `#${index + 1}`).join(', ') + (indexes.length > MAX_COMMANDS_LISTED ? ', …' : '');
    const total = producer === undefined ? figures.total : (figures.byProducer?.find((entry) => entry.producer === producer)?.total ?? figures.total);
    return {
      kind: 'producer-failed' as const,
      detail: `${indexes.length} of ${total} ${producer === undefined ? 'producer' : `${producer}`} command(s) failed all ${attempts} attempt(s) (${listed}): ${example}${hint}`,
    };
  });
}
