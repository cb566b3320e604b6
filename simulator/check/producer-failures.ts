/**
 * Every producer command must succeed within its attempts: a command that failed every one was refused for good, so
 * the events it was meant to commit are missing, and the flow's delivery checks cannot see that (they only follow what
 * did commit). One violation per kind of reason (the error name), naming the commands (numbered from 1 in the scenario's order) and one reason in full.
 *
 * A command refused by its own earlier write (applied, its response lost) is told why; when its attempts put different
 * event ids (a new id drawn per attempt), the id is the mistake: the violation carries the cause `event-id-per-attempt`.
 */
import type { ProducerFailure, ProducerFigures } from '../observation/run-facts';
import type { Finding } from './invariants';
import { fixFor, type ViolationCause } from './violation-cause';

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
function ownRetryHint(reason: string, afterUnseenWrite: boolean, differing: DifferingIds | undefined): string {
  if (!afterUnseenWrite || !/TransactionCancel/.test(reason) || !/ConditionalCheckFailed/.test(reason)) return '';
  if (differing !== undefined) {
    return (
      '. why: a write of an earlier attempt was applied, but the producer did not see it (a lost response, or a crash after the write), and the retry ' +
      'was refused by the conditions that write now fails (ConditionalCheckFailed): the change may be committed while its caller was told it failed. ' +
      `Its attempts put different event ids (${differing.first} at attempt ${differing.firstAttempt}, ${differing.again} at attempt ${differing.againAttempt}), ` +
      `so no retry can tell its own earlier write: ${fixFor('event-id-per-attempt')}`
    );
  }
  return (
    '. why: a write of an earlier attempt was applied, but the producer did not see it (a lost response, or a crash after the write), and the retry ' +
    'was refused by the conditions that write now fails (ConditionalCheckFailed): the change may be committed while its caller was told it failed. ' +
    'Outbox.transactWrite cannot tell its own earlier write from a conflict; Outbox.transactWriteOnce, with event ids derived from the command ' +
    "(e.g. `order-placed-${orderId}`), answers such a retry with { written: false } and the stored events"
  );
}

/**
 * The outbox events each attempt of a failed command put, applied or refused (attempt 1 first), and its producer as
 * the report names it; undefined when the run did not hear them (a deployed run, `verify`).
 */
export type AttemptEvents = (failure: ProducerFailure) => { readonly producer: string; readonly attempts: readonly (readonly string[])[] } | undefined;

/** A later attempt that put none of the event ids an earlier attempt put: the first id of each. */
interface DifferingIds {
  readonly producer: string;
  readonly first: string;
  readonly firstAttempt: number;
  readonly again: string;
  readonly againAttempt: number;
}

function differingIds(failure: ProducerFailure, attemptEvents: AttemptEvents | undefined): DifferingIds | undefined {
  const heard = attemptEvents?.(failure);
  if (heard === undefined) return undefined;
  const firstIndex = heard.attempts.findIndex((ids) => ids.length > 0);
  if (firstIndex === -1) return undefined;
  const first = heard.attempts[firstIndex]!;
  const againIndex = heard.attempts.findIndex((ids, index) => index > firstIndex && ids.length > 0 && !ids.some((id) => first.includes(id)));
  if (againIndex === -1) return undefined;
  return { producer: heard.producer, first: first[0]!, firstAttempt: firstIndex + 1, again: heard.attempts[againIndex]![0]!, againAttempt: againIndex + 1 };
}

/**
 * A violation per producer and kind of reason among the commands that failed every attempt; `attemptEvents` tells what
 * each attempt put in the outbox, when the run heard it. @param attemptEvents @default not heard
 */
export function checkProducerFailures(figures: ProducerFigures, attempts: number, attemptEvents?: AttemptEvents): Finding[] {
  const byKind = new Map<string, { producer?: string; indexes: number[]; example: string; hint: string; causes: ViolationCause[] }>();
  for (const failure of figures.failed) {
    const differing = failure.afterUnseenWrite === true ? differingIds(failure, attemptEvents) : undefined;
    const hint = ownRetryHint(failure.reason, failure.afterUnseenWrite === true, differing);
    const told = hint === '' ? 'none' : differing === undefined ? 'own-retry' : 'id-per-attempt';
    const key = JSON.stringify([failure.producer ?? null, reasonKind(failure.reason), told]);
    const entry = byKind.get(key) ?? { ...(failure.producer === undefined ? {} : { producer: failure.producer }), indexes: [], example: failure.reason, hint, causes: [] };
    entry.indexes.push(failure.index);
    if (hint !== '' && differing !== undefined) {
      entry.causes.push({ kind: 'event-id-per-attempt', producer: differing.producer, eventIds: [differing.first, differing.again], invocations: [], requests: [], fix: fixFor('event-id-per-attempt') });
    }
    byKind.set(key, entry);
  }
  return [...byKind.values()].map(({ producer, indexes, example, hint, causes }) => {
    const listed = [...indexes].sort((a, b) => a - b).slice(0, MAX_COMMANDS_LISTED).map((index) => `#${index + 1}`).join(', ') + (indexes.length > MAX_COMMANDS_LISTED ? ', …' : '');
    const total = producer === undefined ? figures.total : (figures.byProducer?.find((entry) => entry.producer === producer)?.total ?? figures.total);
    return {
      kind: 'producer-failed' as const,
      detail: `${indexes.length} of ${total} ${producer === undefined ? 'producer' : `${producer}`} command(s) failed all ${attempts} attempt(s) (${listed}): ${example}${hint}`,
      ...(causes.length === 0 ? {} : { causes }),
    };
  });
}
