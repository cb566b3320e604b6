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

  it('StartMessageMoveTask moves every visible message to the destination with a NEW message id, and ListMessageMoveTasks says when it completed', async () => {
    deadLetters.send({ body: 'a', origin: { via: 'send-message' } });
    deadLetters.send({ body: 'b', origin: { via: 'send-message' } });
    const idsBefore = deadLetters.messages().map((message) => message.messageId);

    const task = await client.send(new StartMessageMoveTaskCommand({ SourceArn: deadLetters.address.arn, DestinationArn: queue.address.arn }));
    clock.advanceBy(1000);
    const listed = await client.send(new ListMessageMoveTasksCommand({ SourceArn: deadLetters.address.arn }));

    expect(queue.messages().map((message) => message.body)).toEqual(['a', 'b']);
    expect(queue.messages().filter((message) => idsBefore.includes(message.messageId))).toEqual([]);
    expect(deadLetters.counts().total).toBe(0);
    // as documented, a task that is no longer RUNNING is listed without its handle
    expect(listed.Results).toEqual([
      { Status: 'COMPLETED', SourceArn: deadLetters.address.arn, DestinationArn: queue.address.arn, ApproximateNumberOfMessagesMoved: 2, ApproximateNumberOfMessagesToMove: 2, StartedTimestamp: expect.any(Number) },
    ]);
    expect(task.TaskHandle).toEqual(expect.any(String));
    await expect(client.send(new StartMessageMoveTaskCommand({ SourceArn: 'arn:aws:sqs:us-east-1:000000000000:missing', DestinationArn: queue.address.arn }))).rejects.toBeInstanceOf(ResourceNotFoundException);
    drain(queue);
  });

  describe('a message move task runs on the virtual clock, at most 500 messages a second', () => {
    it('is RUNNING with ApproximateNumberOfMessagesMoved growing 500 a second, then COMPLETED', async () => {
      fill(deadLetters, 1200);
      const startedAt = clock.now();

      const { TaskHandle } = await client.send(new StartMessageMoveTaskCommand({ SourceArn: deadLetters.address.arn, DestinationArn: queue.address.arn }));
      const progress: Array<[string | undefined, number | undefined, number, number]> = [];
      for (const step of [0, 1000, 999, 1, 399, 1]) {
        clock.advanceBy(step);
        const [latest] = (await client.send(new ListMessageMoveTasksCommand({ SourceArn: deadLetters.address.arn }))).Results ?? [];
        expect(latest).toMatchObject({ ApproximateNumberOfMessagesToMove: 1200, StartedTimestamp: startedAt });
        expect(latest?.TaskHandle).toBe(latest?.Status === 'RUNNING' ? TaskHandle : undefined);
        progress.push([latest?.Status, latest?.ApproximateNumberOfMessagesMoved, queue.counts().total, deadLetters.counts().total]);
      }

      expect(progress).toEqual([
        ['RUNNING', 0, 0, 1200],
        ['RUNNING', 500, 500, 700],
        ['RUNNING', 999, 999, 201],
        ['RUNNING', 1000, 1000, 200],
        ['RUNNING', 1199, 1199, 1],
        ['COMPLETED', 1200, 1200, 0],
      ]);
      drain(queue);
    });

    it('moves messages whoever looks: a consumer of the destination receives them as the clock passes, each sent when it moved', async () => {
      fill(deadLetters, 3);
      const startedAt = clock.now();
      await client.send(new StartMessageMoveTaskCommand({ SourceArn: deadLetters.address.arn, DestinationArn: queue.address.arn, MaxNumberOfMessagesPerSecond: 2 }));

      expect(queue.receive(10)).toEqual([]);
      clock.advanceBy(60_000); // nobody asks about the task meanwhile
      const received = queue.receive(10);

      expect(received.map((message) => Number(message.attributes.SentTimestamp) - startedAt)).toEqual([500, 1000, 1500]);
      const [latest] = (await client.send(new ListMessageMoveTasksCommand({ SourceArn: deadLetters.address.arn }))).Results ?? [];
      expect(latest).toMatchObject({ Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 3, MaxNumberOfMessagesPerSecond: 2 });
      drain(queue);
    });

    it('honours MaxNumberOfMessagesPerSecond, and lists it', async () => {
      fill(deadLetters, 25);
      await client.send(new StartMessageMoveTaskCommand({ SourceArn: deadLetters.address.arn, DestinationArn: queue.address.arn, MaxNumberOfMessagesPerSecond: 10 }));

      clock.advanceBy(1000);
      const [after1s] = (await client.send(new ListMessageMoveTasksCommand({ SourceArn: deadLetters.address.arn }))).Results ?? [];
      clock.advanceBy(1500);
      const [after2_5s] = (await client.send(new ListMessageMoveTasksCommand({ SourceArn: deadLetters.address.arn }))).Results ?? [];

      expect(after1s).toMatchObject({ Status: 'RUNNING', ApproximateNumberOfMessagesMoved: 10, MaxNumberOfMessagesPerSecond: 10 });
      expect(after2_5s).toMatchObject({ Status: 'COMPLETED', ApproximateNumberOfMessagesMoved: 25, MaxNumberOfMessagesPerSecond: 10 });
      drain(queue);
    });

    it('refuses MaxNumberOfMessagesPerSecond outside 1 to 500, as SQS does', async () => {
      for (const rate of [0, 501, 2.5]) {
        await expect(
          client.send(new StartMessageMoveTaskCommand({ SourceArn: deadLetters.address.arn, DestinationArn: queue.address.arn, MaxNumberOfMessagesPerSecond: rate })),
        ).rejects.toMatchObject({ name: 'InvalidParameterValue', message: expect.stringMatching(/MaxNumberOfMessagesPerSecond is invalid/) });
      }
      await client.send(new StartMessageMoveTaskCommand({ SourceArn: deadLetters.address.arn, DestinationArn: queue.address.arn, MaxNumberOfMessagesPerSecond: 500 }));
    });

    it('refuses a second task on a source while one runs, and accepts one once it completed', async () => {
      fill(deadLetters, 600);
      const start = () => client.send(new StartMessageMoveTaskCommand({ SourceArn: deadLetters.address.arn, DestinationArn: queue.address.arn }));
      await start();

      await expect(start()).rejects.toMatchObject({ name: 'InvalidParameterValue', message: expect.stringMatching(/already a task running/) });
      clock.advanceBy(1200);
      fill(deadLetters, 1);
      await start();
      clock.advanceBy(1000);

      const results = (await client.send(new ListMessageMoveTasksCommand({ SourceArn: deadLetters.address.arn, MaxResults: 2 }))).Results ?? [];
      expect(results.map((task) => [task.Status, task.ApproximateNumberOfMessagesMoved])).toEqual([
        ['COMPLETED', 1],
        ['COMPLETED', 600],
      ]);
      drain(queue);
    });
  });
});

/** Puts `count` messages on `queue`. */
function fill(queue: SimulatedQueue, count: number): void {
  for (let i = 0; i < count; i += 1) queue.send({ body: `m-${i}`, origin: { via: 'send-message' } });
}

/** Receives and deletes every message of `queue`, so the next test starts from an empty one. */
function drain(queue: SimulatedQueue): void {
  for (let batch = queue.receive(10); batch.length > 0; batch = queue.receive(10)) {
    for (const message of batch) queue.delete(message.receiptHandle);
  }
}
