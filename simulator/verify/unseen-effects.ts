/**
 * Which subscribers' effects verify cannot see without an effect probe, and why (a line of the verdict's `unproven`:
 * NOT PROVEN, exit 1). Aggregate mode keeps no inbox at all. Lease and multi-step subscribers keep a processing record,
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
