/** The untaken-event rule: which committed types that no subscription took fail the run. */
import { describe, expect, test } from 'vitest';
import { untakenEventsRule, type UntakenFacts } from '../../../simulator/check/rules/untaken-events';
import { fixFor } from '../../../simulator/check/violation-cause';

const untaken = [
  { type: 'OrderPlaced.v2', eventIds: ['order-placed-order-2', 'order-placed-order-4'] },
  { type: 'OrderAudited', eventIds: ['order-audited-order-1'] },
];
const facts = (scenario: { expectConsumed?: readonly string[]; publishedOutside?: readonly string[] }) =>
  ({ untaken, expectConsumed: scenario.expectConsumed ?? [], publishedOutside: scenario.publishedOutside ?? [] }) as unknown as UntakenFacts;

describe('untaken-event', () => {
  test('without expectConsumed, no untaken type fails the run (they are listed only)', () => {
    expect(untakenEventsRule.check(facts({}))).toEqual([]);
  });

  test('a declared expectConsumed is the whole list: an untaken type it does not name fails too, unless the scenario names it in publishedOutside', () => {
    const violations = untakenEventsRule.check(facts({ expectConsumed: ['OrderPlaced'] }));
    expect(violations.map((violation) => violation.detail.split(' reached')[0])).toEqual(['2 committed OrderPlaced.v2 event(s)', '1 committed OrderAudited event(s)']);
    expect(violations[0]!.detail).toBe(
      "2 committed OrderPlaced.v2 event(s) reached the topic and no subscription's filter policy took them (order-placed-order-2, order-placed-order-4); " +
        'the scenario names the types it expects consumed (expectConsumed: OrderPlaced) and OrderPlaced.v2 is not among them, nor among the types it publishes for consumers outside the app (publishedOutside): ' +
        'add OrderPlaced.v2 to the filter policy of the subscriber that should consume it (and to expectConsumed), or to publishedOutside if consumers outside this app take it',
    );
    expect(untakenEventsRule.check(facts({ expectConsumed: ['OrderPlaced'], publishedOutside: ['OrderAudited'] })).map((violation) => violation.detail.split(' reached')[0])).toEqual([
      '2 committed OrderPlaced.v2 event(s)',
    ]);
  });

  test('a type named in expectConsumed that nothing took fails with its own advice', () => {
    const [violation] = untakenEventsRule.check(facts({ expectConsumed: ['OrderPlaced', 'OrderPlaced.v2'], publishedOutside: ['OrderAudited'] }));
    expect(violation!.detail).toMatch(/the scenario expects OrderPlaced.v2 consumed \(expectConsumed\): add OrderPlaced.v2 to the filter policy/);
  });

  test('each violation carries its cause as fields: the type, its events and the change to make (a type expectConsumed names that no filter takes; a type the scenario names nowhere)', () => {
    const [expected, undeclared] = untakenEventsRule.check(facts({ expectConsumed: ['OrderPlaced', 'OrderPlaced.v2'] }));

    expect(expected!.causes).toEqual([
      { kind: 'no-filter-takes-expected-type', eventType: 'OrderPlaced.v2', eventIds: ['order-placed-order-2', 'order-placed-order-4'], invocations: [], requests: [], fix: fixFor('no-filter-takes-expected-type') },
    ]);
    expect(undeclared!.causes).toEqual([
      { kind: 'undeclared-type-untaken', eventType: 'OrderAudited', eventIds: ['order-audited-order-1'], invocations: [], requests: [], fix: fixFor('undeclared-type-untaken') },
    ]);
    // the fixes name what to change: a filter policy or the producer's type; or the scenario's expectConsumed or publishedOutside
    expect(fixFor('no-filter-takes-expected-type')).toMatch(/filter policy.*producer/);
    expect(fixFor('undeclared-type-untaken')).toMatch(/filter policy.*expectConsumed.*publishedOutside/);
  });
});
