/**
 * Rule: every committed event of a type the scenario expects consumed (`expectConsumed`) was taken by some
 * subscription's filter policy. An event no filter takes reaches the topic and no queue: nothing consumes it, and no
 * other check would say so (e.g. a producer sending `OrderPlaced.v2` that every filter still names as `OrderPlaced`).
 */
import type { ObservableRunFacts, RunFacts, RunWideCheck } from '../run-check';

/** What the rule reads: the run's untaken events and the types the scenario expects consumed (`verify` builds them too). */
export type UntakenFacts = ObservableRunFacts & Pick<RunFacts, 'untaken' | 'expectConsumed'>;

/** How many event ids a violation names. */
const IDS_SHOWN = 5;

export const untakenEventsRule: RunWideCheck<UntakenFacts> = {
  name: 'untaken-event',
  checks: 'every committed event of a type the scenario expects consumed was taken by some subscription',
  scope: 'run',
  check: (facts) =>
    facts.untaken
      .filter(({ type }) => facts.expectConsumed.includes(type))
      .map(({ type, eventIds }) => ({
        kind: 'untaken-event' as const,
        detail:
          `${eventIds.length} committed ${type} event(s) reached the topic and no subscription's filter policy took them ` +
          `(${eventIds.slice(0, IDS_SHOWN).join(', ')}${eventIds.length > IDS_SHOWN ? ', ...' : ''}); the scenario expects ${type} consumed (expectConsumed): ` +
          `add ${type} to the filter policy of the subscriber that should consume it, or have the producer send a type a filter takes`,
      })),
};
