/**
 * Rule: each effect the scenario's probe counted was applied as often as exactly-once allows (../invariants.ts), a
 * count too high told by its cause: upstream of the subscriber (a producer's command committed under two ids, another
 * subscriber's outbox write of its own), the consumer's writes outside its inbox transaction (../own-client-writes.ts),
 * the invocation that applied it again and how (../apply-attribution.ts); ../effect-causes.ts orders them. A count too
 * low is told by the commits that lacked what an earlier run of the handler staged (state kept in memory).
 */
import { effectCauses } from '../effect-causes';
import { checkEffects } from '../invariants';
import type { ObservableRunFacts, ObservableSubscriberFacts, SubscriberCheck } from '../run-check';

export const effectsRule: SubscriberCheck<ObservableSubscriberFacts, ObservableRunFacts> = {
  name: 'effect-count',
  checks: 'each effect the scenario probes was applied as often as exactly-once allows',
  scope: 'subscriber',
  check: (subscriber, facts) => {
    const probe = subscriber.effectProbe;
    if (probe === undefined) return [];
    if ('error' in probe) return [{ kind: 'probe-failed', subscriber: subscriber.view.name, detail: `the effect probe threw: ${probe.error}` }];
    const upstream = (eventIds: readonly string[]) => facts.upstreamOf?.(subscriber.view.name, eventIds);
    const checked = checkEffects(
      subscriber.view,
      probe.tallies,
      subscriber.deadLetters,
      facts.ledger,
      // a cause upstream (a producer's, another subscriber's) is told instead of this consumer's plain "applied again", after a mistake of its own
      (tally, below) => {
        // a count too low: the commits that lacked what an earlier run of the handler staged (state kept in memory)
        if (below) return subscriber.shortCause(tally.eventIds);
        const above = upstream(tally.eventIds);
        const told = subscriber.applyCause(tally.eventIds);
        // the invocations' story stays when it names a mistake of this consumer's own (see effect-causes.ts)
        if (above === undefined) return told;
        const ownMistake = subscriber.applyCauses(tally.eventIds).some((cause) => cause.kind !== 'applied-again');
        return ownMistake && told !== undefined ? `${told}; ${above.text}` : above.text;
      },
      (tally, below) => (below ? subscriber.shortCauses(tally.eventIds) : effectCauses(subscriber.applyCauses(tally.eventIds), subscriber.ownClientCause(tally.eventIds), upstream(tally.eventIds))),
    );
    const cause = subscriber.ownClientWrites;
    return checked.violations.map((violation) => (cause === undefined || violation.kind !== 'effect-count' ? violation : { ...violation, detail: `${violation.detail}; ${cause}` }));
  },
};
