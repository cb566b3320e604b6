/**
 * The causes an effect-count violation names, so that a correct subscriber is never blamed for another's mistake:
 *
 * - **upstream**: a count read over events whose lineage (the events they were emitted for, up to a producer's)
 *   holds a command a producer committed under two event ids (`event-id-per-attempt`), or events another subscriber
 *   published with an outbox write of its own (`outbox-write-outside-transaction`), is that producer's or that
 *   subscriber's doing: a correct consumer applies each of two ids once, and the count is one too many. It excuses only
 *   the part of the count the consumer's own applications do not account for ({@link upstreamOfCount}): a consumer that
 *   applied ONE event twice made a count of that event one too many itself, whatever the producer did. A story of the
 *   consumer's own (one event applied twice, plainly or after a crash, a lost response, an expired record...) stays,
 *   before the upstream cause: that consumer is not a correct one;
 * - then **the subscriber's own writes outside its transaction**, whenever the run observed one: they are the mistake
 *   whatever fault met each event (a crash, a lost response), so the kinds that only say which fault met it
 *   (`applied-again`, `redelivery-after-crash`, `lost-response-retried`, `sdk-retry-after-lost-response`) give way;
 * - else the invocations' story of each event (./apply-attribution.ts), as told;
 * - and for an aggregate's event applied again because its processed list had forgotten it
 *   (`processed-list-overrun`), when no upstream cause is told for the count: the upstream of the newer events that
 *   pushed it out of the list ({@link floodUpstream}), a flood a mistake upstream sent.
 */
import type { CauseKind, ViolationCause } from './violation-cause';

/** What the run knows upstream of its subscribers (a simulated run; a deployed one, `verify`, knows none of it). */
export interface UpstreamFacts {
  /** The commands producers committed twice under two ids: `event-id-per-attempt` causes, each with its producer and both ids. */
  readonly repeatedCommands: readonly ViolationCause[];
  /** The subscribers that wrote events to their outbox outside their transaction: the cause, and the events their function wrote. */
  readonly outboxWriters: readonly { readonly cause: ViolationCause; readonly eventIds: ReadonlySet<string> }[];
  /** For an event a consumer emitted, the events it consumed that it was emitted for (none for a producer's). */
  readonly emittedFor: (eventId: string) => readonly string[];
}

/** An upstream cause of a count, in words and as fields. */
export interface Upstream {
  readonly text: string;
  readonly causes: readonly ViolationCause[];
}

/**
 * What an upstream cause is told of: the events a count reads ({@link COUNT_READING}), or the newer events that pushed
 * an event out of its aggregate's processed list ({@link floodUpstream}).
 */
export interface UpstreamReading {
  /** The events, in words: `the events this count reads`. */
  readonly what: string;
  /** How many of their ids the text names before `and N more`. @default all */
  readonly shown?: number;
}

/** The events of a count: all named. */
export const COUNT_READING: UpstreamReading = { what: 'the events this count reads' };

/** How many ids of the newer events that flooded a processed list (and of the events they pushed out) the text names. */
const FLOOD_SHOWN = 5;

/** Kinds that say which fault met an event applied again, not which mistake let it through. */
const FAULT_FOLLOWING: ReadonlySet<CauseKind> = new Set<CauseKind>(['applied-again', 'redelivery-after-crash', 'lost-response-retried', 'sdk-retry-after-lost-response']);

/** The events and, transitively, those they were emitted for. */
function lineage(facts: UpstreamFacts, eventIds: readonly string[]): Set<string> {
  const seen = new Set<string>();
  const pending = [...eventIds];
  while (pending.length > 0) {
    const eventId = pending.shift()!;
    if (seen.has(eventId)) continue;
    seen.add(eventId);
    pending.push(...facts.emittedFor(eventId));
  }
  return seen;
}

/**
 * The causes upstream of `subscriber` of a count read over `eventIds` (see the module comment), or of other events it
 * applied, told as `reading` says; undefined when none.
 */
export function upstreamOf(facts: UpstreamFacts, subscriber: string, eventIds: readonly string[], reading: UpstreamReading = COUNT_READING): Upstream | undefined {
  const lineal = lineage(facts, eventIds);
  const causes: ViolationCause[] = [];
  const told: string[] = [];
  for (const repeated of facts.repeatedCommands) {
    if (!repeated.eventIds.some((eventId) => lineal.has(eventId))) continue;
    causes.push(repeated);
    told.push(`the producer ${repeated.producer ?? 'unknown'} committed one command under two event ids (${repeated.eventIds.join(' and ')}), and each was applied once: ${repeated.fix}`);
  }
  for (const writer of facts.outboxWriters) {
    if (writer.cause.subscriber === subscriber) continue;
    const written = [...lineal].filter((eventId) => writer.eventIds.has(eventId));
    if (written.length === 0) continue;
    causes.push({ ...writer.cause, eventIds: written });
    const shown = reading.shown === undefined || written.length <= reading.shown ? written.join(', ') : `${written.slice(0, reading.shown).join(', ')} and ${written.length - reading.shown} more`;
    told.push(
      `the subscriber ${writer.cause.subscriber ?? 'unknown'} published ${reading.what} (${shown}) with an outbox write of its own, outside its transaction, ` +
        `so each redelivery to it published them again under new ids: ${writer.cause.fix}`,
    );
  }
  return causes.length === 0 ? undefined : { text: `upstream of ${subscriber}: ${told.join('; ')}`, causes };
}

/**
 * The upstream of the newer events that pushed an event out of its aggregate's processed list, for each
 * `processed-list-overrun` told (`appliedBetween` gives those events, `upstreamOf` the causes upstream of them): a
 * producer's command committed twice, another subscriber's outbox write of its own, each of which sends an aggregate
 * more events than the app should and floods its list. Undefined when none lies upstream (the list is too short for
 * the events the app sends: raise `maxProcessedMessages`).
 */
export function floodUpstream(
  told: readonly ViolationCause[],
  appliedBetween: (eventId: string) => readonly string[],
  upstreamOf: (eventIds: readonly string[], reading: UpstreamReading) => Upstream | undefined,
): Upstream | undefined {
  const overrun = [...new Set(told.filter((cause) => cause.kind === 'processed-list-overrun').flatMap((cause) => cause.eventIds))];
  if (overrun.length === 0) return undefined;
  const newer = [...new Set(overrun.flatMap((eventId) => appliedBetween(eventId)))];
  const forgotten = overrun.length === 1 ? `event ${overrun[0]!}` : `events ${overrun.slice(0, FLOOD_SHOWN).join(', ')}${overrun.length > FLOOD_SHOWN ? ` and ${overrun.length - FLOOD_SHOWN} more` : ''}`;
  return upstreamOf(newer, { what: `the newer events that pushed ${forgotten} out of its aggregate's processed list`, shown: FLOOD_SHOWN });
}

/**
 * How many applications too many the consumer's own stories of a count account for: per story, its applications after
 * the first (the invocations that applied the event, at least two: an SDK resend applies twice in one invocation).
 */
export function ownExcess(told: readonly ViolationCause[]): number {
  return told.reduce((sum, cause) => sum + Math.max(1, cause.invocations.filter((invocation) => invocation.role !== 'not-applied').length - 1), 0);
}

/**
 * The upstream cause of a count `excess` applications above what exactly-once allows, when the consumer's own stories
 * (`told`) do not account for all of it; else none (the count is the consumer's doing, see the module comment).
 */
export function upstreamOfCount(upstream: Upstream | undefined, told: readonly ViolationCause[], excess: number): Upstream | undefined {
  return upstream !== undefined && excess > ownExcess(told) ? upstream : undefined;
}

/**
 * The causes of one effect-count violation: `told` the invocations' story per event, `ownClient` the subscriber's writes
 * outside its transaction (when observed), `upstream` the causes upstream of it (see the module comment).
 */
export function effectCauses(told: readonly ViolationCause[], ownClient: ViolationCause | undefined, upstream: Upstream | undefined): ViolationCause[] {
  const named = ownClient === undefined ? told : told.filter((cause) => !FAULT_FOLLOWING.has(cause.kind));
  const own = ownClient === undefined || named.some((cause) => cause.kind === ownClient.kind) ? named : [ownClient, ...named];
  return [...own, ...(upstream?.causes ?? [])];
}
