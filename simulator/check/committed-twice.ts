/**
 * A producer the run drove commits each command once, whatever its retries: the simulator invokes each command and
 * retries a failed attempt (simulator/run/producer-driver.ts), and hears which outbox events each applied request
 * (transaction) of each attempt wrote. A later attempt of a command that commits a transaction with the same event
 * types as one an earlier attempt of that command committed, under ids no earlier attempt committed, committed the
 * command again: the earlier commit's reply was lost, or its process crashed after it, and the retry drew new ids (a
 * random event id, or a random business id as the subject). A correct producer derives the event id from the command,
 * so its retry is answered "already written" and commits nothing. A command split over two transactions, whose retry
 * finishes the second, commits types the earlier attempt did not commit in a transaction, and is not named.
 * This needs no producer probe, and reads neither subject nor data.
 */
import type { SimulatedEvent } from '../observation/run-facts';
import type { Finding } from './invariants';
import { ATTEMPT_KEY } from './producer-attempts';
import { fixFor } from './violation-cause';

/** Commands named per producer in full; the rest are counted. */
const MAX_LISTED = 3;

/** One command committed again by a later attempt: its index, the attempts, and the first event of each commit. */
interface Repeat {
  readonly command: number;
  readonly firstAttempt: number;
  readonly againAttempt: number;
  readonly kept: string;
  readonly repeat: string;
}

/**
 * The `command-committed-twice` violation of `producer` (as the report names it), when a later attempt of one of its
 * commands committed a transaction an earlier attempt had committed (same event types) under new ids; from the events
 * each applied request of each invocation wrote (`transactions`, by invocation key, in order) and the committed
 * envelopes (`eventsById`, for the types). Each command committed again is a cause `event-id-per-attempt` with the
 * producer and the two first event ids (the kept one, then the repeat).
 */
export function checkCommittedTwice(producer: string, transactions: ReadonlyMap<string, readonly (readonly string[])[]>, eventsById: ReadonlyMap<string, SimulatedEvent>): Finding[] {
  const repeats = repeatsOf(transactions, eventsById);
  if (repeats.length === 0) return [];
  const described = repeats.slice(0, MAX_LISTED).map(({ command, firstAttempt, againAttempt, kept, repeat }) => {
    const event = eventsById.get(repeat);
    const what = event === undefined ? '' : ` (${event.type}${event.subject === undefined ? '' : ` of ${event.subject}`})`;
    return `command #${command} again at attempt ${againAttempt} after attempt ${firstAttempt} had committed it: event ${repeat}${what} repeats ${kept}`;
  });
  const more = repeats.length > MAX_LISTED ? `; and ${repeats.length - MAX_LISTED} more command(s)` : '';
  return [
    {
      kind: 'command-committed-twice',
      detail:
        `the producer ${producer} committed ${described.join('; ')}${more}. ` +
        'Its retry after a commit whose reply was lost (or after a crash that followed the commit) drew new ids, so the command committed a second time: ' +
        fixFor('event-id-per-attempt'),
      causes: repeats.map(({ kept, repeat }) => ({ kind: 'event-id-per-attempt' as const, producer, eventIds: [kept, repeat], invocations: [], requests: [], fix: fixFor('event-id-per-attempt') })),
    },
  ];
}

/** Per command, in command order: the first transaction of a later attempt that repeats an earlier attempt's under new ids. */
function repeatsOf(transactions: ReadonlyMap<string, readonly (readonly string[])[]>, eventsById: ReadonlyMap<string, SimulatedEvent>): Repeat[] {
  const byCommand = new Map<number, { attempt: number; transactions: readonly (readonly string[])[] }[]>();
  for (const [invocationKey, written] of transactions) {
    const match = ATTEMPT_KEY.exec(invocationKey);
    if (match === null) continue;
    const command = Number(match[1]);
    byCommand.set(command, [...(byCommand.get(command) ?? []), { attempt: Number(match[2]), transactions: written }]);
  }
  const typesOf = (eventIds: readonly string[]): string | undefined => {
    const types = eventIds.map((eventId) => eventsById.get(eventId)?.type);
    return types.includes(undefined) ? undefined : JSON.stringify([...(types as string[])].sort());
  };
  const repeats: Repeat[] = [];
  for (const command of [...byCommand.keys()].sort((a, b) => a - b)) {
    const earlier: { attempt: number; types: string; first: string }[] = [];
    const earlierIds = new Set<string>();
    let found: Repeat | undefined;
    for (const { attempt, transactions: written } of byCommand.get(command)!.sort((a, b) => a.attempt - b.attempt)) {
      for (const eventIds of written) {
        const types = typesOf(eventIds);
        const before = types === undefined ? undefined : earlier.find((entry) => entry.types === types && entry.attempt < attempt);
        if (found === undefined && before !== undefined && eventIds.every((eventId) => !earlierIds.has(eventId))) {
          found = { command, firstAttempt: before.attempt, againAttempt: attempt, kept: before.first, repeat: eventIds[0]! };
        }
      }
      for (const eventIds of written) {
        const types = typesOf(eventIds);
        if (types !== undefined && eventIds.length > 0) earlier.push({ attempt, types, first: eventIds[0]! });
        for (const eventId of eventIds) earlierIds.add(eventId);
      }
    }
    if (found !== undefined) repeats.push(found);
  }
  return repeats;
}
