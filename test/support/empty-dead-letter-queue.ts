/**
 * An empty FIFO dead-letter queue on the simulator's SQS endpoint, and the subscriber queue whose RedrivePolicy names
 * it, for tests that run `fence skip` through the CLI and have no queues of their own: the skip reads the subscriber's
 * dead-letter queue before it moves a fence, and without an Operator output takes a typed one only when the typed
 * queue's RedrivePolicy names it. Not a test file.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { startSqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { frozenClock, makeQueue, queueModel } from '../simulator/aws/queue-test-kit';

/** The queue, an SQS client factory on its endpoint (the CLI's `createSqsClient`), and what stops the endpoint. */
export interface EmptyDeadLetterQueue {
  readonly url: string;
  /** The subscriber queue (FIFO, empty) whose RedrivePolicy names the dead-letter queue. */
  readonly queueUrl: string;
  readonly createSqsClient: () => SQSClient;
  readonly stop: () => Promise<void>;
}

const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** Starts an endpoint serving one empty FIFO queue named `name`. */
export async function startEmptyDeadLetterQueue(name = 'EmptyDlq.fifo'): Promise<EmptyDeadLetterQueue> {
  let queue: ReturnType<typeof makeQueue> | undefined;
  let source: ReturnType<typeof makeQueue> | undefined;
  const endpoint = await startSqsEndpoint({ resolveQueue: (url) => [queue, source].find((each) => each?.address.url === url) });
  const clock = frozenClock();
  queue = makeQueue(queueModel(name, { fifo: true, queueName: name }), { clock, baseUrl: endpoint.endpoint });
  const sourceName = `${name.replace(/\.fifo$/, '')}Source.fifo`;
  source = makeQueue(queueModel(sourceName, { fifo: true, queueName: sourceName, redrive: { deadLetterQueue: `Stack/${name}`, maxReceiveCount: 3 } }), { clock, baseUrl: endpoint.endpoint, deadLetterQueue: queue });
  return {
    url: queue.address.url,
    queueUrl: source.address.url,
    createSqsClient: () => new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 's', secretAccessKey: 's' }, endpoint: endpoint.endpoint, maxAttempts: 1, logger: silentLogger }),
    stop: () => endpoint.stop(),
  };
}
