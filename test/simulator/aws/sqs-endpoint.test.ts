import {
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  PurgeQueueCommand,
  QueueDoesNotExist,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
  UnsupportedOperation,
  type SQSClientConfig,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import { md5OfMessageAttributes } from '../../../simulator/aws/sqs-md5';
import { startSqsEndpoint, type SqsEndpoint } from '../../../simulator/aws/sqs-endpoint';
import { frozenClock, makeQueue, queueModel } from './queue-test-kit';

const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const clientConfig: SQSClientConfig = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'simulated', secretAccessKey: 'simulated' },
  maxAttempts: 1,
  logger: silentLogger,
};

describe('the SQS endpoint, used by the real @aws-sdk/client-sqs', () => {
  const clock = frozenClock();
  const queues = new Map<string, SimulatedQueue>();
  let server: SqsEndpoint;
  let client: SQSClient;
  let orders: SimulatedQueue;
  let ordersFifo: SimulatedQueue;

  beforeAll(async () => {
    server = await startSqsEndpoint({ resolveQueue: (url) => queues.get(url) });
    const deadLetters = makeQueue(queueModel('OrdersDlq'), { clock, baseUrl: server.endpoint });
    orders = makeQueue(queueModel('Orders', { visibilityTimeoutSeconds: 180, redrive: { deadLetterQueue: 'Stack/OrdersDlq', maxReceiveCount: 5 } }), {
      clock,
      baseUrl: server.endpoint,
      deadLetterQueue: deadLetters,
    });
    ordersFifo = makeQueue(queueModel('OrdersFifo', { fifo: true, queueName: 'orders.fifo' }), { clock, baseUrl: server.endpoint });
    for (const queue of [deadLetters, orders, ordersFifo]) queues.set(queue.address.url, queue);
    client = new SQSClient({ ...clientConfig, endpoint: server.endpoint });
  });

  afterAll(async () => {
    client.destroy();
    await server.stop();
  });

  it('SendMessage with attributes: the SDK accepts the digests, and the queue holds the message with its origin', async () => {
    const body = JSON.stringify({ id: 'event-1', type: 'com.example.OrderPlaced' });
    const messageAttributes = {
      iefErrorName: { DataType: 'String', StringValue: 'PermanentError' },
      iefApproximateReceiveCount: { DataType: 'Number', StringValue: '2' },
      blob: { DataType: 'Binary', BinaryValue: new Uint8Array([0, 1, 2, 254, 255]) },
    };
    const result = await client.send(new SendMessageCommand({ QueueUrl: orders.address.url, MessageBody: body, MessageAttributes: messageAttributes }));

    expect(result.MessageId).toBeDefined();
    expect(result.MD5OfMessageAttributes).toBe(
      md5OfMessageAttributes({
        iefErrorName: { DataType: 'String', StringValue: 'PermanentError' },
        iefApproximateReceiveCount: { DataType: 'Number', StringValue: '2' },
        blob: { DataType: 'Binary', BinaryValue: Buffer.from([0, 1, 2, 254, 255]).toString('base64') },
      }),
    );
    const stored = orders.messages().find((message) => message.messageId === result.MessageId);
    expect(stored?.body).toBe(body);
    expect(stored?.origin).toEqual({ via: 'send-message', eventId: 'event-1' });
    expect(stored?.messageAttributes.blob).toEqual({ DataType: 'Binary', BinaryValue: 'AAEC/v8=' });
  });

  it("SendMessage of the runtime's dead letter: the origin names the consumer-queue message and the receive it stands for", async () => {
    const body = JSON.stringify({ id: 'event-2', type: 'com.example.OrderPlaced' });
    const result = await client.send(
      new SendMessageCommand({
        QueueUrl: orders.address.url,
        MessageBody: body,
        MessageAttributes: {
          iefErrorName: { DataType: 'String', StringValue: 'MessageBlockedError' },
          iefSourceMessageId: { DataType: 'String', StringValue: 'source-message-1' },
          iefApproximateReceiveCount: { DataType: 'Number', StringValue: '3' },
        },
      }),
    );
    const stored = orders.messages().find((message) => message.messageId === result.MessageId);
    expect(stored?.origin).toEqual({ via: 'send-message', eventId: 'event-2', deadLetterOf: { messageId: 'source-message-1', receiveCount: 3 } });
  });

  it('reaches the queue through its QueueUrl when the client has no endpoint (as the Lambda runtime builds it)', async () => {
    const defaultClient = new SQSClient(clientConfig);
    try {
      const result = await defaultClient.send(new SendMessageCommand({ QueueUrl: orders.address.url, MessageBody: 'plain text' }));
      const stored = orders.messages().find((message) => message.messageId === result.MessageId);
      expect(stored?.origin).toEqual({ via: 'send-message' });
    } finally {
      defaultClient.destroy();
    }
  });

  it('SendMessageBatch: sends the valid entries and reports the refused ones as Failed', async () => {
    const before = orders.counts().total;
    const result = await client.send(
      new SendMessageBatchCommand({
        QueueUrl: orders.address.url,
        Entries: [
          { Id: 'first', MessageBody: '{"id":"event-2"}' },
          { Id: 'second', MessageBody: 'two', MessageAttributes: { n: { DataType: 'Number', StringValue: '7' } } },
          { Id: 'bad', MessageBody: 'bell \u0007' },
        ],
      }),
    );
    expect(result.Successful?.map((entry) => entry.Id)).toEqual(['first', 'second']);
    expect(result.Successful?.[1]?.MD5OfMessageAttributes).toBe(md5OfMessageAttributes({ n: { DataType: 'Number', StringValue: '7' } }));
    expect(result.Failed).toEqual([expect.objectContaining({ Id: 'bad', SenderFault: true, Code: 'InvalidMessageContents' })]);
    expect(orders.counts().total).toBe(before + 2);
  });

  it('SendMessageBatch: refuses repeated entry ids as SQS does', async () => {
    const attempt = client.send(
      new SendMessageBatchCommand({
        QueueUrl: orders.address.url,
        Entries: [
          { Id: 'same', MessageBody: 'a' },
          { Id: 'same', MessageBody: 'b' },
        ],
      }),
    );
    await expect(attempt).rejects.toMatchObject({ name: 'BatchEntryIdsNotDistinct', $metadata: { httpStatusCode: 400 } });
  });

  it('FIFO: answers the sequence number', async () => {
    const result = await client.send(new SendMessageCommand({ QueueUrl: ordersFifo.address.url, MessageBody: 'a', MessageGroupId: 'g', MessageDeduplicationId: 'd' }));
    expect(result.SequenceNumber).toMatch(/^\d{20}$/);
  });

  it('an unknown queue URL fails with QueueDoesNotExist, with the query error code', async () => {
    const attempt = client.send(new SendMessageCommand({ QueueUrl: `${server.endpoint}/000000000000/missing`, MessageBody: 'a' }));
    await expect(attempt).rejects.toBeInstanceOf(QueueDoesNotExist);
    await expect(client.send(new GetQueueUrlCommand({ QueueName: 'missing' }))).rejects.toMatchObject({
      name: 'QueueDoesNotExist',
      Code: 'AWS.SimpleQueueService.NonExistentQueue',
      message: expect.stringContaining('does not exist'),
    });
  });

  it('an action it does not emulate fails with UnsupportedOperation', async () => {
    const attempt = client.send(new PurgeQueueCommand({ QueueUrl: orders.address.url }));
    await expect(attempt).rejects.toBeInstanceOf(UnsupportedOperation);
    await expect(attempt).rejects.toThrow(/PurgeQueue is not emulated by the simulator/);
  });

  it('refuses a per-message delay rather than ignoring it', async () => {
    const attempt = client.send(new SendMessageCommand({ QueueUrl: orders.address.url, MessageBody: 'a', DelaySeconds: 5 }));
    await expect(attempt).rejects.toThrow(/DelaySeconds 5 is not emulated/);
  });

  it('GetQueueUrl and GetQueueAttributes answer from the simulated queue', async () => {
    const { QueueUrl } = await client.send(new GetQueueUrlCommand({ QueueName: 'Orders' }));
    expect(QueueUrl).toBe(orders.address.url);
    const counts = orders.counts();
    const { Attributes } = await client.send(
      new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['QueueArn', 'ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'RedrivePolicy', 'VisibilityTimeout'] }),
    );
    expect(Attributes).toEqual({
      QueueArn: 'arn:aws:sqs:us-east-1:000000000000:Orders',
      ApproximateNumberOfMessages: String(counts.visible),
      ApproximateNumberOfMessagesNotVisible: String(counts.inFlight),
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: 'arn:aws:sqs:us-east-1:000000000000:OrdersDlq', maxReceiveCount: 5 }),
      VisibilityTimeout: '180',
    });
    const all = await client.send(new GetQueueAttributesCommand({ QueueUrl: ordersFifo.address.url, AttributeNames: ['All'] }));
    expect(all.Attributes).toMatchObject({ FifoQueue: 'true', MessageRetentionPeriod: '345600', ApproximateNumberOfMessagesDelayed: '0' });
    await expect(client.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['Colour' as 'All'] }))).rejects.toMatchObject({ name: 'InvalidAttributeName' });
  });
});
