/**
 * Which subscribers' effects verify cannot see without an effect probe, and why (a line of the verdict's `unproven`:
 * NOT PROVEN, exit 5). Aggregate mode keeps no inbox at all. Lease and multi-step subscribers keep a processing record,
 * but their effects are outside DynamoDB: a COMPLETED record says the runtime's handler returned, not that the effect
 * happened once (a double call, or a BLOCKED record an operator resolved SUCCESS without the effect, reads the same).
 * Transactional and ordered subscribers commit their inbox record in the transaction of their effects: it proves them.
 */
import type { SubscriberDeployment } from '../../lambda/contract/subscriber-deployment';
import type { EffectProbeOutcome } from '../check/run-check';

/** The `unproven` line for a subscriber that took `taken` run events, or undefined when its inbox proves its effects or a probe counts them. */
export function unseenEffects(name: string, deployment: Pick<SubscriberDeployment, 'processingMode'>, hasProbe: boolean, taken: number, hasInbox: boolean): string | undefined {
  if (hasProbe || taken === 0) return undefined;
  if (!hasInbox) return `${name} keeps no inbox (aggregate mode) and the scenario has no effect probe for it: verify cannot see whether it applied the run's ${taken} event(s)`;
  if (deployment.processingMode === 'lease' || deployment.processingMode === 'multi-step') {
    return (
      `${name} is in ${deployment.processingMode} mode and the scenario has no effect probe for it: its effects are outside DynamoDB, and its COMPLETED ` +
      `processing records say its handler returned, not that each of the run's ${taken} event(s) took effect once; add an effect probe`
    );
  }
  return undefined;
}

/** The run's events a subscriber took that its effect probe gives no tally for, and the `unproven` line saying so. */
export interface UntalliedEffects {
  /** Sorted. */
  readonly eventIds: readonly string[];
  readonly line: string;
}

/**
 * The run's `taken` events of a subscriber whose inbox does not prove its effects (aggregate mode keeps none; a lease or
 * multi-step record says its handler returned) that no tally of its effect probe names: nothing counted their effects,
 * so they would rest on COMPLETED records alone (review r13, R13-9). Undefined when its inbox proves its effects
 * (transactional, ordered), it has no probe (then {@link unseenEffects} speaks), its probe threw (effect-count says so),
 * or every taken event is tallied. An event the probe leaves out because it has no effect cannot be told from one it
 * forgot: the line says how to make it provable.
 */
export function untalliedEffects(
  name: string,
  deployment: Pick<SubscriberDeployment, 'processingMode'>,
  hasInbox: boolean,
  taken: ReadonlySet<string>,
  probe: EffectProbeOutcome | undefined,
): UntalliedEffects | undefined {
  if (probe === undefined || 'error' in probe) return undefined;
  const mode = deployment.processingMode;
  if (hasInbox && mode !== 'lease' && mode !== 'multi-step') return undefined;
  const tallied = new Set(probe.tallies.flatMap((tally) => tally.eventIds));
  const eventIds = [...taken].filter((id) => !tallied.has(id)).sort();
  if (eventIds.length === 0) return undefined;
  const why = hasInbox ? `is in ${mode} mode` : 'keeps no inbox (aggregate mode)';
  const shown = `${eventIds.slice(0, 3).join(', ')}${eventIds.length > 3 ? ', ...' : ''}`;
  return {
    eventIds,
    line:
      `${name} ${why}: ${eventIds.length} of the run's ${taken.size} event(s) it took have no tally in its effect probe (${shown}), so nothing counted their effects ` +
      `(outside DynamoDB: ${hasInbox ? 'its COMPLETED processing records say its handler returned, not that each took effect once' : 'it keeps no record of them'}); ` +
      `make its probe count them, or narrow its subscription's filter policy to the events it has effects for`,
  };
}

/**
 * The `unproven` lines for the subscribers the scenario has an effect probe for whose filter took none of the run's
 * `committed` events (review v11, V11-2): the scenario expects them to apply some (else it would have no probe for
 * them), and a deployed filter that drops every event (a typo in an event type, a filter on a field the events do not
 * carry) would leave them unexercised while the verdict said OK. A subscriber without a probe that took none is no gap:
 * it may take event types the scenario does not produce. None when no event was committed (the verdict says so once).
 */
export function probesNotExercised(subscribers: readonly { readonly name: string; readonly taken: number }[], probed: ReadonlySet<string>, committed: number): string[] {
  if (committed === 0) return [];
  return subscribers
    .filter((subscriber) => subscriber.taken === 0 && probed.has(subscriber.name))
    .map(
      (subscriber) =>
        `${subscriber.name} took none of the run's ${committed} event(s), though the scenario has an effect probe for it: its probe never ran over an event, so nothing of it was checked; compare its subscription's filter policy (its Operator output's filterPolicy) with the events the scenario's producers commit, or raise --count`,
    );
}
