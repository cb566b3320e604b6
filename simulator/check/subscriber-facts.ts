/**
 * Builds a subscriber's observable facts (./run-check.ts `ObservableSubscriberFacts`), for `simulate`
 * (simulator/run/facts.ts, which adds its failure paths) and `verify` (simulator/verify/verify-checks.ts) alike: one
 * typed builder, so a field the checks come to need is asked of both, at compile time. Where the run cannot tell which
 * invocation applied an event again (verify: AWS does not show it), the causes are none.
 */
import type { ObservableSubscriberView } from '../observation/run-facts';
import type { DeadLetterFinding } from './dead-letters';
import type { EffectProbeOutcome, ObservableSubscriberFacts } from './run-check';

/** Why events were applied again (or fewer times than committed), when the run can tell (./apply-attribution.ts, ./own-client-writes.ts). */
export type ApplyCauses = Pick<ObservableSubscriberFacts, 'applyCause' | 'applyCauses' | 'shortCause' | 'shortCauses' | 'appliedBetween' | 'ownClientCause' | 'ownClientWrites'>;

/** What a subscriber's facts are made of. */
export interface SubscriberFactsParts<V extends ObservableSubscriberView> {
  readonly view: V;
  readonly deadLetters: readonly DeadLetterFinding[];
  readonly matched: ReadonlySet<string>;
  readonly applied: ReadonlySet<string>;
  readonly operator: ObservableSubscriberFacts['operator'];
  /** @default absent: the scenario has no effect probe for it */
  readonly effectProbe?: EffectProbeOutcome;
  /** @default none known */
  readonly causes?: ApplyCauses;
}

const NO_CAUSES: ApplyCauses = { applyCause: () => undefined, applyCauses: () => [], shortCause: () => undefined, shortCauses: () => [], appliedBetween: () => [], ownClientCause: () => undefined };

/** The subscriber's observable facts, its view kept as given. */
export function subscriberFacts<V extends ObservableSubscriberView>(parts: SubscriberFactsParts<V>): ObservableSubscriberFacts & { readonly view: V } {
  const causes = parts.causes ?? NO_CAUSES;
  return {
    view: parts.view,
    deadLetters: parts.deadLetters,
    matched: parts.matched,
    applied: parts.applied,
    operator: parts.operator,
    ...(parts.effectProbe === undefined ? {} : { effectProbe: parts.effectProbe }),
    applyCause: causes.applyCause,
    applyCauses: causes.applyCauses,
    shortCause: causes.shortCause,
    shortCauses: causes.shortCauses,
    appliedBetween: causes.appliedBetween,
    ownClientCause: causes.ownClientCause,
    ...(causes.ownClientWrites === undefined ? {} : { ownClientWrites: causes.ownClientWrites }),
  };
}
