/**
 * Rule: each effect the scenario's probe counted was applied as often as exactly-once allows (../invariants.ts), a
 * count too high told by its cause: the invocation that applied it again and how (../apply-attribution.ts), and the
 * consumer's writes outside its inbox transaction (../own-client-writes.ts).
 */
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
    const checked = checkEffects(
      subscriber.view,
      probe.tallies,
      subscriber.deadLetters,
      facts.ledger,
      (tally) => subscriber.applyCause(tally.eventIds),
      (tally) => {
        // the invocations' story per event; the writes outside the transaction first when no event's story names them
        const told = subscriber.applyCauses(tally.eventIds);
        const outside = subscriber.ownClientCause(tally.eventIds);
        return outside === undefined || told.some((cause) => cause.kind === outside.kind) ? told : [outside, ...told];
      },
    );
    const cause = subscriber.ownClientWrites;
    return checked.violations.map((violation) => (cause === undefined || violation.kind !== 'effect-count' ? violation : { ...violation, detail: `${violation.detail}; ${cause}` }));
  },
};
