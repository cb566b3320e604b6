/**
 * `replay --aggregate-table`'s decision for one event of an aggregate-mode subscriber: an id no aggregate remembers is
 * never applied only when no aggregate forgot ids; once one forgot (more applications than its list holds), it may have
 * applied that event, so the event is undecided, not sent as never applied (mutant replay-aggregate-forgetting-ignored).
 */
import { describe, expect, test } from 'vitest';
import { type AggregateApplications, aggregateDecision } from '../../operator/cli/aggregate-applications';

const SUBSCRIBER = 'ledger';

function applications(forgetful: AggregateApplications['forgetful']): AggregateApplications {
  return {
    appliedBy: new Map([['evt-remembered', 'accounts id=acc-1']]),
    forgetful,
    unmarkedBy: new Map(),
    othersLeftOut: 0,
  };
}

describe('aggregateDecision of an id no aggregate remembers', () => {
  test('no aggregate forgot ids: never applied', () => {
    expect(aggregateDecision(applications([]), 'evt-unseen', SUBSCRIBER)).toEqual({ neverApplied: true });
  });

  test('an aggregate forgot ids: undecided, naming the aggregate and how many it forgot', () => {
    const decision = aggregateDecision(applications([{ aggregate: 'accounts id=acc-2', forgot: 3 }]), 'evt-unseen', SUBSCRIBER);
    expect(decision).not.toHaveProperty('neverApplied');
    expect(decision).toHaveProperty('unknown');
    expect((decision as { unknown: string }).unknown).toContain('accounts id=acc-2 forgot 3');
  });

  test('an id an aggregate remembers is applied, whatever others forgot', () => {
    const decision = aggregateDecision(applications([{ aggregate: 'accounts id=acc-2', forgot: 3 }]), 'evt-remembered', SUBSCRIBER);
    expect(decision).toHaveProperty('applied');
    expect((decision as { applied: string }).applied).toContain('accounts id=acc-1');
  });
});
