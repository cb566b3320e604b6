/**
 * A producer the run drove commits each command once, whatever its retries: the simulator invokes each command and
 * retries a failed attempt (simulator/run/producer-driver.ts), and hears every request of each attempt that put outbox
 * events, applied or refused (observation/ledger.ts `outboxRequestsByInvocation`).
 *
 * A commit T of a command is committed again by an applied request R of a later attempt when R puts only events no
 * request of the command committed before, R's event types are T's (or include them: a retry that adds an audit event),
 * and that attempt never re-ran T: re-sent T's events, or was refused by the condition of a business item T wrote (the
 * request's cancellation reason `ConditionalCheckFailed` on that item). A correct producer derives its ids from the
 * command: its retry re-runs the steps the earlier attempt committed, is answered "already written" (a refused request
 * that re-sends T's events), and commits only the steps the earlier attempt stopped before, so a command split over
 * several transactions of one event type is not named; one that draws a random event id but writes each step with a
 * condition on the step's own item meets that item's refusal for a done step, and is not named either. A producer that
 * draws its ids per attempt (a random event id, or a random business id as the subject) without such a condition
 * re-runs none of its steps. A refusal re-runs nothing when the item is one another commit of the command wrote too (a
 * shared counter tells no step done), or when its attempt goes on to commit the step again under new ids: events of the
 * step's types and data (ids and subjects left out) written with the item whose condition refused it (the step's other
 * items, a ledger row under an id drawn per attempt, may differ): a version (If-Match) check refused, read as "moved",
 * re-read and written again, the version having moved by the command's own commit. The next step on that item (an
 * order's next status) carries other data and is not named; nor is a retry whose event data carries what it re-read
 * or drew per attempt (the new version or balance, a time): the two look alike in the table and the outbox.
 *
 * Inside one attempt (the producer retries its own failed write): R commits T again when T's reply was lost (the
 * invocation did not see it applied), R comes after T, no request answered after T (in this attempt or a later one)
 * re-ran it, and R's events carry T's content (type and data, the event's own id and subject left out), so the next
 * step of a batch, whose data differs, is not named. The SDK re-sends a write whose reply was lost with the same ids,
 * after the writes sent with it at once were answered: steps of one shape written in parallel are not named. A re-send
 * refused inside T's attempt re-runs nothing when the attempt then writes T again under new ids (T's events' type and
 * data, with an item the re-send was refused on; with no business item, the same events, subject included): the
 * producer's own loop took the refusal for a failure.
 *
 * A correct producer that checks whether a step is done by reading (not by a conditional write) re-sends nothing and is
 * named too: derive the ids and write with `transactWriteOnce`, as the docs ask.
 */
import type { SimulatedEvent } from '../observation/run-facts';
import type { OutboxRequest } from '../observation/outbox-writes';
import type { Finding } from './invariants';
import { ATTEMPT_KEY } from './producer-attempts';
import { fixFor, type RequestReference } from './violation-cause';

/** Commands named per producer in full; the rest are counted. */
const MAX_LISTED = 3;

/** One command committed again: its index (from 0), the attempts, the first event and the request of each commit. */
interface Repeat {
  readonly command: number;
  readonly firstAttempt: number;
  readonly againAttempt: number;
  readonly kept: string;
  readonly repeat: string;
  readonly keptRequest: OutboxRequest;
  readonly repeatRequest: OutboxRequest;
}

/** A commit of a command: the attempt that made it, its request (and its place among the command's), and whether a later request re-ran it. */
interface Commit {
  readonly attempt: number;
  readonly request: OutboxRequest;
  readonly at: number;
  /** Its event types, sorted. */
  readonly types: readonly string[] | undefined;
  readonly content: string | undefined;
  /** The attempts that re-ran the step: re-sent one of its events, or were refused by the condition of an item it wrote. */
  readonly rerunBy: Set<number>;
  /** Whether a request answered after it, in its attempt or a later one, re-ran the step. */
  readonly reRunLater: boolean;
  repeated: boolean;
}

/**
 * The `command-committed-twice` violation of `producer` (as the report names it), when an attempt of one of its
 * commands committed again what an earlier commit of that command had committed (see the module comment); from every
 * request that put outbox events, by invocation key, in order (`requests`), and the committed envelopes (`eventsById`,
 * for the types and data). Each command committed again is a cause `event-id-per-attempt` with the producer, the two
 * first event ids (the kept one, then the repeat), the command (numbered from 1) and the two requests.
 */
export function checkCommittedTwice(producer: string, requests: ReadonlyMap<string, readonly OutboxRequest[]>, eventsById: ReadonlyMap<string, SimulatedEvent>): Finding[] {
  const repeats = repeatsOf(requests, eventsById);
  if (repeats.length === 0) return [];
  const described = repeats.slice(0, MAX_LISTED).map(({ command, firstAttempt, againAttempt, kept, repeat }) => {
    const event = eventsById.get(repeat);
    const what = event === undefined ? '' : ` (${event.type}${event.subject === undefined ? '' : ` of ${event.subject}`})`;
    const when = firstAttempt === againAttempt ? `within attempt ${againAttempt}, after a write of that attempt whose reply was lost had committed it` : `at attempt ${againAttempt} after attempt ${firstAttempt} had committed it`;
    return `command #${command + 1} again ${when}: event ${repeat}${what} repeats ${kept}`;
  });
  const more = repeats.length > MAX_LISTED ? `; and ${repeats.length - MAX_LISTED} more command(s)` : '';
  return [
    {
      kind: 'command-committed-twice',
      detail:
        `the producer ${producer} committed ${described.join('; ')}${more}. ` +
        'Its retry after a commit whose reply was lost (or after a crash that followed the commit) drew new ids, so the command committed a second time: ' +
        fixFor('event-id-per-attempt'),
      causes: repeats.map(({ command, firstAttempt, againAttempt, kept, repeat, keptRequest, repeatRequest }) => ({
        kind: 'event-id-per-attempt' as const,
        producer,
        eventIds: [kept, repeat],
        invocations: [],
        requests: [referenceOf(keptRequest), referenceOf(repeatRequest)],
        command: { number: command + 1, committedAt: firstAttempt, committedAgainAt: againAttempt },
        fix: fixFor('event-id-per-attempt'),
      })),
    },
  ];
}

function referenceOf(request: OutboxRequest): RequestReference {
  return { operation: request.operation, tables: request.tables, count: 1, ...(request.fault === undefined ? {} : { fault: request.fault }) };
}

/** Per command, in command order: the first commit that repeats an earlier commit of the command (see the module comment). */
function repeatsOf(requests: ReadonlyMap<string, readonly OutboxRequest[]>, eventsById: ReadonlyMap<string, SimulatedEvent>): Repeat[] {
  const byCommand = new Map<number, { attempt: number; requests: readonly OutboxRequest[] }[]>();
  for (const [invocationKey, sent] of requests) {
    const match = ATTEMPT_KEY.exec(invocationKey);
    if (match === null) continue;
    const command = Number(match[1]);
    byCommand.set(command, [...(byCommand.get(command) ?? []), { attempt: Number(match[2]), requests: sent }]);
  }
  const typeList = (eventIds: readonly string[]): string[] | undefined => {
    const types = eventIds.map((eventId) => eventsById.get(eventId)?.type);
    return types.includes(undefined) ? undefined : (types as string[]).sort();
  };
  const contentOf = (eventIds: readonly string[]): string | undefined => {
    const contents = eventIds.map((eventId) => contentOfEvent(eventsById.get(eventId)));
    return contents.includes(undefined) ? undefined : JSON.stringify((contents as string[]).sort());
  };
  const facts: StepFacts = { events: (request) => eventContentsOf(request.eventIds, eventsById), content: (request) => stepContentOf(request.eventIds, eventsById) };
  const repeats: Repeat[] = [];
  for (const command of [...byCommand.keys()].sort((a, b) => a - b)) {
    const attempts = byCommand.get(command)!.sort((a, b) => a.attempt - b.attempt);
    // every request of the command, attempt by attempt, each attempt's in the order they were answered
    const all = attempts.flatMap(({ attempt, requests: sent }) => sent.map((request) => ({ attempt, request })));
    const commits: Commit[] = [];
    const committedIds = new Set<string>();
    let found: Repeat | undefined;
    let position = 0;
    for (const { attempt, requests: sent } of attempts) {
      // a step the attempt re-ran, anywhere in it: it re-sent an event a commit of an earlier attempt wrote, or was refused by the condition of an item that commit wrote (see reRuns)
      for (let at = position; at < position + sent.length; at += 1) for (const commit of commits) if (reRuns(all, at, commit.at, facts)) commit.rerunBy.add(attempt);
      const ownCommits: Commit[] = [];
      for (const request of sent) {
        const at = position;
        position += 1;
        if (!request.applied) continue;
        const types = typeList(request.eventIds);
        const content = contentOf(request.eventIds);
        const fresh = request.eventIds.every((eventId) => !committedIds.has(eventId));
        if (found === undefined && fresh && types !== undefined) {
          const notReRun = commits.filter((commit) => !commit.repeated && commit.types !== undefined && !commit.rerunBy.has(attempt));
          // across attempts: the same types and content first (the step itself), then the same types, then those and more (a retry that adds an event); inside the attempt: the same content
          const sameStep = notReRun.find((commit) => sameList(commit.types!, types) && commit.content !== undefined && commit.content === content);
          const acrossAttempts = sameStep ?? notReRun.find((commit) => sameList(commit.types!, types)) ?? notReRun.find((commit) => includesAll(types, commit.types!));
          const before = acrossAttempts ?? ownCommits.find((commit) => !commit.repeated && unseen(commit.request) && commit.content !== undefined && commit.content === content && !commit.reRunLater);
          if (before !== undefined) {
            before.repeated = true;
            found = { command, firstAttempt: before.attempt, againAttempt: attempt, kept: before.request.eventIds[0]!, repeat: request.eventIds[0]!, keptRequest: before.request, repeatRequest: request };
          }
        }
        // whether a request answered after this one (in this attempt or a later one) re-ran it: the SDK's re-send after its lost reply comes after the writes sent with it
        const reRunLater = all.some((_, later) => later > at && reRuns(all, later, at, facts));
        ownCommits.push({ attempt, request, at, types, content, rerunBy: new Set(), reRunLater, repeated: false });
        for (const eventId of request.eventIds) committedIds.add(eventId);
      }
      commits.push(...ownCommits);
    }
    if (found !== undefined) repeats.push(found);
  }
  return repeats;
}

/** What a step is, read from a request: its events' type and data each (ids and subjects left out), and its events' content with their subjects; none when an event is unknown. */
interface StepFacts {
  readonly events: (request: OutboxRequest) => readonly string[] | undefined;
  readonly content: (request: OutboxRequest) => string | undefined;
}

/**
 * Whether the request at `at` of a command's requests (`all`, in the order they were answered) re-ran the step the
 * commit at `commitAt` committed:
 * - it re-sends one of the commit's events (a retry with the ids it drew, or ids derived from the command), unless the
 *   re-send is in the commit's own attempt and that attempt goes on to write the step again (see `writtenAgainAfter`):
 *   the SDK re-sent the write whose reply was lost, and the producer's loop, taking the refusal for a failure, wrote it
 *   again under a new id;
 * - or DynamoDB refused it for the condition of a business item the commit wrote and no other commit of the command
 *   wrote before it (a shared item, an inventory counter, tells no step apart), unless its attempt goes on to write the
 *   step again: a version (If-Match) refusal read as "moved", then a re-read and a new write, not a step found done.
 */
function reRuns(all: readonly { readonly attempt: number; readonly request: OutboxRequest }[], at: number, commitAt: number, facts: StepFacts): boolean {
  if (at === commitAt) return false;
  const { attempt, request } = all[at]!;
  const commit = all[commitAt]!.request;
  if (commit.eventIds.some((eventId) => request.eventIds.includes(eventId))) return attempt !== all[commitAt]!.attempt || !writtenAgainAfter(all, at, commit, facts);
  if (request.applied) return false;
  const writtenByAnother = (item: string): boolean => all.slice(0, at).some((other) => other.request !== commit && other.request.applied && (other.request.items ?? []).includes(item));
  const ownItemRefused = (request.refusedItems ?? []).some((item) => (commit.items ?? []).includes(item) && !writtenByAnother(item));
  return ownItemRefused && !writtenAgainAfter(all, at, commit, facts);
}

/**
 * Whether the attempt of the request at `at` goes on, after it, to commit under new ids the step `commit` committed: a
 * transaction whose events carry (at least) `commit`'s events' type and data, their ids and subjects left out, and that
 * writes one of the business items whose condition refused the request at `at` among those `commit` wrote (when the
 * refusal named none of them, one of the items `commit` wrote). A step also writing an item under an id drawn per
 * attempt (a ledger row) is written again all the same; the next step on the same item (another status, another line)
 * carries other data. For a commit with no business item: a transaction whose events carry its events' type, subject and
 * data.
 */
function writtenAgainAfter(all: readonly { readonly attempt: number; readonly request: OutboxRequest }[], at: number, commit: OutboxRequest, facts: StepFacts): boolean {
  const { attempt, request: refused } = all[at]!;
  const items = commit.items ?? [];
  const named = items.filter((item) => (refused.refusedItems ?? []).includes(item));
  const targets = named.length > 0 ? named : items;
  const events = facts.events(commit);
  const content = facts.content(commit);
  return all.some(({ attempt: laterAttempt, request: later }, index) => {
    if (index <= at || laterAttempt !== attempt || !later.applied || later.eventIds.some((eventId) => commit.eventIds.includes(eventId))) return false;
    if (items.length === 0) return content !== undefined && facts.content(later) === content;
    const laterEvents = facts.events(later);
    return events !== undefined && laterEvents !== undefined && includesAll(laterEvents, events) && targets.some((item) => (later.items ?? []).includes(item));
  });
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, index) => value === b[index]);
}

/** Whether `all` holds each of `some` (counted: two of a type need two). */
function includesAll(all: readonly string[], some: readonly string[]): boolean {
  const left = [...all];
  for (const value of some) {
    const index = left.indexOf(value);
    if (index < 0) return false;
    left.splice(index, 1);
  }
  return true;
}

/** Whether the invocation did not see the request applied: its reply lost, or its process crashed after it. */
function unseen(request: OutboxRequest): boolean {
  return request.fault === 'lose-response' || request.fault === 'crash-after';
}

/** Each event's type and data (see `contentOfEvent`), in request order; none when an event is unknown. */
function eventContentsOf(eventIds: readonly string[], eventsById: ReadonlyMap<string, SimulatedEvent>): string[] | undefined {
  const contents = eventIds.map((eventId) => contentOfEvent(eventsById.get(eventId)));
  return contents.includes(undefined) ? undefined : (contents as string[]);
}

/** The events' type, subject and data, their ids left out, sorted: what a step with no business item writes; none when an event is unknown. */
function stepContentOf(eventIds: readonly string[], eventsById: ReadonlyMap<string, SimulatedEvent>): string | undefined {
  const contents = eventIds.map((eventId) => {
    const event = eventsById.get(eventId);
    const content = contentOfEvent(event);
    return content === undefined ? undefined : `${event!.subject ?? ''}|${content}`;
  });
  return contents.includes(undefined) ? undefined : JSON.stringify((contents as string[]).sort());
}

/** An event's type and data, with its own id and subject left out (a retry that draws them anew keeps the rest). */
function contentOfEvent(event: SimulatedEvent | undefined): string | undefined {
  if (event === undefined) return undefined;
  const data = JSON.stringify(event.data ?? null, (_key, value: unknown) => (value === event.id ? '<id>' : event.subject !== undefined && value === event.subject ? '<subject>' : value));
  return `${event.type}|${data}`;
}
