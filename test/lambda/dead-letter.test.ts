import { SQSClient } from '@aws-sdk/client-sqs';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { execFileSync } from 'node:child_process';
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from 'vitest';
import { unpairedSurrogate } from '../../lambda/unicode';
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

describe('deadLetterAttributes sanitises what SQS would refuse', () => {
  test('control characters and unpaired surrogates become U+FFFD; tab, newline and carriage return stay', () => {
    const attributes = deadLetterAttributes({ ...deadLetter, errorMessage: 'bad\u0000byte\u001b[31m\ud800 ok\ttab\nline\r', eventId: 'e\u0007\uffff1' });
    expect(attributes[DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE]?.StringValue).toBe('bad\ufffdbyte\ufffd[31m\ufffd ok\ttab\nline\r');
    expect(attributes[DEAD_LETTER_ATTRIBUTE.EVENT_ID]?.StringValue).toBe('e\ufffd\ufffd1');
  });

  test('every string attribute is bounded and never empty, a truncation never splits a surrogate pair', () => {
    const attributes = deadLetterAttributes({ ...deadLetter, errorName: '', subscriber: 's'.repeat(3000), eventId: `${'e'.repeat(MAX_ERROR_MESSAGE_CHARACTERS - 2)}😀😀` });
    expect(attributes[DEAD_LETTER_ATTRIBUTE.ERROR_NAME]?.StringValue).toBe('(empty)');
    expect(attributes[DEAD_LETTER_ATTRIBUTE.SUBSCRIBER]?.StringValue).toHaveLength(MAX_ERROR_MESSAGE_CHARACTERS);
    const eventId = attributes[DEAD_LETTER_ATTRIBUTE.EVENT_ID]?.StringValue ?? '';
    expect(unpairedSurrogate(eventId)).toBeUndefined();
    expect(eventId.endsWith('…')).toBe(true);
  });
});

describe('the dead-letter module', () => {
  test('does not load @aws-sdk/client-sqs until a dead letter is sent (it is on every consumer\'s cold start)', () => {
    const script =
      "require('./lambda/consumer/create-consumer.ts');" +
      "const loaded = () => Object.keys(require.cache).some((path) => path.includes('client-sqs'));" +
      "console.log(JSON.stringify({ atStart: loaded() }));";
    const output = execFileSync(process.execPath, ['--require', 'tsx/cjs', '-e', script], { encoding: 'utf8', env: { ...process.env, AWS_SDK_JS_SUPPRESS_NODE_VERSION_WARNING: '1' } });
    expect(JSON.parse(output.trim())).toEqual({ atStart: false });
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

  describe('without a client: built the way the rest of the runtime builds its clients', () => {
    afterEach(() => vi.unstubAllEnvs());

    test('region from the environment, AWS_ENDPOINT_URL_SQS honoured, the queue URL host not used instead, and no SDK warning', async () => {
      vi.stubEnv('AWS_REGION', 'eu-west-1');
      vi.stubEnv('AWS_ACCESS_KEY_ID', 'local');
      vi.stubEnv('AWS_SECRET_ACCESS_KEY', 'local');
      vi.stubEnv('AWS_ENDPOINT_URL_SQS', endpoint);
      const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);
      const before = requests.length;
      const queueUrl = 'https://sqs.eu-west-1.amazonaws.com/000000000000/consumer-dlq';

      await new SqsDeadLetterPublisher({ queueUrl }).publish(deadLetter);

      expect(requests.length - before).toBe(1);
      expect(requests.at(-1)?.body.QueueUrl).toBe(queueUrl);
      expect(warn).not.toHaveBeenCalled();
      warn.mockRestore();
    });
  });
});
