/** A subscriber the scenario checks (an effect probe) that no event reached fails the run: its probe checked nothing. */
import { describe, expect, test } from 'vitest';
import { ENVELOPE_ATTRIBUTE_NAMES } from '../../../lambda/contract/envelope-attributes';
import { checkProbedSubscriberReached } from '../../../simulator/check/unreached-subscribers';

describe('nothing-reached', () => {
  test('fails when the scenario has an effect probe for a subscriber no event reached, naming the filter keys outside the envelope', () => {
    // GIVEN a body filter on `eventType` (the envelope's attribute is `type`), and a probe for the subscriber
    const violations = checkProbedSubscriberReached({
      name: 'Seats',
      matchedEvents: 0,
      committedEvents: 40,
      probed: true,
      filterPolicy: { eventType: ['SeatReserved'] },
      filterPolicyScope: 'MessageBody',
    });

    expect(violations).toEqual([
      {
        kind: 'nothing-reached',
        subscriber: 'Seats',
        detail: expect.stringMatching(/^the scenario has an effect probe for Seats, but none of the 40 committed event\(s\) reached it: nothing was checked for it/),
      },
    ]);
    expect(violations[0]!.detail).toContain(`its filter policy's key 'eventType' is not an attribute of the event envelope (${ENVELOPE_ATTRIBUTE_NAMES.join(', ')})`);
  });

  test('passes a probed subscriber when no event reached the topic at all: the relay gave every one up (its own verdict says where they are)', () => {
    expect(
      checkProbedSubscriberReached({ name: 'Seats', matchedEvents: 0, committedEvents: 3, eventsGivenUpByRelay: 3, probed: true, filterPolicyScope: 'MessageBody' }),
    ).toEqual([]);
    // one that did reach the topic and matched nothing is still a violation
    expect(
      checkProbedSubscriberReached({ name: 'Seats', matchedEvents: 0, committedEvents: 3, eventsGivenUpByRelay: 2, probed: true, filterPolicyScope: 'MessageBody' }),
    ).toHaveLength(1);
  });

  test('passes a probed subscriber that events reached, and one without a probe', () => {
    expect(checkProbedSubscriberReached({ name: 'Seats', matchedEvents: 3, committedEvents: 40, probed: true, filterPolicyScope: 'MessageBody' })).toEqual([]);
    expect(checkProbedSubscriberReached({ name: 'Seats', matchedEvents: 0, committedEvents: 40, probed: false, filterPolicyScope: 'MessageBody' })).toEqual([]);
  });

  test('says nothing of the filter keys when they are envelope attributes (a nested key is judged by its first segment)', () => {
    const [violation] = checkProbedSubscriberReached({
      name: 'Seats',
      matchedEvents: 0,
      committedEvents: 2,
      probed: true,
      filterPolicy: { type: ['SeatReserved'], 'data.seat': [{ exists: true }] },
      filterPolicyScope: 'MessageBody',
    });
    expect(violation!.detail).not.toContain('is not an attribute of the event envelope');
  });
});
