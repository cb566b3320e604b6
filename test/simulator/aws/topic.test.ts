import { describe, expect, it } from 'vitest';
import { eventIdOf } from '../../../simulator/aws/message-ids';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import { MAX_SNS_MESSAGE_BYTES, SimulatedTopic, SNS_FIFO_DEDUPLICATION_INTERVAL_MS, SnsPublishError, type TopicSubscriptionTarget } from '../../../simulator/aws/topic';
import { FaultPlan, NO_FAULTS } from '../../../simulator/faults/fault-plan';
import type { SubscriptionModel, TopicModel } from '../../../simulator/model/flow-model';
import { frozenClock, makeQueue, queueModel, recordingObserver, START_MS } from './queue-test-kit';

const TOPIC_ARN = 'arn:aws:sns:eu-west-1:000000000000:orders';
const topicModel: TopicModel = { key: 'Stack/Topic', stackName: 'Stack', logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 };

function subscriptionModel(logicalId: string, queue: SimulatedQueue, overrides: Partial<SubscriptionModel> = {}): SubscriptionModel {
  return {
    key: `Stack/${logicalId}`,
    stackName: 'Stack',
    logicalId,
    topic: topicModel.key,
    queue: queue.model.key,
    rawMessageDelivery: false,
    filterPolicyScope: 'MessageAttributes',
    ...overrides,
  };
}

/** A topic with one raw and one enveloped subscription; the `skip` subscription's filter never matches. */
function fanOut(options: { duplicateRate?: number; seed?: string } = {}) {
  const clock = frozenClock();
  const observer = recordingObserver();
  const raw = makeQueue(queueModel('RawQueue'), { clock });
  const enveloped = makeQueue(queueModel('EnvelopedQueue'), { clock });
  const skipped = makeQueue(queueModel('SkippedQueue'), { clock });
  const subscriptions: TopicSubscriptionTarget[] = [
    { model: subscriptionModel('RawSub', raw, { rawMessageDelivery: true }), queue: raw },
    { model: subscriptionModel('EnvelopedSub', enveloped), queue: enveloped },
    { model: subscriptionModel('SkippedSub', skipped), queue: skipped },
  ];
  const faults = new FaultPlan(options.seed ?? 'seed', { ...NO_FAULTS, duplicate: options.duplicateRate ?? 0 });
  const matched: { subscription: string; body: string }[] = [];
  const topic = new SimulatedTopic({
    model: topicModel,
    arn: TOPIC_ARN,
    subscriptions,
    faults,
    clock,
    observer,
    matches: (subscription, message) => {
      matched.push({ subscription: subscription.key, body: message.body });
      return subscription.key !== 'Stack/SkippedSub';
    },
  });
  return { topic, raw, enveloped, skipped, observer, matched };
}

describe('SimulatedTopic', () => {
  const event = JSON.stringify({ id: 'event-1', type: 'com.example.OrderPlaced' });
  const attributes = { kind: { DataType: 'String', StringValue: 'order' } };

  it('with raw delivery, puts the message itself on the queue and its attributes become SQS message attributes', () => {
    const { topic, raw } = fanOut();
    topic.publish(event, { messageAttributes: attributes });
    const [message] = raw.messages();
    expect(message?.body).toBe(event);
    expect(message?.messageAttributes).toEqual(attributes);
    expect(message?.origin).toEqual({ via: 'sns', eventId: 'event-1', subscription: 'Stack/RawSub' });
  });

  it('without raw delivery, puts the SNS notification JSON on the queue', () => {
    const { topic, enveloped } = fanOut();
    const { messageId } = topic.publish(event, { messageAttributes: attributes });
    const [message] = enveloped.messages();
    const notification = JSON.parse(message!.body) as Record<string, unknown>;
    expect(Object.keys(notification)).toEqual([
      'Type',
      'MessageId',
      'TopicArn',
      'Message',
      'Timestamp',
      'SignatureVersion',
      'Signature',
      'SigningCertURL',
      'UnsubscribeURL',
      'MessageAttributes',
    ]);
    expect(notification).toMatchObject({
      Type: 'Notification',
      MessageId: messageId,
      TopicArn: TOPIC_ARN,
      Message: event,
      Timestamp: new Date(START_MS).toISOString(),
      SignatureVersion: '1',
      SigningCertURL: expect.stringMatching(/^https:\/\/sns\.eu-west-1\.amazonaws\.com\//),
      UnsubscribeURL: expect.stringContaining(`SubscriptionArn=${TOPIC_ARN}:`),
      MessageAttributes: { kind: { Type: 'String', Value: 'order' } },
    });
    expect(message?.messageAttributes).toEqual({});
    expect(message?.origin).toEqual({ via: 'sns', eventId: 'event-1', subscription: 'Stack/EnvelopedSub' });
    expect(eventIdOf(message!.body)).toBe('event-1');
  });

  it('leaves MessageAttributes out of the notification when there are none', () => {
    const { topic, enveloped } = fanOut();
    topic.publish('hello');
    const notification = JSON.parse(enveloped.messages()[0]!.body) as Record<string, unknown>;
    expect(notification).not.toHaveProperty('MessageAttributes');
    expect(notification.Message).toBe('hello');
  });

  it('asks the filter of every subscription and reports each fan-out, matched or not', () => {
    const { topic, skipped, observer, matched } = fanOut();
    topic.publish(event);
    expect(matched.map((call) => call.subscription)).toEqual(['Stack/RawSub', 'Stack/EnvelopedSub', 'Stack/SkippedSub']);
    expect(matched.every((call) => call.body === event)).toBe(true);
    expect(skipped.counts().total).toBe(0);
    expect(observer.calls.filter(([method]) => method === 'onFanOut')).toEqual([
      ['onFanOut', 'Stack/RawSub', { eventId: 'event-1', matched: true, copies: 1 }],
      ['onFanOut', 'Stack/EnvelopedSub', { eventId: 'event-1', matched: true, copies: 1 }],
      ['onFanOut', 'Stack/SkippedSub', { eventId: 'event-1', matched: false, copies: 0 }],
    ]);
    expect(observer.calls.some(([method]) => method === 'onFault')).toBe(false);
  });

  it('delivers a second copy, with the same SNS message id, when the fault plan says so', () => {
    const { topic, raw, enveloped, observer } = fanOut({ duplicateRate: 1 });
    topic.publish(event);
    expect(raw.messages().map((message) => message.body)).toEqual([event, event]);
    const [first, second] = enveloped.messages();
    expect(first?.messageId).not.toBe(second?.messageId);
    expect(first?.body).toBe(second?.body);
    expect(observer.calls.filter(([method]) => method === 'onFault')).toEqual([
      ['onFault', 'duplicate-delivery', 'Stack/RawSub'],
      ['onFault', 'duplicate-delivery', 'Stack/EnvelopedSub'],
    ]);
    expect(observer.calls.filter(([method]) => method === 'onFanOut').map(([, , delivery]) => delivery)).toEqual([
      { eventId: 'event-1', matched: true, copies: 2 },
      { eventId: 'event-1', matched: true, copies: 2 },
      { eventId: 'event-1', matched: false, copies: 0 },
    ]);
  });

  it('decides duplicates by seed, subscription and message: the same seed replays the same deliveries', () => {
    const copies = (seed: string): number[] => {
      const { topic, raw } = fanOut({ duplicateRate: 0.5, seed });
      for (let index = 0; index < 20; index += 1) topic.publish(JSON.stringify({ id: `event-${index}` }));
      return raw.messages().map((message) => Number(eventIdOf(message.body)?.slice('event-'.length)));
    };
    const first = copies('seed-a');
    expect(copies('seed-a')).toEqual(first);
    expect(first.length).toBeGreaterThan(20);
    expect(first.length).toBeLessThan(40);
  });

  it('gives deterministic SNS message ids', () => {
    const ids = (): string[] => {
      const { topic } = fanOut();
      return [topic.publish('a').messageId, topic.publish('b').messageId];
    };
    expect(ids()).toEqual(ids());
    expect(new Set(ids()).size).toBe(2);
  });

  it('refuses an empty or oversized message', () => {
    const { topic, raw } = fanOut();
    expect(() => topic.publish('')).toThrow(SnsPublishError);
    expect(() => topic.publish('x'.repeat(MAX_SNS_MESSAGE_BYTES + 1))).toThrow(/262145 bytes long .* at most 262144/);
    expect(raw.counts().total).toBe(0);
  });

  it('refuses a FIFO queue subscription of a standard topic and a subscription of another topic', () => {
    const clock = frozenClock();
    const queue = makeQueue(queueModel('Queue'), { clock });
    const fifoQueue = makeQueue(queueModel('FifoQueue', { fifo: true }), { clock });
    const base = { arn: TOPIC_ARN, faults: new FaultPlan('s', NO_FAULTS), clock, matches: () => true };
    expect(() => new SimulatedTopic({ ...base, model: topicModel, subscriptions: [{ model: subscriptionModel('Sub', fifoQueue), queue: fifoQueue }] })).toThrow(
      /delivers to FIFO queue Stack\/FifoQueue/,
    );
    expect(() => new SimulatedTopic({ ...base, model: topicModel, subscriptions: [{ model: subscriptionModel('Sub', queue, { topic: 'Stack/Other' }), queue }] })).toThrow(
      /belongs to topic Stack\/Other/,
    );
  });
});

describe('SimulatedTopic, FIFO', () => {
  const fifoTopic: TopicModel = { ...topicModel, fifo: true };
  const eventOf = (id: string, aggregate: string): string => JSON.stringify({ id, partitionkey: aggregate });

  function fifoFanOut(options: { duplicateRate?: number } = {}) {
    const clock = frozenClock();
    const first = makeQueue(queueModel('First', { fifo: true }), { clock });
    const second = makeQueue(queueModel('Second', { fifo: true }), { clock });
    const topic = new SimulatedTopic({
      model: fifoTopic,
      arn: `${TOPIC_ARN}.fifo`,
      subscriptions: [
        { model: subscriptionModel('FirstSub', first, { rawMessageDelivery: true }), queue: first },
        { model: subscriptionModel('SecondSub', second, { rawMessageDelivery: true }), queue: second },
      ],
      faults: new FaultPlan('seed', { ...NO_FAULTS, duplicate: options.duplicateRate ?? 0 }),
      clock,
      matches: () => true,
    });
    return { topic, first, second, clock };
  }

  it('delivers each message to every FIFO queue with its group and deduplication id, each group in publish order', () => {
    const { topic, first, second } = fifoFanOut();
    topic.publish(eventOf('a-1', 'A'), { messageGroupId: 'A', messageDeduplicationId: 'a-1' });
    topic.publish(eventOf('b-1', 'B'), { messageGroupId: 'B', messageDeduplicationId: 'b-1' });
    topic.publish(eventOf('a-2', 'A'), { messageGroupId: 'A', messageDeduplicationId: 'a-2' });
    for (const queue of [first, second]) {
      const ids = (received: readonly { readonly attributes: Readonly<Record<string, string>> }[]) =>
        received.map(({ attributes }) => [attributes.MessageGroupId, attributes.MessageDeduplicationId]);
      const head = queue.receive(1);
      expect(ids(head)).toEqual([['A', 'a-1']]);
      // group A's second message waits while its first is in flight
      expect(ids(queue.receive(10))).toEqual([['B', 'b-1']]);
      queue.delete(head[0]!.receiptHandle);
      expect(ids(queue.receive(10))).toEqual([['A', 'a-2']]);
    }
  });

  it('answers a deduplication id seen in the last 5 minutes with the first message id and delivers nothing; later it delivers again', () => {
    const { topic, first, clock } = fifoFanOut();
    const { messageId } = topic.publish(eventOf('a-1', 'A'), { messageGroupId: 'A', messageDeduplicationId: 'a-1' });
    expect(topic.publish(eventOf('a-1', 'A'), { messageGroupId: 'A', messageDeduplicationId: 'a-1' }).messageId).toBe(messageId);
    expect(first.messages()).toHaveLength(1);
    clock.advanceBy(SNS_FIFO_DEDUPLICATION_INTERVAL_MS + 1);
    topic.publish(eventOf('a-1', 'A'), { messageGroupId: 'A', messageDeduplicationId: 'a-1' });
    // the queue's own 5 minutes have passed too: the message is new to both
    expect(first.messages()).toHaveLength(2);
  });

  it('a duplicate delivery the plan injects reaches the FIFO queue with the same deduplication id, which the queue drops', () => {
    const { topic, first } = fifoFanOut({ duplicateRate: 1 });
    topic.publish(eventOf('a-1', 'A'), { messageGroupId: 'A', messageDeduplicationId: 'a-1' });
    expect(first.messages()).toHaveLength(1);
  });

  it('refuses a publish without a group id, or without a deduplication id on a topic without content-based deduplication', () => {
    const { topic } = fifoFanOut();
    expect(() => topic.publish(eventOf('a-1', 'A'), { messageDeduplicationId: 'a-1' })).toThrow(/MessageGroupId parameter is required/);
    expect(() => topic.publish(eventOf('a-1', 'A'), { messageGroupId: 'A' })).toThrow(/MessageDeduplicationId is required/);
  });
});

describe('SimulatedTopic delivery failures, under the SQS delivery policy', () => {
  const event = JSON.stringify({ id: 'event-2', type: 'com.example.OrderPlaced' });

  function failing(rate: number, withDeadLetterQueue: boolean) {
    const clock = frozenClock();
    const observer = { ...recordingObserver(), undeliverable: [] as { subscription: string; reason: string }[] };
    observer.onUndeliverable = (subscription, message) => void observer.undeliverable.push({ subscription, reason: message.reason });
    const queue = makeQueue(queueModel('Queue'), { clock });
    const deadLetterQueue = makeQueue(queueModel('SubscriptionDlq'), { clock });
    const topic = new SimulatedTopic({
      model: topicModel,
      arn: TOPIC_ARN,
      subscriptions: [{ model: subscriptionModel('Sub', queue), queue, ...(withDeadLetterQueue ? { deadLetterQueue } : {}) }],
      faults: new FaultPlan('sns-failures', { ...NO_FAULTS, snsDeliveryFailure: rate }),
      clock,
      observer,
      matches: () => true,
    });
    return { topic, queue, deadLetterQueue, observer };
  }

  it('retries failed attempts and delivers once one succeeds, counting the failed attempts as faults', () => {
    const { topic, queue, observer } = failing(0.9, true);
    for (let index = 0; index < 20; index += 1) topic.publish(JSON.stringify({ id: `event-${index}`, type: 't' }));
    expect(queue.messages()).toHaveLength(20);
    const failed = observer.calls
      .filter(([method, kind]) => method === 'onFault' && kind === 'sns-delivery-failure')
      .reduce((sum, [, , , detail]) => sum + ((detail as { count?: number } | undefined)?.count ?? 1), 0);
    // about 9 failed attempts per delivery at rate 0.9
    expect(failed).toBeGreaterThan(20 * 4);
  });

  it('puts a message on the subscription dead-letter queue, with why, once every attempt of the policy failed', () => {
    const { topic, queue, deadLetterQueue, observer } = failing(1, true);
    topic.publish(event);
    expect(queue.messages()).toEqual([]);
    const [dead] = deadLetterQueue.messages();
    expect(dead?.origin).toEqual({
      via: 'sns-dead-letter',
      eventId: 'event-2',
      subscription: 'Stack/Sub',
      deliveryFailure: 'every delivery attempt failed (injected) until SNS\'s delivery policy for SQS endpoints ran out (100015 attempts over 23 days)',
    });
    expect(observer.calls).toContainEqual(['onFault', 'sns-delivery-failure', 'Stack/Sub', { count: 100_015 }]);
    expect(observer.calls).toContainEqual(['onFanOut', 'Stack/Sub', { eventId: 'event-2', matched: true, copies: 0 }]);
  });

  it('loses (and reports) what it cannot deliver when the subscription has no dead-letter queue', () => {
    const { topic, queue, observer } = failing(1, false);
    topic.publish(event);
    expect(queue.messages()).toEqual([]);
    expect(observer.undeliverable).toEqual([{ subscription: 'Stack/Sub', reason: expect.stringContaining('ran out (100015 attempts over 23 days); and the subscription has no dead-letter queue') }]);
  });
});

describe('SimulatedTopic: PublishBatch limits (issue 30: the relay publishes each batch with one PublishBatch)', () => {
  const topicOf = (maximumMessageSize: number) =>
    new SimulatedTopic({
      model: { ...topicModel, maximumMessageSize },
      arn: TOPIC_ARN,
      subscriptions: [],
      faults: new FaultPlan('seed', NO_FAULTS),
      clock: frozenClock(),
      matches: () => true,
    });

  it("refuses a batch whose messages together exceed the topic's MaximumMessageSize, as SNS does (BatchRequestTooLong)", () => {
    const topic = topicOf(262_144);
    const tenOf30k = Array.from({ length: 10 }, () => 'x'.repeat(30_000));
    expect(topic.refusesBatch(tenOf30k)).toBe(
      'BatchRequestTooLong: a PublishBatch of 10 messages of 300,000 bytes together to topic Stack/Topic, whose MaximumMessageSize is 262,144 bytes',
    );
    expect(topic.refusesBatch(tenOf30k.slice(0, 8))).toBeUndefined();
    // a topic of 1 MiB takes all ten
    expect(topicOf(1_048_576).refusesBatch(tenOf30k)).toBeUndefined();
  });

  it('refuses more than 10 entries (TooManyEntriesInBatchRequest)', () => {
    expect(topicOf(262_144).refusesBatch(Array.from({ length: 11 }, () => 'x'))).toMatch(/^TooManyEntriesInBatchRequest: a PublishBatch of 11 messages .* at most 10$/);
  });
});
