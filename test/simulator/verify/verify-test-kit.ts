/**
 * The shared set-up of verify's unit tests: the simulator's SQS endpoint over simulated queues (the real protocol, the
 * real SDK client), DynamoDB Local, verify's clients over both, and builders of run events, a subscriber's queues and
 * settle options on a virtual clock. Not a test file.
 */
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../../simulator/aws/sqs-endpoint';
import type { VerifyClients } from '../../../simulator/verify/clients';
import type { DeployedFlow } from '../../../simulator/verify/deployed-flow';
import type { RunEvent } from '../../../simulator/verify/observe';
import type { EffectProbe } from '../../../simulator/run/scenario';
import type { SettleOptions } from '../../../simulator/verify/settle';
import { localClient } from '../../support/dynamodb-client';
import { frozenClock, makeQueue, queueModel } from '../aws/queue-test-kit';

/** One test file's SQS endpoint, queues and DynamoDB clients; {@link VerifyTestbed.start} ties them to its hooks. */
export class VerifyTestbed {
  public readonly clock = frozenClock();
  public readonly queues = new Map<string, SimulatedQueue>();
  public readonly dynamoDb = localClient();
  public readonly documents = DynamoDBDocumentClient.from(this.dynamoDb);
  private endpoint: SqsEndpoint | undefined;
  private client: SQSClient | undefined;

  /** A testbed whose endpoint starts before the file's tests and stops, with its clients, after them. */
  public static start(): VerifyTestbed {
    const bed = new VerifyTestbed();
    beforeAll(async () => {
      bed.endpoint = await startSqsEndpoint({ resolveQueue: (url) => bed.queues.get(url) });
      bed.client = new SQSClient({ region: 'us-east-1', endpoint: bed.endpoint.endpoint, credentials: { accessKeyId: 'simulated', secretAccessKey: 'simulated' }, maxAttempts: 1 });
    });
    afterAll(async () => {
      bed.client?.destroy();
      bed.dynamoDb.destroy();
      await bed.endpoint?.stop();
    });
    return bed;
  }

  /** The SQS endpoint (started by the file's `beforeAll`). */
  public get server(): SqsEndpoint {
    if (this.endpoint === undefined) throw new Error('the SQS endpoint starts in beforeAll');
    return this.endpoint;
  }

  /** Verify's clients over the endpoint and DynamoDB Local. */
  public clients(): VerifyClients {
    return { sqs: this.client, dynamoDb: this.dynamoDb, documents: this.documents, destroy: () => undefined } as unknown as VerifyClients;
  }

  /** A subscriber's queue and dead-letter queue, fresh per call. */
  public subscriberQueues(name: string): { queue: SimulatedQueue; deadLetters: SimulatedQueue } {
    const deadLetters = makeQueue(queueModel(`${name}Dlq${this.queues.size}`), { clock: this.clock, baseUrl: this.server.endpoint });
    const queue = makeQueue(queueModel(`${name}Queue${this.queues.size}`), { clock: this.clock, baseUrl: this.server.endpoint });
    for (const item of [queue, deadLetters]) this.queues.set(item.address.url, item);
    return { queue, deadLetters };
  }
}

/** An event of the run: an order placed, its id its order's. */
export function runEvent(id: string): RunEvent {
  const event = { id, type: 'com.example.OrderPlaced', data: { orderId: id } };
  return { event, body: JSON.stringify(event), ordered: false };
}

/** Settle options on a virtual clock (each pause moves it on): a 30 s limit, a look every 5 s. */
export function settleOptions(probes: Readonly<Record<string, EffectProbe>>, events: readonly RunEvent[], baseline: ReadonlyMap<string, number>): SettleOptions {
  let nowMs = 0;
  return {
    timeoutSeconds: 30,
    pollSeconds: 5,
    probes,
    readEvents: async () => new Map(events.map((item) => [item.event.id, item])),
    onProgress: () => undefined,
    deadLetterBaseline: baseline,
    now: () => nowMs,
    pause: async (seconds) => void (nowMs += seconds * 1000),
  };
}

/** A deployed flow of one multi-step subscriber, `name`, in stack App, on `queues`. */
export function oneSubscriberFlow(name: string, queues: { queue: SimulatedQueue; deadLetters: SimulatedQueue }): DeployedFlow {
  return {
    stackNames: ['App'],
    flows: [],
    resources: [],
    subscribers: [{ name, stackName: 'App', environment: {}, deployment: { format: 1, subscriberName: name, processingMode: 'multi-step', queueUrl: queues.queue.address.url, deadLetterQueueUrl: queues.deadLetters.address.url } }],
  };
}

/** A probe that finds every event of the run not applied yet. */
export const notAppliedProbe: EffectProbe = async ({ events }) => events.map((event) => ({ subject: `order ${event.id}`, eventIds: [event.id], applied: 0 }));
