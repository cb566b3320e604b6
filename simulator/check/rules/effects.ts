/**
 * Rule: each effect the scenario's probe counted was applied as often as exactly-once allows (../invariants.ts), a
 * count too high told by its cause: upstream of the subscriber (a producer's command committed under two ids, another
 * subscriber's outbox write of its own), the consumer's writes outside its inbox transaction (../own-client-writes.ts),
 * the invocation that applied it again and how (../apply-attribution.ts), and for an aggregate's processed list that
 * forgot an event, the upstream that flooded it; ../effect-causes.ts orders them. A count too
 * low is told by the commits that lacked what an earlier run of the handler staged (state kept in memory).
 */
import { effectCauses, floodUpstream, upstreamOfCount, type Upstream } from '../effect-causes';
import { checkEffects } from '../invariants';
import type { ObservableRunFacts, ObservableSubscriberFacts, SubscriberCheck } from '../run-check';
import type { ViolationCause } from '../violation-cause';

export const effectsRule: SubscriberCheck<ObservableSubscriberFacts, ObservableRunFacts> = {
  name: 'effect-count',
  checks: 'each effect the scenario probes was applied as often as exactly-once allows',
  scope: 'subscriber',
  check: (subscriber, facts) => {
    const probe = subscriber.effectProbe;
    if (probe === undefined) return [];
    if ('error' in probe) return [{ kind: 'probe-failed', subscriber: subscriber.view.name, detail: `the effect probe threw: ${probe.error}` }];
    const upstream = (eventIds: readonly string[]) => facts.upstreamOf?.(subscriber.view.name, eventIds);
    // the upstream of what the consumer's own applications do not account for; else of the newer events that pushed an
    // event out of its aggregate's processed list (a flood from upstream), when one is told
    const upstreamTold = (eventIds: readonly string[], told: readonly ViolationCause[], excess: number): Upstream | undefined =>
      upstreamOfCount(upstream(eventIds), told, excess) ??
      floodUpstream(told, subscriber.appliedBetween, (newer, reading) => facts.upstreamOf?.(subscriber.view.name, newer, reading));
    const checked = checkEffects(
      subscriber.view,
      probe.tallies,
      subscriber.deadLetters,
      facts.ledger,
      // a cause upstream (a producer's, another subscriber's) is told for what this consumer's own applications do not account for
      (tally, below, expected) => {
        // a count too low: the commits that lacked what an earlier run of the handler staged (state kept in memory)
        if (below) return subscriber.shortCause(tally.eventIds);
        const told = subscriber.applyCause(tally.eventIds);
        const above = upstreamTold(tally.eventIds, subscriber.applyCauses(tally.eventIds), tally.applied - expected.max);
        if (above === undefined) return told;
        return told === undefined ? above.text : `${told}; ${above.text}`;
      },
      (tally, below, expected) => {
        if (below) return subscriber.shortCauses(tally.eventIds);
        const told = subscriber.applyCauses(tally.eventIds);
        return effectCauses(told, subscriber.ownClientCause(tally.eventIds), upstreamTold(tally.eventIds, told, tally.applied - expected.max));
      },
    );
    const cause = subscriber.ownClientWrites;
    return checked.violations.map((violation) => (cause === undefined || violation.kind !== 'effect-count' ? violation : { ...violation, detail: `${violation.detail}; ${cause}` }));
  },
};
