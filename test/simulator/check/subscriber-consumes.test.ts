/** The subscriber-consumes rule: a subscriber's filter policy that drops a type the scenario says it consumes. */
import { describe, expect, test } from 'vitest';
import { subscriberConsumesRule } from '../../../simulator/check/rules/subscriber-consumes';
import { fixFor } from '../../../simulator/check/violation-cause';

const filterPolicy = { type: ['OrderPlaced.v2'] };
const facts = {
  ledger: { relayGaveUp: [{ eventIds: ['order-placed-order-3'] }] },
  consumes: { Receipts: ['OrderPlaced'] },
  subscribers: [{ view: { name: 'Receipts', subscription: { topic: 'Topic', filterPolicy, filterPolicyScope: 'MessageBody' } }, matched: new Set(['order-placed-order-9']) }],
  model: { relays: [{ key: 'Relay', targetTopic: 'Topic' }] },
  committed: {
    eventIdsByRelay: new Map([['Relay', ['order-placed-order-2', 'order-placed-order-1', 'order-placed-order-3', 'order-placed-order-9']]]),
    eventsById: new Map(['order-placed-order-1', 'order-placed-order-2', 'order-placed-order-3', 'order-placed-order-9'].map((id) => [id, { id, type: 'OrderPlaced' }])),
  },
} as unknown as Parameters<typeof subscriberConsumesRule.check>[0];

describe('subscriber-consumes', () => {
  test('a dropped consumed type is an untaken-event at the subscriber with a structured cause: the subscriber, the dropped events, its filter policy as the setting', () => {
    const [finding, ...rest] = subscriberConsumesRule.check(facts);
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({ kind: 'untaken-event', subscriber: 'Receipts' });
    expect(finding!.causes).toEqual([
      {
        kind: 'filter-drops-consumed-type',
        subscriber: 'Receipts',
        eventIds: ['order-placed-order-1', 'order-placed-order-2'],
        invocations: [],
        requests: [],
        setting: { name: 'filterPolicy', value: filterPolicy, scope: 'MessageBody', type: 'OrderPlaced' },
        fix: fixFor('filter-drops-consumed-type'),
      },
    ]);
  });
});
