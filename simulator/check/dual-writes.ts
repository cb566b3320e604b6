/**
 * The producer side of the outbox: a business change and its events commit together or not at all. Every change the
 * producer probe found must have each of its events in the outbox, and every event of the producer in the outbox must
 * belong to a change. Either gap is the dual-write failure the outbox exists to prevent (the business write and the
 * event written separately, with a crash, a lost response or a retry in between). One violation per direction, with
 * the count and the first few named. An ordered event written for both paths (`alsoToStandardFlow`) brings its standard
 * event (`standardEventIdOf`) into its change: the two commit in one transaction.
 */
import { standardEventIdOf } from '../../lambda/contract/ordered-wire-format';
import type { BusinessChange, SimulatedEvent } from '../observation/run-facts';
import type { Finding } from './invariants';
import { fixFor, type ViolationCause } from './violation-cause';

/** Gaps named per violation. */
const MAX_LISTED = 5;

function listed(items: readonly string[]): string {
  return items.slice(0, MAX_LISTED).join('; ') + (items.length > MAX_LISTED ? `; and ${items.length - MAX_LISTED} more` : '');
}

/**
 * Checks the `changes` the probe of `producer` (as the report names it) found against the outbox: `outboxEventIds` is
 * everything in the outbox the producer writes to, `producerEventIds` the events of it that are the producer's (those
 * its function wrote, of its event types: each must belong to a change; another producer's or a subscriber's on the same
 * outbox are not charged to it). With `eventsById` (the committed envelopes), an event without a change whose type and
 * subject are those of an event a change has is one command committed twice under two ids: the cause
 * `event-id-per-attempt` (a new event id drawn per attempt); so is a change's event missing from the outbox whose id
 * ends with the subject of such an event under another id (the probe derives the id from the command, the producer drew
 * a new one), named on both violations.
 */
export function checkDualWrites(
  producer: string,
  changes: readonly BusinessChange[],
  outboxEventIds: ReadonlySet<string>,
  producerEventIds: ReadonlySet<string>,
  eventsById?: ReadonlyMap<string, SimulatedEvent>,
): Finding[] {
  const violations: Finding[] = [];
  const withoutEvent: string[] = [];
  const missingIds: string[] = [];
  const claimed = new Set<string>();
  for (const change of changes) {
    for (const eventId of change.eventIds) {
      claimed.add(eventId);
      // one fact on both paths (OrderedOutbox's alsoToStandardFlow): its standard event commits in the same transaction
      claimed.add(standardEventIdOf(eventId));
      if (!outboxEventIds.has(eventId)) {
        withoutEvent.push(`${change.subject}: event ${eventId} missing`);
        missingIds.push(eventId);
      }
    }
  }
  const orphans = [...producerEventIds].filter((eventId) => !claimed.has(eventId));
  const twice = eventsById === undefined ? [] : committedTwice(orphans, claimed, missingIds, eventsById);
  const causeOf = ({ orphan, kept }: { orphan: string; kept: string }): ViolationCause => ({
    kind: 'event-id-per-attempt',
    producer,
    eventIds: [kept, orphan],
    invocations: [],
    requests: [],
    fix: fixFor('event-id-per-attempt'),
  });
  // a change's event missing with no event of the producer without its change of that subject, when no new id per
  // attempt was seen: the change committed and its event was written apart (after it, or never). A missing event whose
  // subject has an event the check could not pair is an id the probe does not derive, and an event without its change
  // is as likely a retry's under a new id (command-committed-twice names those): neither is told (never a guess)
  const orphanSubjects = new Set(orphans.map((eventId) => eventsById?.get(eventId)?.subject));
  const subjectOfMissing = (eventId: string): string | undefined => changes.find((change) => change.eventIds.includes(eventId))?.subject;
  const hasCounterpart = (eventId: string): boolean => (eventsById === undefined ? orphans.length > 0 : orphanSubjects.has(subjectOfMissing(eventId)));
  const apart = (eventIds: readonly string[]): ViolationCause[] => {
    const alone = twice.length > 0 ? [] : eventIds.filter((eventId) => !hasCounterpart(eventId));
    return alone.length === 0 ? [] : [{ kind: 'change-and-event-written-apart', producer, eventIds: alone.slice(0, MAX_LISTED), invocations: [], requests: [], fix: fixFor('change-and-event-written-apart') }];
  };
  const named = ({ orphan }: { orphan: string }): string => `${eventsById?.get(orphan)?.type} of ${eventsById?.get(orphan)?.subject}`;
  if (withoutEvent.length > 0) {
    const elsewhere = twice.filter(({ kept }) => !outboxEventIds.has(kept));
    const told =
      elsewhere.length === 0
        ? ''
        : `; ${elsewhere.length} of them ${elsewhere.length === 1 ? 'is' : 'are'} in the outbox under another id (${listed(elsewhere.map((pair) => `${pair.kept} as ${pair.orphan}: ${named(pair)}`))}): ` +
          `the producer draws a new event id on each attempt, not the id the probe derives from the command; ${fixFor('event-id-per-attempt')}`;
    const causes = [...elsewhere.map(causeOf), ...apart(missingIds)];
    violations.push({
      kind: 'dual-write',
      detail: `${withoutEvent.length} event(s) of business changes the producer ${producer} committed are not in the outbox (the change committed without its event): ${listed(withoutEvent)}${told}`,
      ...(causes.length === 0 ? {} : { causes }),
    });
  }
  if (orphans.length > 0) {
    // an orphan paired with an event of a change in the outbox repeats the command; one paired with a missing id is that event, under another id
    const repeats = twice.filter(({ kept }) => outboxEventIds.has(kept));
    const renamed = twice.filter(({ kept }) => !outboxEventIds.has(kept));
    const told =
      (repeats.length === 0
        ? ''
        : `; ${repeats.length} of them repeat a command committed under another id (${listed(repeats.map((pair) => `${pair.orphan} and ${pair.kept}: ${named(pair)}`))}): ` +
          'the producer draws a new event id on each attempt, so a retry after a commit whose reply was lost commits the command again') +
      (renamed.length === 0
        ? ''
        : `; ${renamed.length} of them ${renamed.length === 1 ? "is a change's event" : "are changes' events"} under another id than the probe derives (${listed(renamed.map((pair) => `${pair.orphan} as ${pair.kept}: ${named(pair)}`))}): ` +
          'the producer draws a new event id on each attempt, not the id the probe derives from the command') +
      (twice.length === 0 ? '' : `; ${fixFor('event-id-per-attempt')}`);
    const causes: ViolationCause[] = twice.map(causeOf);
    violations.push({
      kind: 'dual-write',
      detail: `${orphans.length} event(s) the producer ${producer} wrote are in the outbox without a business change that has them (the event committed without its change): ${listed(orphans)}${told}`,
      ...(causes.length === 0 ? {} : { causes }),
    });
  }
  return violations;
}

/** Whether `eventId` begins with `type` (or a dotted part of it) in kebab case: `order-placed-order-2` with `OrderPlaced`. */
function typeBegins(eventId: string, type: string | undefined): boolean {
  if (type === undefined) return false;
  const kebab = (text: string): string => text.replace(/([a-z0-9])([A-Z])/g, '$1-$2').toLowerCase().replace(/[^a-z0-9]+/g, '-');
  return [type, ...type.split('.')].map(kebab).some((prefix) => prefix.length >= 3 && eventId.startsWith(`${prefix}-`));
}

/**
 * The events without a change whose type and subject are those of an event a change has (`kept`): one command
 * committed twice. A change's event missing from the outbox (`missing`, so its type and subject are unknown) is `kept`
 * for an event whose subject ends its id (`order-placed-order-2` and an event of subject `order-2`): the probe derives
 * the id from the command, the producer drew another. The first such event, in id order, whose type begins the id
 * (`OrderPlaced`); else the only such event, when no other missing id could be it: otherwise none (not guessed).
 */
function committedTwice(
  orphans: readonly string[],
  claimed: ReadonlySet<string>,
  missing: readonly string[],
  eventsById: ReadonlyMap<string, SimulatedEvent>,
): { orphan: string; kept: string }[] {
  const claimedBySite = new Map<string, string>();
  for (const eventId of claimed) {
    const event = eventsById.get(eventId);
    if (event?.subject !== undefined) claimedBySite.set(`${event.type}|${event.subject}`, eventId);
  }
  const pairs: { orphan: string; kept: string }[] = [];
  const unmatched: string[] = [];
  for (const orphan of orphans) {
    const event = eventsById.get(orphan);
    const kept = event?.subject === undefined ? undefined : claimedBySite.get(`${event.type}|${event.subject}`);
    if (kept === undefined) unmatched.push(orphan);
    else pairs.push({ orphan, kept });
  }
  const free = [...unmatched].sort();
  const ofSubject = (kept: string): string[] =>
    free.filter((candidate) => {
      const subject = eventsById.get(candidate)?.subject;
      return subject !== undefined && subject !== '' && (kept === subject || kept.endsWith(`-${subject}`));
    });
  for (const kept of missing) {
    const candidates = ofSubject(kept);
    // one of its own type (the id begins with the type in kebab case: order-placed-order-2 and OrderPlaced), else the
    // one event of its subject when no other missing id of that subject competes for it: never a guess between several
    const typed = candidates.find((candidate) => typeBegins(kept, eventsById.get(candidate)?.type));
    const competing = missing.some((other) => other !== kept && ofSubject(other).some((candidate) => candidates.includes(candidate)));
    const orphan = typed ?? (candidates.length === 1 && !competing ? candidates[0] : undefined);
    if (orphan === undefined) continue;
    free.splice(free.indexOf(orphan), 1);
    pairs.push({ orphan, kept });
  }
  return pairs;
}
