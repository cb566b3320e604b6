/**
 * A consumer commits the follow-up of each event it receives once, whatever its redeliveries: the simulator hears every
 * request of each invocation, so it knows which invocation (which receive of which event) committed each outbox event
 * (apply-attribution.ts `followUps`). A transactional or aggregate consumer that publishes with `tx.emit` commits its
 * follow-ups in its inbox transaction: a refused or crashed run commits none, and a redelivery after the commit is
 * answered by the inbox record and runs nothing. One that publishes with an outbox write of its own, outside that
 * transaction, under a new id each run (`outbox.transactWrite` with a random id), commits the follow-up at every run of
 * its handler: a redelivery after a refused commit, a crash or a lost response commits it again, a new event that each
 * subscriber applies once, so no downstream count of events shows it, and a probe that tallies per customer passes.
 *
 * Named: one event received, two of the consumer's applied writes made for it (at least one outside its commit) that
 * put events of one type under ids the earlier one did not put. Not named: a write with a deterministic id and a
 * condition, whose second write DynamoDB refuses (no second applied write); the same id written again (the same event,
 * overwritten); two events of one type in one write (a follow-up per line); follow-ups of different types.
 *
 * Not judged here: a follow-up an outbox write after the commit would lose when the process dies between the two. The
 * runtime commits after `handle` returns, so a handler's own write comes before the commit; one left running past it
 * (not awaited) is not a write the run can tell from one the handler chose not to make.
 */
import type { FollowUpWrite } from './apply-attribution';
import type { Finding } from './invariants';
import { fixFor, type InvocationReference, type RequestReference, type ViolationCause } from './violation-cause';

/** Received events named per subscriber in full in the text; the rest are counted (every one is a cause in `--json`). */
const MAX_LISTED = 3;

/** One received event whose follow-up was committed again: the writes, the kept one first, and the type repeated. */
interface Repeat {
  readonly receivedEventId: string;
  readonly type: string;
  readonly writes: readonly FollowUpWrite[];
  /** Of each write's events, those of {@link type}. */
  readonly ids: readonly (readonly string[])[];
}

/**
 * The `follow-up-committed-twice` violation of `subscriber`, when a follow-up of an event it received was committed
 * again under a new id (see the module comment); from its follow-ups in the order DynamoDB applied them (`followUps`)
 * and the committed events' types (`typeOf`; an event of no known type counts as a type of its own). Each received
 * event is a cause `outbox-write-outside-transaction` with the subscriber, the received event, the follow-ups (the
 * kept one first), the invocations that committed them and their requests.
 */
export function checkFollowUpsCommittedTwice(subscriber: string, followUps: readonly FollowUpWrite[], typeOf: (eventId: string) => string | undefined): Finding[] {
  const repeats = repeatsOf(followUps, typeOf);
  if (repeats.length === 0) return [];
  const label = (invocation: InvocationReference): string => `invocation #${invocation.number} (receive ${invocation.receive ?? '?'}, at +${invocation.atSeconds} s)`;
  const described = repeats.slice(0, MAX_LISTED).map(({ receivedEventId, type, writes, ids }) => {
    const by = writes.map(({ invocation }, index) => (index === 0 ? label(invocation) : `again by ${label(invocation)}`)).join(' and ');
    return `event ${receivedEventId}, received by ${by}: ${type} ${ids.map((some) => some.join(', ')).join(', then ')}`;
  });
  const more = repeats.length > MAX_LISTED ? `; and ${repeats.length - MAX_LISTED} more received event(s)` : '';
  return [
    {
      kind: 'follow-up-committed-twice',
      subscriber,
      detail:
        `the subscriber ${subscriber} committed the follow-up of ${repeats.length} received event(s) again under a new id: ${described.join('; ')}${more}. ` +
        'Its outbox write is outside its inbox transaction, so a run of the handler whose commit was refused, or that crashed or met a lost response, still committed its follow-up, ' +
        'and the redelivery committed it again as a new event each subscriber applies: ' +
        fixFor('outbox-write-outside-transaction'),
      causes: repeats.map(({ receivedEventId, writes, ids }): ViolationCause => ({
        kind: 'outbox-write-outside-transaction',
        subscriber,
        receivedEventId,
        eventIds: ids.flat(),
        invocations: writes.map(({ invocation }, index) => ({ ...invocation, role: index === 0 ? 'applied' : 'applied-again' })),
        requests: mergedRequests(writes.map(({ request }) => request)),
        fix: fixFor('outbox-write-outside-transaction'),
      })),
    },
  ];
}

/** Per received event, in the order of their first follow-up: the type committed again and the writes that committed it (see the module comment). */
function repeatsOf(followUps: readonly FollowUpWrite[], typeOf: (eventId: string) => string | undefined): Repeat[] {
  const byReceived = new Map<string, FollowUpWrite[]>();
  for (const followUp of followUps) byReceived.set(followUp.receivedEventId, [...(byReceived.get(followUp.receivedEventId) ?? []), followUp]);
  const typeOfEvent = (eventId: string): string => typeOf(eventId) ?? `(the type of ${eventId})`;
  const repeats: Repeat[] = [];
  for (const [receivedEventId, writes] of byReceived) {
    if (writes.length < 2 || writes.every((write) => write.inCommit)) continue;
    const types = [...new Set(writes.flatMap((write) => write.eventIds.map(typeOfEvent)))];
    for (const type of types) {
      const ofType = writes.map((write) => ({ write, ids: write.eventIds.filter((eventId) => typeOfEvent(eventId) === type) })).filter(({ ids }) => ids.length > 0);
      // each write after the first that puts events of the type none of the earlier ones put: a new commit of the follow-up
      const seen = new Set<string>();
      const committing = ofType.filter(({ ids }) => {
        const fresh = ids.some((eventId) => !seen.has(eventId));
        for (const eventId of ids) seen.add(eventId);
        return fresh;
      });
      if (committing.length < 2 || committing.every(({ write }) => write.inCommit)) continue;
      repeats.push({ receivedEventId, type, writes: committing.map(({ write }) => write), ids: committing.map(({ ids }) => ids) });
      break;
    }
  }
  return repeats;
}

/** The requests, one reference per operation, tables and fault, counted. */
function mergedRequests(requests: readonly RequestReference[]): RequestReference[] {
  const merged = new Map<string, RequestReference>();
  for (const request of requests) {
    const key = JSON.stringify([request.operation, request.tables, request.fault ?? null]);
    const seen = merged.get(key);
    merged.set(key, seen === undefined ? request : { ...seen, count: seen.count + request.count });
  }
  return [...merged.values()];
}
