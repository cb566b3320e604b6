/** `consumes` judges whether a subscriber's filter policy takes a type, not whether its content conditions took every event of it. */
import { describe, expect, test } from 'vitest';
import { policyTakesType } from '../../../simulator/check/policy-takes-type';
import { subscriberConsumesRule } from '../../../simulator/check/rules/subscriber-consumes';
import type { RunFacts } from '../../../simulator/check/run-check';
import { fixFor } from '../../../simulator/check/violation-cause';

/** A run where four OrderPlaced events reached Billing's topic and its filter policy took the first two only. */
function factsWith(filterPolicy: Record<string, unknown>): RunFacts {
  const ids = ['order-placed-1', 'order-placed-2', 'order-placed-3', 'order-placed-4'];
  return {
    consumes: { Billing: ['OrderPlaced'] },
    ledger: { relayGaveUp: [] },
    model: { relays: [{ key: 'Relay', targetTopic: 'Topic' }] },
    committed: { eventIdsByRelay: new Map([['Relay', ids]]), eventsById: new Map(ids.map((id) => [id, { id, type: 'OrderPlaced', subject: id, data: {} }])) },
    subscribers: [{ view: { name: 'Billing', subscription: { topic: 'Topic', filterPolicy, filterPolicyScope: 'MessageBody' } }, matched: new Set(ids.slice(0, 2)) }],
  } as unknown as RunFacts;
}

describe('consumes', () => {
  test('a policy that takes the type and refuses some of its events by content (a numeric condition on the data): no violation', () => {
    const findings = subscriberConsumesRule.check(factsWith({ type: ['OrderPlaced'], data: { totalCents: [{ numeric: ['>=', 104] }] } }));
    expect(findings).toEqual([]);
  });

  test('a policy that does not take the type: the violation names the type, the events and the policy, and tells to add the type', () => {
    const findings = subscriberConsumesRule.check(factsWith({ type: ['OrderShipped'] }));
    expect(findings).toEqual([
      {
        kind: 'untaken-event',
        subscriber: 'Billing',
        detail: expect.stringMatching(/^2 committed OrderPlaced event\(s\) reached the topic and Billing's filter policy did not take them \(order-placed-3, order-placed-4\).*Add OrderPlaced to Billing's filter policy/),
        causes: [expect.objectContaining({ kind: 'filter-drops-consumed-type', subscriber: 'Billing', eventIds: ['order-placed-3', 'order-placed-4'] })],
      },
    ]);
  });
});

describe('policyTakesType', () => {
  test.each([
    ['no policy', undefined, 'MessageBody', true],
    ['the type named, with a content condition', { type: ['OrderPlaced'], data: { totalCents: [{ numeric: ['>=', 104] }] } }, 'MessageBody', true],
    ['another type named', { type: ['OrderShipped'] }, 'MessageBody', false],
    ['a prefix that matches', { type: [{ prefix: 'Order' }] }, 'MessageBody', true],
    ['anything-but the type', { type: [{ 'anything-but': ['OrderPlaced'] }] }, 'MessageBody', false],
    ['no type condition, a content condition only', { data: { totalCents: [{ numeric: ['>=', 104] }] } }, 'MessageBody', true],
    ['$or: a branch that names it', { $or: [{ type: ['OrderShipped'] }, { type: ['OrderPlaced'], data: { vip: [true] } }] }, 'MessageBody', true],
    ['$or: no branch names it', { $or: [{ type: ['OrderShipped'] }, { type: ['OrderPaid'] }] }, 'MessageBody', false],
    ['a policy on the message attributes (the relay publishes none)', { type: ['OrderPlaced'] }, 'MessageAttributes', false],
  ] as const)('%s', (_label, policy, scope, expected) => {
    expect(policyTakesType(policy as Record<string, unknown> | undefined, scope, 'OrderPlaced')).toBe(expected);
  });
});

const droppingPolicy = { type: ['OrderPlaced.v2'] };
const droppedFacts = {
  ledger: { relayGaveUp: [{ eventIds: ['order-placed-order-3'] }] },
  consumes: { Receipts: ['OrderPlaced'] },
  subscribers: [{ view: { name: 'Receipts', subscription: { topic: 'Topic', filterPolicy: droppingPolicy, filterPolicyScope: 'MessageBody' } }, matched: new Set(['order-placed-order-9']) }],
  model: { relays: [{ key: 'Relay', targetTopic: 'Topic' }] },
  committed: {
    eventIdsByRelay: new Map([['Relay', ['order-placed-order-2', 'order-placed-order-1', 'order-placed-order-3', 'order-placed-order-9']]]),
    eventsById: new Map(['order-placed-order-1', 'order-placed-order-2', 'order-placed-order-3', 'order-placed-order-9'].map((id) => [id, { id, type: 'OrderPlaced' }])),
  },
} as unknown as Parameters<typeof subscriberConsumesRule.check>[0];

describe('subscriber-consumes', () => {
  test('a dropped consumed type is an untaken-event at the subscriber with a structured cause: the subscriber, the dropped events, its filter policy as the setting', () => {
    const [finding, ...rest] = subscriberConsumesRule.check(droppedFacts);
    expect(rest).toEqual([]);
    expect(finding).toMatchObject({ kind: 'untaken-event', subscriber: 'Receipts' });
    expect(finding!.causes).toEqual([
      {
        kind: 'filter-drops-consumed-type',
        subscriber: 'Receipts',
        eventIds: ['order-placed-order-1', 'order-placed-order-2'],
        invocations: [],
        requests: [],
        setting: { name: 'filterPolicy', value: droppingPolicy, scope: 'MessageBody', type: 'OrderPlaced' },
        fix: fixFor('filter-drops-consumed-type'),
      },
    ]);
  });
});
