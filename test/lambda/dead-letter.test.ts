import { SQSClient } from '@aws-sdk/client-sqs';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DEAD_LETTER_ATTRIBUTE, deadLetterAttributes, MAX_ERROR_MESSAGE_CHARACTERS, SqsDeadLetterPublisher, type DeadLetter } from '../../lambda/consumer/dead-letter';

const deadLetter: DeadLetter = {
  body: '{"not":"an envelope"}',
  errorName: 'MalformedEnvelopeError',
  errorMessage: "malformed event envelope: field 'specversion' must be '1.0', but was missing",
  subscriber: 'billing',
  sourceMessageId: 'sqs-1',
  approximateReceiveCount: 2,
};

describe('deadLetterAttributes', () => {
  test('carries the reason, subscriber, source message id and receive count', () => {
    expect(deadLetterAttributes({ ...deadLetter, eventId: 'e1' })).toEqual({
      [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: { DataType: 'String', StringValue: 'MalformedEnvelopeError' },
      [DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE]: { DataType: 'String', StringValue: deadLetter.errorMessage },
      [DEAD_LETTER_ATTRIBUTE.SUBSCRIBER]: { DataType: 'String', StringValue: 'billing' },
      [DEAD_LETTER_ATTRIBUTE.SOURCE_MESSAGE_ID]: { DataType: 'String', StringValue: 'sqs-1' },
      [DEAD_LETTER_ATTRIBUTE.APPROXIMATE_RECEIVE_COUNT]: { DataType: 'Number', StringValue: '2' },
      [DEAD_LETTER_ATTRIBUTE.EVENT_ID]: { DataType: 'String', StringValue: 'e1' },
    });
  });

  test('truncates a long error message and never sends an empty attribute value', () => {
    const long = deadLetterAttributes({ ...deadLetter, errorMessage: 'x'.repeat(5000) })[DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE]?.StringValue ?? '';
    expect(long).toHaveLength(MAX_ERROR_MESSAGE_CHARACTERS);
    expect(long.endsWith('…')).toBe(true);
    expect(deadLetterAttributes({ ...deadLetter, errorMessage: '' })[DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE]?.StringValue).toBe('(no message)');
  });
});

describe('SqsDeadLetterPublisher', () => {
  // a stand-in SQS endpoint (SQS, not DynamoDB), recording what the SDK sends
  const requests: Array<{ target: string; body: Record<string, unknown> }> = [];
  let server: Server;
  let endpoint: string;

  beforeAll(async () => {
    server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>;
        requests.push({ target: String(request.headers['x-amz-target']), body });
        const md5 = createHash('md5').update(String(body.MessageBody)).digest('hex');
        response.writeHead(200, { 'Content-Type': 'application/x-amz-json-1.0' });
        response.end(JSON.stringify({ MessageId: 'dlq-1', MD5OfMessageBody: md5 }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  test('sends the original body to the queue URL with the reason as message attributes', async () => {
    const client = new SQSClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const queueUrl = `${endpoint}/000000000000/consumer-dlq`;
    await new SqsDeadLetterPublisher({ queueUrl, client }).publish(deadLetter);
    expect(requests).toHaveLength(1);
    expect(requests[0]?.target).toBe('AmazonSQS.SendMessage');
    expect(requests[0]?.body).toEqual({ QueueUrl: queueUrl, MessageBody: deadLetter.body, MessageAttributes: deadLetterAttributes(deadLetter) });
  });
});
