/**
 * Which subscribers' effects verify cannot see without an effect probe, and why (a line of the verdict's `unproven`:
 * NOT PROVEN, exit 5). Aggregate mode keeps no inbox at all. Lease and multi-step subscribers keep a processing record,
 * but their effects are outside DynamoDB: a COMPLETED record says the runtime's handler returned, not that the effect
 * happened once (a double call, or a BLOCKED record an operator resolved SUCCESS without the effect, reads the same).
 * Transactional and ordered subscribers commit their inbox record in the transaction of their effects: it proves them.
 */
import type { SubscriberDeployment } from '../../lambda/contract/subscriber-deployment';

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
