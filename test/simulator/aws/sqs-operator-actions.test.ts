import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ListMessageMoveTasksCommand,
  MessageNotInflight,
  ReceiveMessageCommand,
  ResourceNotFoundException,
  SQSClient,
  StartMessageMoveTaskCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../../simulator/aws/sqs-endpoint';
import { frozenClock, makeQueue, queueModel } from './queue-test-kit';

const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

describe("the SQS endpoint's operator actions, used by the real @aws-sdk/client-sqs", () => {
  const clock = frozenClock();
  const byUrl = new Map<string, SimulatedQueue>();
  const byArn = new Map<string, SimulatedQueue>();
  let server: SqsEndpoint;
  let client: SQSClient;
  let queue: SimulatedQueue;
  let deadLetters: SimulatedQueue;

  beforeAll(async () => {
    server = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url), resolveQueueArn: (arn) => byArn.get(arn) });
    deadLetters = makeQueue(queueModel('Dlq'), { clock, baseUrl: server.endpoint });
    queue = makeQueue(queueModel('Queue'), { clock, baseUrl: server.endpoint });
    for (const each of [queue, deadLetters]) {
      byUrl.set(each.address.url, each);
      byArn.set(each.address.arn, each);
    }
    client = new SQSClient({ region: 'us-east-1', endpoint: server.endpoint, credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, maxAttempts: 1, logger: silentLogger });
  });

  afterAll(async () => {
    client.destroy();
    await server.stop();
  });

  it('ReceiveMessage hides a message for the VisibilityTimeout asked; ChangeMessageVisibility 0 shows it again; DeleteMessage removes it', async () => {
    deadLetters.send({ body: 'one', messageAttributes: { iefErrorName: { DataType: 'String', StringValue: 'PermanentError' } }, origin: { via: 'send-message' } });

    const first = await client.send(new ReceiveMessageCommand({ QueueUrl: deadLetters.address.url, MaxNumberOfMessages: 10, VisibilityTimeout: 120 }));
    expect(first.Messages?.map((message) => [message.Body, message.MessageAttributes?.iefErrorName?.StringValue, message.Attributes?.ApproximateReceiveCount])).toEqual([['one', 'PermanentError', '1']]);
    clock.advanceBy(60_000); // the queue's own timeout (30 s) passed, the one asked for did not
    expect((await client.send(new ReceiveMessageCommand({ QueueUrl: deadLetters.address.url }))).Messages).toBeUndefined();

    const handle = first.Messages?.[0]?.ReceiptHandle as string;
    await client.send(new ChangeMessageVisibilityCommand({ QueueUrl: deadLetters.address.url, ReceiptHandle: handle, VisibilityTimeout: 0 }));
    await expect(client.send(new ChangeMessageVisibilityCommand({ QueueUrl: deadLetters.address.url, ReceiptHandle: handle, VisibilityTimeout: 0 }))).rejects.toBeInstanceOf(MessageNotInflight);
    const again = await client.send(new ReceiveMessageCommand({ QueueUrl: deadLetters.address.url }));
    expect(again.Messages?.[0]?.Attributes?.ApproximateReceiveCount).toBe('2');

    await client.send(new DeleteMessageCommand({ QueueUrl: deadLetters.address.url, ReceiptHandle: again.Messages?.[0]?.ReceiptHandle as string }));
    expect(deadLetters.counts().total).toBe(0);
  });

  it('StartMessageMoveTask moves every visible message to the destination with a NEW message id, and ListMessageMoveTasks says it completed', async () => {
    deadLetters.send({ body: 'a', origin: { via: 'send-message' } });
    deadLetters.send({ body: 'b', origin: { via: 'send-message' } });
    const idsBefore = deadLetters.messages().map((message) => message.messageId);

    const task = await client.send(new StartMessageMoveTaskCommand({ SourceArn: deadLetters.address.arn, DestinationArn: queue.address.arn }));
    const listed = await client.send(new ListMessageMoveTasksCommand({ SourceArn: deadLetters.address.arn }));

    expect(queue.messages().map((message) => message.body)).toEqual(['a', 'b']);
    expect(queue.messages().filter((message) => idsBefore.includes(message.messageId))).toEqual([]);
    expect(deadLetters.counts().total).toBe(0);
    expect(listed.Results).toEqual([expect.objectContaining({ TaskHandle: task.TaskHandle, Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 2 })]);
    await expect(client.send(new StartMessageMoveTaskCommand({ SourceArn: 'arn:aws:sqs:us-east-1:000000000000:missing', DestinationArn: queue.address.arn }))).rejects.toBeInstanceOf(ResourceNotFoundException);
  });
});
