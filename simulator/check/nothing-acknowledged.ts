/**
 * A subscriber that events matched must have acknowledged at least one of them. When none was (every event
 * dead-lettered, or still failing), the run says nothing about its effects: a consumer that fails on everything
 * (a wrong handler, a missing permission, a schema that rejects every payload) would otherwise end in an OK whose
 * table shows only dead letters.
 */
import type { Violation } from './invariants';

/** A violation when `delivered` events reached the subscriber's queue and `acknowledged` of them were acknowledged is 0. */
export function checkSomethingAcknowledged(subscriber: string, figures: { readonly delivered: number; readonly acknowledged: number; readonly deadLettered: number }): Violation[] {
  if (figures.delivered === 0 || figures.acknowledged > 0) return [];
  return [
    {
      kind: 'nothing-acknowledged',
      subscriber,
      detail: `${figures.delivered} event(s) matched its filter policy and reached its queue, and its consumer acknowledged none of them (${figures.deadLettered} dead letter(s)): nothing it was meant to do was done`,
    },
  ];
}
