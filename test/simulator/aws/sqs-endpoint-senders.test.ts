/**
 * The SQS endpoint tells which function and invocation sent a message (each environment's endpoint URL has its own
 * path, which the real SDK keeps), reports the app's own sends (not the runtime's dead letters), and keeps the
 * messages sent to a queue outside the app's templates.
 */
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../../simulator/aws/sqs-endpoint';
import { SqsSenders } from '../../../simulator/aws/sqs-senders';
import type { AppSend } from '../../../simulator/observation/observer';
import { frozenClock, makeQueue, queueModel } from './queue-test-kit';

const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
const EXTERNAL_URL = 'https://sqs.eu-west-1.amazonaws.com/999999999999/partner-orders';

describe('the SQS endpoint: who sent a message', () => {
  const clock = frozenClock();
  const senders = new SqsSenders();
  const sent: AppSend[] = [];
  let server: SqsEndpoint;
  let notifications: SimulatedQueue;
  let external: SimulatedQueue | undefined;
  const clients: SQSClient[] = [];

  const clientOf = (path: string): SQSClient => {
    const client = new SQSClient({ region: 'eu-west-1', credentials: { accessKeyId: 'a', secretAccessKey: 'b' }, maxAttempts: 1, logger: silentLogger, endpoint: `${server.endpoint}${path}` });
    clients.push(client);
    return client;
  };

  beforeAll(async () => {
    const queues = new Map<string, SimulatedQueue>();
    server = await startSqsEndpoint({
      resolveQueue: (url) => queues.get(url),
      resolveExternalQueue: (url) => {
        if (url !== EXTERNAL_URL) return undefined;
        external ??= makeQueue(queueModel('partner-orders', { queueName: 'partner-orders' }), { clock, baseUrl: server.endpoint });
        return external;
      },
      senders,
      observer: { onAppSend: (send) => void sent.push(send) },
    });
    notifications = makeQueue(queueModel('Notifications'), { clock, baseUrl: server.endpoint });
    queues.set(notifications.address.url, notifications);
  });

  afterAll(async () => {
    for (const client of clients) client.destroy();
    await server.stop();
  });

  it('reports a send with the function and the invocation its environment runs, and not a dead letter of the runtime', async () => {
    // GIVEN an environment of Seats running an invocation of event-1
    const registration = senders.register('Stack/Seats', 'Stack/Seats');
    registration.begin({ invocation: 'Stack/Seats#1', eventIds: ['event-1'] });
    const client = clientOf(registration.path);

    // WHEN it sends a message of its own, then a dead letter as the runtime does
    await client.send(new SendMessageCommand({ QueueUrl: notifications.address.url, MessageBody: '{"seat":"A1"}' }));
    await client.send(
      new SendMessageCommand({ QueueUrl: notifications.address.url, MessageBody: '{"id":"event-1"}', MessageAttributes: { iefSourceMessageId: { DataType: 'String', StringValue: 'm-1' } } }),
    );
    registration.end();

    // THEN only its own message is reported, with who sent it
    expect(sent).toEqual([
      expect.objectContaining({ functionKey: 'Stack/Seats', invocation: 'Stack/Seats#1', invocationEventIds: ['event-1'], queue: notifications.model.key, body: '{"seat":"A1"}' }),
    ]);
  });

  it('keeps a message sent to a queue outside the templates instead of failing with QueueDoesNotExist', async () => {
    const registration = senders.register('Stack/Seats', 'Stack/Seats');
    registration.begin({ invocation: 'Stack/Seats#2', eventIds: ['event-2'] });

    await clientOf(registration.path).send(new SendMessageCommand({ QueueUrl: EXTERNAL_URL, MessageBody: '{"order":"O2"}' }));

    expect(external?.messages().map((message) => message.body)).toEqual(['{"order":"O2"}']);
    expect(sent.at(-1)).toMatchObject({ queueName: 'partner-orders', invocationEventIds: ['event-2'] });
  });
});
