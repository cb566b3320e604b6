/**
 * Faults are decided by what they hit, never by the order things happen in: the ids the SNS and SQS fault decisions
 * are keyed on (SNS message ids, SQS message ids) follow the message, not how many came before it. At concurrency
 * above 1 events commit, and so reach the topic, in an order that varies from run to run.
 */
import { describe, expect, it } from 'vitest';
import { eventIdOf } from '../../../simulator/aws/message-ids';
import { SimulatedTopic } from '../../../simulator/aws/topic';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import { frozenClock, makeQueue, queueModel } from './queue-test-kit';

const EVENTS = Array.from({ length: 20 }, (_, index) => JSON.stringify({ id: `event-${index}`, type: 'OrderPlaced' }));

/** Publishes `events` in this order; answers each event's SNS message id and how many copies its queue got. */
function publishAll(events: readonly string[]) {
  const clock = frozenClock();
  const queue = makeQueue(queueModel('Orders'), { clock });
  const topic = new SimulatedTopic({
    model: { key: 'Stack/Topic', stackName: 'Stack', logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 },
    arn: 'arn:aws:sns:us-east-1:000000000000:orders',
    subscriptions: [
      {
        model: { key: 'Stack/Sub', stackName: 'Stack', logicalId: 'Sub', topic: 'Stack/Topic', queue: queue.model.key, rawMessageDelivery: false, filterPolicyScope: 'MessageAttributes' },
        queue,
      },
    ],
    faults: new FaultPlan('order', { ...NO_FAULTS, duplicate: 0.5 }),
    clock,
    matches: () => true,
  });
  const snsIds = new Map(events.map((event) => [eventIdOf(event)!, topic.publish(event).messageId]));
  const copies = new Map<string, number>();
  const sqsIds = new Map<string, string[]>();
  for (const message of queue.messages()) {
    const id = eventIdOf(message.body)!;
    copies.set(id, (copies.get(id) ?? 0) + 1);
    sqsIds.set(id, [...(sqsIds.get(id) ?? []), message.messageId].sort());
  }
  return { snsIds, copies, sqsIds };
}

describe('fault keys', () => {
  it('the same events published in another order get the same SNS and SQS message ids, and the same duplicate deliveries', () => {
    const forward = publishAll(EVENTS);
    const backward = publishAll([...EVENTS].reverse());

    expect(new Set(forward.copies.values())).toEqual(new Set([1, 2]));
    expect(Object.fromEntries(backward.copies)).toEqual(Object.fromEntries(forward.copies));
    expect(Object.fromEntries(backward.snsIds)).toEqual(Object.fromEntries(forward.snsIds));
    expect(Object.fromEntries(backward.sqsIds)).toEqual(Object.fromEntries(forward.sqsIds));
  });

  it("ids do not depend on the timestamps a body carries (a run's clock starts at the real time it starts)", () => {
    const at = (time: string) => EVENTS.map((event) => JSON.stringify({ ...JSON.parse(event), time }));
    const earlier = publishAll(at('2030-01-01T00:00:00.000Z'));
    const later = publishAll(at('2030-01-01T00:00:07.000Z'));

    expect(Object.fromEntries(later.snsIds)).toEqual(Object.fromEntries(earlier.snsIds));
    expect(Object.fromEntries(later.sqsIds)).toEqual(Object.fromEntries(earlier.sqsIds));
    expect(Object.fromEntries(later.copies)).toEqual(Object.fromEntries(earlier.copies));
  });

  it('identical messages still get distinct SQS message ids', () => {
    const twice = publishAll([EVENTS[0]!, EVENTS[0]!]);
    expect(twice.copies.get('event-0')).toBeGreaterThanOrEqual(2);
    expect(new Set(twice.sqsIds.get('event-0')).size).toBe(twice.copies.get('event-0'));
  });
});
