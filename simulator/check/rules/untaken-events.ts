/**
 * Rule: every committed event of a type the scenario expects consumed (`expectConsumed`) was taken by some
 * subscription's filter policy. An event no filter takes reaches the topic and no queue: nothing consumes it, and no
 * other check would say so (e.g. a producer sending `OrderPlaced.v2` that every filter still names as `OrderPlaced`).
 * A scenario that names the types it expects consumed names them all: an untaken type it names neither there nor in
 * `publishedOutside` (the types the app publishes for consumers outside it) fails too, since a producer's new type is
 * the one nobody foresaw. Without `expectConsumed`, untaken events are listed and fail nothing.
 */
import type { ObservableRunFacts, RunFacts, RunWideCheck } from '../run-check';
import { fixFor, type ViolationCause } from '../violation-cause';

/** What the rule reads: the run's untaken events and the types the scenario expects consumed (`verify` builds them too). */
export type UntakenFacts = ObservableRunFacts & Pick<RunFacts, 'untaken' | 'expectConsumed' | 'publishedOutside'>;

/** How many event ids a violation names. */
const IDS_SHOWN = 5;

/** The cause as fields: a type `expectConsumed` names (`expected`), or one the scenario names nowhere; each its own change. */
function untakenCause(type: string, eventIds: readonly string[], expected: boolean): ViolationCause {
  const kind = expected ? 'no-filter-takes-expected-type' : 'undeclared-type-untaken';
  return { kind, eventType: type, eventIds, invocations: [], requests: [], fix: fixFor(kind) };
}

export const untakenEventsRule: RunWideCheck<UntakenFacts> = {
  name: 'untaken-event',
  checks: 'every committed event of a type the scenario expects consumed, or of a type it does not name when it names them, was taken by some subscription',
  scope: 'run',
  check: (facts) => {
    const outside = facts.publishedOutside ?? [];
    return facts.untaken
      .filter(({ type }) => facts.expectConsumed.includes(type) || (facts.expectConsumed.length > 0 && !outside.includes(type)))
      .map(({ type, eventIds }) => ({
        kind: 'untaken-event' as const,
        causes: [untakenCause(type, eventIds, facts.expectConsumed.includes(type))],
        detail:
          `${eventIds.length} committed ${type} event(s) reached the topic and no subscription's filter policy took them ` +
          `(${eventIds.slice(0, IDS_SHOWN).join(', ')}${eventIds.length > IDS_SHOWN ? ', ...' : ''}); ` +
          (facts.expectConsumed.includes(type)
            ? `the scenario expects ${type} consumed (expectConsumed): add ${type} to the filter policy of the subscriber that should consume it, or have the producer send a type a filter takes`
            : `the scenario names the types it expects consumed (expectConsumed: ${facts.expectConsumed.join(', ')}) and ${type} is not among them, ` +
              'nor among the types it publishes for consumers outside the app (publishedOutside): ' +
              `add ${type} to the filter policy of the subscriber that should consume it (and to expectConsumed), or to publishedOutside if consumers outside this app take it`),
      }));
  },
};
