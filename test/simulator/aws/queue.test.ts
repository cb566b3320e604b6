import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { FIFO_DEDUPLICATION_INTERVAL_MS } from '../../../simulator/aws/queue';
import { SIMULATED_SENDER_ID } from '../../../simulator/aws/sqs-messages';
import { SqsError } from '../../../simulator/aws/sqs-errors';
import { frozenClock, makeQueue, queueModel, recordingObserver, START_MS } from './queue-test-kit';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const md5 = (text: string): string => createHash('md5').update(text, 'utf8').digest('hex');

describe('SimulatedQueue: send, receive, visibility', () => {
  it('receives a sent message with its digest, attributes and origin, then hides it for the visibility timeout', () => {
    const clock = frozenClock();
    const observer = recordingObserver();
    const queue = makeQueue(queueModel('Orders', { visibilityTimeoutSeconds: 180 }), { clock, observer });
    const origin = { via: 'send-message' as const, eventId: 'e1' };
    const sent = queue.send({ body: '{"id":"e1"}', messageAttributes: { kind: { DataType: 'String', StringValue: 'x' } }, origin });

    expect(sent.messageId).toMatch(UUID);
    expect(sent.md5OfBody).toBe(md5('{"id":"e1"}'));
    expect(sent.md5OfMessageAttributes).toMatch(/^[0-9a-f]{32}$/);
    expect(observer.calls).toEqual([['onEnqueued', 'Stack/Orders', { messageId: sent.messageId, origin }]]);

    clock.advanceBy(5_000);
    const [message, ...others] = queue.receive(10);
    expect(others).toEqual([]);
    expect(message).toMatchObject({ messageId: sent.messageId, body: '{"id":"e1"}', md5OfBody: sent.md5OfBody, receiveCount: 1, origin });
    expect(message?.messageAttributes).toEqual({ kind: { DataType: 'String', StringValue: 'x' } });
    expect(message?.attributes).toEqual({
      ApproximateReceiveCount: '1',
      SentTimestamp: String(START_MS),
      SenderId: SIMULATED_SENDER_ID,
      ApproximateFirstReceiveTimestamp: String(START_MS + 5_000),
    });
    expect(queue.counts()).toEqual({ visible: 0, inFlight: 1, total: 1 });
    expect(queue.nextVisibleAt()).toBe(START_MS + 5_000 + 180_000);
    expect(queue.receive(10)).toEqual([]);

    clock.advanceBy(179_999);
    expect(queue.receive(10)).toEqual([]);
    clock.advanceBy(1);
    const [again] = queue.receive(10);
    expect(again?.receiveCount).toBe(2);
    expect(again?.attributes.ApproximateReceiveCount).toBe('2');
    expect(again?.attributes.ApproximateFirstReceiveTimestamp).toBe(String(START_MS + 5_000));
    expect(again?.receiptHandle).not.toBe(message?.receiptHandle);
  });

  it('returns at most maxMessages, oldest first, and refuses a maxMessages that is not a positive integer', () => {
    const queue = makeQueue(queueModel('Orders'), { clock: frozenClock() });
    const ids = ['a', 'b', 'c'].map((body) => queue.send({ body, origin: { via: 'send-message' } }).messageId);
    expect(queue.receive(2).map((message) => message.messageId)).toEqual(ids.slice(0, 2));
    expect(queue.receive(2).map((message) => message.messageId)).toEqual(ids.slice(2));
    expect(queue.nextVisibleAt()).toBe(START_MS + 30_000);
    expect(() => queue.receive(0)).toThrow(/maxMessages must be a positive integer, got 0/);
  });

  it('has no next visible time when nothing is in flight', () => {
    const queue = makeQueue(queueModel('Orders'), { clock: frozenClock() });
    queue.send({ body: 'a', origin: { via: 'send-message' } });
    expect(queue.nextVisibleAt()).toBeUndefined();
    expect(queue.counts()).toEqual({ visible: 1, inFlight: 0, total: 1 });
  });

  it('gives the same message ids for the same operations (a seeded run replays), and different ones per queue', () => {
    const run = (name: string): string[] => {
      const queue = makeQueue(queueModel(name), { clock: frozenClock() });
      return ['a', 'b'].map((body) => queue.send({ body, origin: { via: 'send-message' } }).messageId);
    };
    expect(run('Orders')).toEqual(run('Orders'));
    expect(run('Orders')[0]).not.toBe(run('Billing')[0]);
    expect(new Set(run('Orders')).size).toBe(2);
  });
});

describe('SimulatedQueue: delete and receipt handles', () => {
  it('deletes with the latest receipt handle and reports it', () => {
    const observer = recordingObserver();
    const queue = makeQueue(queueModel('Orders'), { clock: frozenClock(), observer });
    const origin = { via: 'sns' as const, eventId: 'e1', subscription: 'Stack/Sub' };
    queue.send({ body: 'a', origin });
    const [message] = queue.receive(1);
    expect(queue.delete(message!.receiptHandle)).toBe(true);
    expect(observer.calls.at(-1)).toEqual(['onDeleted', 'Stack/Orders', { messageId: message!.messageId, origin, receiveCount: 1 }]);
    expect(queue.counts().total).toBe(0);
    // deleting again succeeds on SQS but there is nothing left to delete
    expect(queue.delete(message!.receiptHandle)).toBe(false);
  });

  it('receiveAgain hands the same message to a second poller: the receive count grows and only the new handle deletes', () => {
    const clock = frozenClock();
    const queue = makeQueue(queueModel('Orders'), { clock });
    queue.send({ body: 'a', origin: { via: 'send-message' } });
    const [first] = queue.receive(1);
    clock.advanceBy(1_000);
    const second = queue.receiveAgain(first!);
    expect(second.messageId).toBe(first!.messageId);
    expect(second.receiveCount).toBe(2);
    expect(second.attributes.ApproximateReceiveCount).toBe('2');
    expect(second.receiptHandle).not.toBe(first!.receiptHandle);
    expect(queue.nextVisibleAt()).toBe(START_MS + 1_000 + 30_000);

    expect(queue.delete(first!.receiptHandle)).toBe(false);
    expect(queue.counts().total).toBe(1);
    expect(queue.delete(second.receiptHandle)).toBe(true);
    expect(queue.counts().total).toBe(0);
    expect(() => queue.receiveAgain(first!)).toThrow(/no longer on queue Stack\/Orders/);
  });

  it('deletes after the visibility timeout ran out if no one received the message since', () => {
    const clock = frozenClock();
    const queue = makeQueue(queueModel('Orders'), { clock });
    queue.send({ body: 'a', origin: { via: 'send-message' } });
    const [message] = queue.receive(1);
    clock.advanceBy(60_000);
    expect(queue.delete(message!.receiptHandle)).toBe(true);
  });

  it('refuses a receipt handle it never issued, as SQS does (ReceiptHandleIsInvalid)', () => {
    const queue = makeQueue(queueModel('Orders'), { clock: frozenClock() });
    const attempt = (): boolean => queue.delete('not-a-handle');
    expect(attempt).toThrow(SqsError);
    expect(attempt).toThrow(/never issued by queue Orders/);
  });
});

describe('SimulatedQueue: redrive to the dead-letter queue', () => {
  it('moves a message received maxReceiveCount times to the dead-letter queue instead of receiving it again', () => {
    const clock = frozenClock();
    const observer = recordingObserver();
    const deadLetterQueue = makeQueue(queueModel('OrdersDlq', { messageRetentionSeconds: 1_209_600 }), { clock, observer });
    const queue = makeQueue(queueModel('Orders', { redrive: { deadLetterQueue: 'Stack/OrdersDlq', maxReceiveCount: 2 } }), { clock, observer, deadLetterQueue });
    const origin = { via: 'sns' as const, eventId: 'e1', subscription: 'Stack/Sub' };
    const { messageId } = queue.send({ body: 'a', messageAttributes: { k: { DataType: 'String', StringValue: 'v' } }, origin });

    for (let receive = 1; receive <= 2; receive += 1) {
      expect(queue.receive(10).map((message) => message.receiveCount)).toEqual([receive]);
      clock.advanceBy(30_000);
    }
    expect(queue.receive(10)).toEqual([]);
    expect(queue.counts().total).toBe(0);

    const redrivenOrigin = { ...origin, via: 'redrive', redrivenFrom: { queue: 'Stack/Orders', receiveCount: 2 } };
    expect(observer.calls.slice(-2)).toEqual([
      ['onEnqueued', 'Stack/OrdersDlq', { messageId, origin: redrivenOrigin }],
      ['onRedriven', 'Stack/Orders', { messageId, origin, receiveCount: 2, deadLetterQueue: 'Stack/OrdersDlq' }],
    ]);
    const [stored] = deadLetterQueue.messages();
    expect(stored).toEqual({ messageId, body: 'a', messageAttributes: { k: { DataType: 'String', StringValue: 'v' } }, receiveCount: 2, sentAt: START_MS, origin: redrivenOrigin });
    const [dead] = deadLetterQueue.receive(1);
    expect(dead?.attributes.DeadLetterQueueSourceArn).toBe('arn:aws:sqs:us-east-1:000000000000:Orders');
    expect(dead?.attributes.SentTimestamp).toBe(String(START_MS));
  });

  it('never redrives a message that was deleted in time', () => {
    const clock = frozenClock();
    const deadLetterQueue = makeQueue(queueModel('OrdersDlq'), { clock });
    const queue = makeQueue(queueModel('Orders', { redrive: { deadLetterQueue: 'Stack/OrdersDlq', maxReceiveCount: 1 } }), { clock, deadLetterQueue });
    queue.send({ body: 'a', origin: { via: 'send-message' } });
    const [message] = queue.receive(1);
    expect(queue.delete(message!.receiptHandle)).toBe(true);
    clock.advanceBy(60_000);
    expect(queue.receive(10)).toEqual([]);
    expect(deadLetterQueue.counts().total).toBe(0);
  });

  it('refuses a dead-letter queue that does not match the redrive policy', () => {
    const clock = frozenClock();
    const other = makeQueue(queueModel('Other'), { clock });
    const redriving = queueModel('Orders', { redrive: { deadLetterQueue: 'Stack/OrdersDlq', maxReceiveCount: 3 } });
    expect(() => makeQueue(redriving, { clock })).toThrow(/redrive policy to Stack\/OrdersDlq, but no dead-letter queue was given/);
    expect(() => makeQueue(redriving, { clock, deadLetterQueue: other })).toThrow(/redrives to Stack\/OrdersDlq, but the dead-letter queue given is Stack\/Other/);
    expect(() => makeQueue(queueModel('Plain'), { clock, deadLetterQueue: other })).toThrow(/has no redrive policy/);
    const fifoDlq = makeQueue(queueModel('OrdersDlq', { fifo: true }), { clock });
    expect(() => makeQueue(redriving, { clock, deadLetterQueue: fifoDlq })).toThrow(/must be too/);
  });

  it('refuses settings outside the bounds SQS allows', () => {
    const clock = frozenClock();
    expect(() => makeQueue(queueModel('Orders', { visibilityTimeoutSeconds: 43_201 }), { clock })).toThrow(/VisibilityTimeout of queue Stack\/Orders must be an integer from 0 to 43200, got 43201/);
    expect(() => makeQueue(queueModel('Orders', { messageRetentionSeconds: 59 }), { clock })).toThrow(/MessageRetentionPeriod .* from 60 to 1209600, got 59/);
  });
});

describe('SimulatedQueue: retention', () => {
  it('drops a message that outlived the retention period and reports it', () => {
    const clock = frozenClock();
    const observer = recordingObserver();
    const queue = makeQueue(queueModel('Orders', { messageRetentionSeconds: 60 }), { clock, observer });
    const { messageId } = queue.send({ body: 'old', origin: { via: 'send-message', eventId: 'e1' } });
    clock.advanceBy(30_000);
    queue.send({ body: 'young', origin: { via: 'send-message' } });
    queue.receive(10);
    clock.advanceBy(30_000);
    expect(queue.counts()).toEqual({ visible: 1, inFlight: 0, total: 1 });
    expect(queue.messages().map((message) => message.body)).toEqual(['young']);
    // reported with the time its retention ran out (sent at the start, 60 s retention)
    expect(observer.calls.filter(([method]) => method === 'onExpired')).toEqual([['onExpired', 'Stack/Orders', { messageId, origin: { via: 'send-message', eventId: 'e1' }, expiredAt: clock.now() }]]);
  });

  it('keeps the enqueue time of a message moved to a standard dead-letter queue, so it expires there on time', () => {
    const clock = frozenClock();
    const deadLetterQueue = makeQueue(queueModel('OrdersDlq', { messageRetentionSeconds: 120 }), { clock });
    const queue = makeQueue(queueModel('Orders', { redrive: { deadLetterQueue: 'Stack/OrdersDlq', maxReceiveCount: 1 } }), { clock, deadLetterQueue });
    queue.send({ body: 'a', origin: { via: 'send-message' } });
    queue.receive(1);
    clock.advanceBy(100_000);
    queue.receive(1);
    expect(deadLetterQueue.counts().total).toBe(1);
    clock.advanceBy(20_000);
    expect(deadLetterQueue.counts().total).toBe(0);
  });
});

describe('SimulatedQueue: FIFO', () => {
  const fifo = (): ReturnType<typeof makeQueue> => makeQueue(queueModel('Orders', { fifo: true, queueName: 'orders.fifo' }), { clock: frozenClock() });

  it('keeps order within a group and delivers nothing of a group while one of its messages is in flight', () => {
    const queue = fifo();
    for (const [body, messageGroupId] of [['a1', 'A'], ['a2', 'A'], ['b1', 'B']] as const) {
      queue.send({ body, messageGroupId, messageDeduplicationId: body, origin: { via: 'send-message' } });
    }
    const [a1] = queue.receive(1);
    expect(a1?.body).toBe('a1');
    expect(a1?.attributes).toMatchObject({ MessageGroupId: 'A', MessageDeduplicationId: 'a1', SequenceNumber: '00000000000000000001' });
    expect(queue.receive(10).map((message) => message.body)).toEqual(['b1']);
    expect(queue.receive(10)).toEqual([]);
    queue.delete(a1!.receiptHandle);
    expect(queue.receive(10).map((message) => message.body)).toEqual(['a2']);
  });

  it('accepts but does not enqueue a message whose deduplication id it saw in the last 5 minutes', () => {
    const clock = frozenClock();
    const queue = makeQueue(queueModel('Orders', { fifo: true, contentBasedDeduplication: true }), { clock });
    const first = queue.send({ body: 'a', messageGroupId: 'A', messageDeduplicationId: 'd1', origin: { via: 'send-message' } });
    const again = queue.send({ body: 'a', messageGroupId: 'A', messageDeduplicationId: 'd1', origin: { via: 'send-message' } });
    expect(again).toEqual(first);
    // without a deduplication id the body's SHA-256 is the id (content-based deduplication)
    const byContent = queue.send({ body: 'b', messageGroupId: 'A', origin: { via: 'send-message' } });
    expect(queue.send({ body: 'b', messageGroupId: 'B', origin: { via: 'send-message' } })).toEqual(byContent);
    expect(queue.counts().total).toBe(2);
    clock.advanceBy(FIFO_DEDUPLICATION_INTERVAL_MS);
    expect(queue.send({ body: 'a', messageGroupId: 'A', messageDeduplicationId: 'd1', origin: { via: 'send-message' } }).messageId).not.toBe(first.messageId);
    expect(queue.counts().total).toBe(3);
  });

  it('requires a message group id, and refuses receiveAgain (SQS never hands an in-flight FIFO message to a second poller)', () => {
    const queue = fifo();
    expect(() => queue.send({ body: 'a', origin: { via: 'send-message' } })).toThrow(/must contain the parameter MessageGroupId/);
    queue.send({ body: 'a', messageGroupId: 'A', messageDeduplicationId: 'a', origin: { via: 'send-message' } });
    const [message] = queue.receive(1);
    expect(() => queue.receiveAgain(message!)).toThrow(/is FIFO/);
  });

  it('refuses a send without MessageGroupId as SQS does (MissingParameter): "If you do not provide a MessageGroupId when sending a message to a FIFO queue, the action fails"', () => {
    const attempt = (): unknown => fifo().send({ body: 'a', messageDeduplicationId: 'd', origin: { via: 'send-message' } });
    expect(attempt).toThrow(SqsError);
    expect(attempt).toThrow(expect.objectContaining({ queryCode: 'MissingParameter', httpStatus: 400, message: expect.stringMatching(/must contain the parameter MessageGroupId/) }));
  });

  it('refuses a send without MessageDeduplicationId to a queue without ContentBasedDeduplication, as SQS does (InvalidParameterValue)', () => {
    // SendMessage API reference: "If you don't provide a MessageDeduplicationId and the queue doesn't have
    // ContentBasedDeduplication set, the action fails with an error"; SQS says the sentence quoted below
    const queue = makeQueue(queueModel('OrdersDlq', { fifo: true, queueName: 'orders-dlq.fifo' }), { clock: frozenClock() });
    const attempt = (): unknown => queue.send({ body: 'a', messageGroupId: 'A', origin: { via: 'send-message' } });
    expect(attempt).toThrow(
      expect.objectContaining({ queryCode: 'InvalidParameterValue', message: expect.stringMatching(/^The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly/) }),
    );
    expect(queue.counts().total).toBe(0);
    queue.send({ body: 'a', messageGroupId: 'A', messageDeduplicationId: 'd', origin: { via: 'send-message' } });
    expect(queue.counts().total).toBe(1);
  });

  it('refuses a deduplication id on a standard queue', () => {
    const queue = makeQueue(queueModel('Orders'), { clock: frozenClock() });
    expect(() => queue.send({ body: 'a', messageDeduplicationId: 'd', origin: { via: 'send-message' } })).toThrow(/FIFO queues only/);
  });
});

describe('SimulatedQueue: what SQS refuses', () => {
  const queue = makeQueue(queueModel('Orders'), { clock: frozenClock() });
  const send = (body: string, messageAttributes?: Record<string, { DataType: string; StringValue?: string; BinaryValue?: string }>) => () =>
    queue.send({ body, ...(messageAttributes === undefined ? {} : { messageAttributes }), origin: { via: 'send-message' } });

  it('refuses empty bodies, disallowed characters and oversized messages', () => {
    expect(send('')).toThrow(/at least one character/);
    expect(send('bell \u0007')).toThrow(expect.objectContaining({ errorName: 'InvalidMessageContents' }));
    expect(send('x'.repeat(1_048_577))).toThrow(/1048577 bytes long .* at most 1048576/);
  });

  it('refuses malformed message attributes', () => {
    const many = Object.fromEntries(Array.from({ length: 11 }, (_, index) => [`a${index}`, { DataType: 'String', StringValue: 'v' }]));
    expect(send('b', many)).toThrow(/at most 10 message attributes, got 11/);
    expect(send('b', { 'AWS.x': { DataType: 'String', StringValue: 'v' } })).toThrow(/reserved/);
    expect(send('b', { n: { DataType: 'Number', StringValue: 'ten' } })).toThrow(/must hold a number, got 'ten'/);
    expect(send('b', { s: { DataType: 'String' } })).toThrow(/non-empty StringValue/);
    expect(send('b', { t: { DataType: 'Date', StringValue: 'x' } })).toThrow(/must be String, Number or Binary/);
    expect(queue.counts().total).toBe(0);
  });
});
