/** The simulated operator's redrive: what it moves back, and how a moved-back message is then accounted for. */
import { describe, expect, test } from 'vitest';
import { DEAD_LETTER_ATTRIBUTE } from '../../../lambda/consumer/dead-letter';
import { readDeadLetters } from '../../../simulator/check/dead-letters';
import { checkDeliveries } from '../../../simulator/check/invariants';
import type { SubscriberView } from '../../../simulator/observation/run-facts';
import { redriveDeadLetters, type RedriveDecider } from '../../../simulator/run/operator';
import { makeQueue, queueModel } from '../aws/queue-test-kit';
import { subscriberKit } from '../check/check-kit';

/** Admits every dead letter: these tests are about whose dead letters move and how they are accounted for, not the rules (operator-redrive-rules.int.test.ts). */
const admitAll: RedriveDecider = async () => ({ redrive: true });

describe('the operator redrive', () => {
  test('moves back only the dead letters of its own subscriber when a dead-letter queue is shared', async () => {
    // GIVEN Billing and Shipping share one dead-letter queue, and each has a dead letter in it
    const kit = subscriberKit({ maxReceiveCount: 1 });
    const shippingQueue = makeQueue(queueModel('Shipments', { redrive: { deadLetterQueue: kit.deadLetterQueue.model.key, maxReceiveCount: 1 } }), {
      clock: kit.clock,
      observer: kit.ledger,
      deadLetterQueue: kit.deadLetterQueue,
    });
    const shipping: SubscriberView = { ...kit.subscriber, name: 'Shipping', subscription: { ...kit.subscriber.subscription, key: 'Stack/ShippingSubscription' }, queue: shippingQueue };
    kit.deliver('billing-event');
    kit.deadLetterByRuntime(kit.queue.receive(1)[0]!, 'billing-event');
    shippingQueue.send({ body: JSON.stringify({ id: 'shipping-event' }), origin: { via: 'sns', eventId: 'shipping-event', subscription: shipping.subscription.key } });
    kit.ledger.onFanOut(shipping.subscription.key, { eventId: 'shipping-event', matched: true, copies: 1 });
    const [failed] = shippingQueue.receive(1); // received once, failed, never deleted
    kit.ledger.lastFailure.set(failed!.messageId, 'reported as a batch item failure');
    kit.clock.advanceBy(60_000);
    expect(shippingQueue.receive(1)).toEqual([]); // SQS moves it to the shared dead-letter queue
    expect(kit.deadLetterQueue.counts().total).toBe(2);

    // WHEN Billing's operator redrives
    const { moved } = await redriveDeadLetters(kit.subscriber, admitAll);

    // THEN only Billing's dead letter went back to Billing's queue; Shipping's stays, still explained and not lost
    expect(moved).toBe(1);
    expect(kit.queue.messages().map((message) => message.origin.eventId)).toEqual(['billing-event']);
    expect(kit.deadLetterQueue.messages().map((message) => message.origin.eventId)).toEqual(['shipping-event']);
    const shippingFindings = readDeadLetters(shipping.deadLetterQueues, kit.ledger).filter((finding) => finding.eventId === 'shipping-event');
    expect(checkDeliveries(shipping, shippingFindings, kit.ledger)).toEqual([]);
  });

  test("a moved-back message keeps its event's subject: the checks tell by it which event a write of a batch was made for (new-user trial NU18-2)", async () => {
    const kit = subscriberKit({ maxReceiveCount: 1 });
    kit.deadLetterQueue.send({ body: JSON.stringify({ id: 'order-placed-order-23', subject: 'order-23' }), origin: { via: 'send-message', eventId: 'order-placed-order-23', subject: 'order-23' } });

    expect((await redriveDeadLetters(kit.subscriber, admitAll)).moved).toBe(1);

    expect(kit.queue.messages().map(({ origin }) => [origin.via, origin.eventId, origin.subject])).toEqual([['moved-back', 'order-placed-order-23', 'order-23']]);
  });

  test('a moved-back message that SQS moves again is explained by its new failures, not by the reason of its earlier dead letter', async () => {
    // GIVEN a message blocked for an operator, moved back by the redrive
    const kit = subscriberKit({ maxReceiveCount: 1 });
    kit.deliver('event-1');
    kit.deadLetterByRuntime(kit.queue.receive(1)[0]!, 'event-1');
    expect((await redriveDeadLetters(kit.subscriber, admitAll)).moved).toBe(1);

    // WHEN its next delivery fails with no reason recorded, and SQS moves it to the dead-letter queue
    const [again] = kit.queue.receive(1);
    expect(again?.messageAttributes[DEAD_LETTER_ATTRIBUTE.ERROR_NAME]?.StringValue).toBe('MessageBlockedError'); // SQS keeps attributes
    kit.clock.advanceBy(60_000);
    expect(kit.queue.receive(1)).toEqual([]);

    // THEN the old MessageBlockedError attribute does not explain it
    const findings = readDeadLetters(kit.subscriber.deadLetterQueues, kit.ledger);
    expect(findings).toHaveLength(1);
    expect(findings[0]?.explanation).toBeUndefined();

    // and with a recorded failure, that failure is the explanation
    kit.ledger.lastFailure.set(again!.messageId, 'the invocation timed out after 30 s');
    expect(readDeadLetters(kit.subscriber.deadLetterQueues, kit.ledger)[0]?.explanation).toMatch(/^moved by SQS after 1 receives; last failure: the invocation timed out/);
  });
});
