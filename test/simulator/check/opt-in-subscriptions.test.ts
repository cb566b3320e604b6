/**
 * Issue 41, opt-in Regions, in the simulator's placement of a run that spans Regions: a subscription whose queue is in
 * an opt-in Region other than its topic's is one SNS would not deliver through (from an opt-in Region to another: not
 * supported, SNS developer guide lambda-prereq.html; into an opt-in Region from a Region enabled by default: no
 * documented service principal, sns-cross-region-delivery.html), so the run fails naming both environments, as the
 * constructs refuse it at synth (lib/private/environments.ts). From an opt-in Region to a Region enabled by default,
 * and within one Region, nothing is said.
 */
import { describe, expect, test } from 'vitest';
import { checkSubscriptionRules } from '../../../simulator/check/subscription-rules';

const subscription = { key: 'Sub/Subscription', stackName: 'Sub', logicalId: 'Subscription', topic: 'Flow/Topic', queue: 'Sub/Queue', rawMessageDelivery: true, filterPolicyScope: 'MessageAttributes' as const };

function rules(topicRegion: string, queueRegion: string) {
  const environments = new Map([
    ['Flow', { account: '111111111111', region: topicRegion }],
    ['Sub', { account: '222222222222', region: queueRegion }],
  ]);
  // created by the queue's account in the topic's Region, as the constructs do
  return checkSubscriptionRules({ subscriptions: [{ ...subscription, region: topicRegion }], topics: [], queues: [], environments });
}

describe('subscriptions into opt-in Regions', () => {
  test('from an opt-in Region to another opt-in Region: undeliverable, naming both environments', () => {
    expect(rules('ap-east-1', 'me-south-1')).toEqual([
      { kind: 'undeliverable-subscription', detail: expect.stringMatching(/aws:\/\/222222222222\/me-south-1.*aws:\/\/111111111111\/ap-east-1.*not supported/) },
    ]);
  });

  test('from a Region enabled by default into an opt-in Region: undeliverable, no documented principal', () => {
    expect(rules('eu-west-1', 'ap-east-1')).toEqual([
      { kind: 'undeliverable-subscription', detail: expect.stringMatching(/aws:\/\/222222222222\/ap-east-1.*aws:\/\/111111111111\/eu-west-1.*principal/) },
    ]);
  });

  test('from an opt-in Region to a Region enabled by default, and within one opt-in Region: nothing to say', () => {
    expect(rules('ap-east-1', 'eu-west-1')).toEqual([]);
    expect(rules('me-south-1', 'me-south-1')).toEqual([]);
  });
});
