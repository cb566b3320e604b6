import { describe, expect, test } from 'vitest';
import { md5OfMessageAttributes } from '../../../simulator/aws/sqs-md5';
import { lambdaSqsEvent } from '../../../simulator/lambda/sqs-event';
import { frozenClock, makeQueue, queueModel, START_MS } from '../aws/queue-test-kit';

describe('lambdaSqsEvent', () => {
  test('builds the records Lambda delivers: attributes, camel-case message attributes, md5s, source and region', () => {
    const queue = makeQueue(queueModel('Orders'), { clock: frozenClock() });
    const attributes = { kind: { DataType: 'String', StringValue: 'order' }, blob: { DataType: 'Binary', BinaryValue: 'AQID' } };
    queue.send({ body: 'with attributes', messageAttributes: attributes, origin: { via: 'send-message' } });
    queue.send({ body: 'plain', origin: { via: 'send-message' } });
    const received = queue.receive(2);

    const event = lambdaSqsEvent(received, queue.address.arn, 'eu-central-1');

    expect(event.Records).toHaveLength(2);
    expect(event.Records[0]).toEqual({
      messageId: received[0].messageId,
      receiptHandle: received[0].receiptHandle,
      body: 'with attributes',
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(START_MS),
        SenderId: expect.any(String),
        ApproximateFirstReceiveTimestamp: String(START_MS),
      },
      messageAttributes: {
        kind: { stringValue: 'order', stringListValues: [], binaryListValues: [], dataType: 'String' },
        blob: { binaryValue: 'AQID', stringListValues: [], binaryListValues: [], dataType: 'Binary' },
      },
      md5OfMessageAttributes: md5OfMessageAttributes(attributes),
      md5OfBody: received[0].md5OfBody,
      eventSource: 'aws:sqs',
      eventSourceARN: 'arn:aws:sqs:us-east-1:000000000000:Orders',
      awsRegion: 'eu-central-1',
    });
    expect(event.Records[1].messageAttributes).toEqual({});
    expect(event.Records[1]).not.toHaveProperty('md5OfMessageAttributes');
  });

  test('ApproximateReceiveCount is the receive count of that delivery', () => {
    const clock = frozenClock();
    const queue = makeQueue(queueModel('Orders'), { clock });
    queue.send({ body: 'again', origin: { via: 'send-message' } });
    queue.receive(1);
    clock.advanceBy(30_000);
    const [second] = queue.receive(1);
    expect(lambdaSqsEvent([second], queue.address.arn, 'us-east-1').Records[0].attributes.ApproximateReceiveCount).toBe('2');
  });
});
