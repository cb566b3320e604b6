/**
 * A body filter policy whose top-level keys are not attributes of the event envelope can never match (the relay
 * publishes the envelope as the body): synth warns, naming the key and the envelope's attributes, and the warning can
 * be acknowledged.
 */
import { Annotations as CoreAnnotations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as sns from 'aws-cdk-lib/aws-sns';
import { describe, expect, test } from 'vitest';
import { Subscriber, type SubscriberProps } from '../../lib/consumer';
import { FILTER_KEY_WARNING_ID } from '../../lib/consumer/private/filter-policy-keys';
import { ENVELOPE_ATTRIBUTE_NAMES } from '../../lambda/contract/envelope-attributes';
import { HANDLER_ENTRY, newStack } from '../fixtures/construct-test-kit';

const allow = (...values: string[]) => sns.FilterOrPolicy.filter(sns.SubscriptionFilter.stringFilter({ allowlist: values }));

function subscriber(filter: SubscriberProps['filterPolicyWithMessageBody']): { stack: ReturnType<typeof newStack>; subscriber: Subscriber } {
  const stack = newStack();
  const topic = new sns.Topic(stack, 'Topic');
  return { stack, subscriber: new Subscriber(stack, 'Seats', { topic, entry: HANDLER_ENTRY, filterPolicyWithMessageBody: filter }) };
}

describe('Subscriber: filterPolicyWithMessageBody keys', () => {
  test('warns at synth when a top-level key is not an envelope attribute, naming the key and the attributes', () => {
    const { stack } = subscriber({ eventType: allow('SeatReserved') });

    Annotations.fromStack(stack).hasWarning(
      '/TestStack/Seats',
      Match.stringLikeRegexp(
        // the attribute list is the contract's (the compiler ties it to the runtime's EventEnvelope), in its order
        `filterPolicyWithMessageBody key 'eventType' is not an attribute of the event envelope \\(${ENVELOPE_ATTRIBUTE_NAMES.join(', ')}\\).*acknowledgeWarning`,
      ),
    );
  });

  test('does not warn for envelope attributes, nested policies under data, or dotted keys under data', () => {
    const { stack } = subscriber({
      type: allow('SeatReserved'),
      data: sns.FilterOrPolicy.policy({ seat: allow('A1') }),
      'data.row': allow('12'),
    });

    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('filterPolicyWithMessageBody'));
  });

  test('an acknowledged warning is not reported', () => {
    const { stack, subscriber: seats } = subscriber({ eventType: allow('SeatReserved') });
    CoreAnnotations.of(seats).acknowledgeWarning(FILTER_KEY_WARNING_ID, 'filtered on purpose');

    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('filterPolicyWithMessageBody'));
    expect(FILTER_KEY_WARNING_ID).toMatch(/^idempotent-event-flow:/);
  });
});
