/**
 * What the ordered dead-letter tests of test/cli share: the simulator's SQS endpoint serving the FIFO queues a file
 * registers in {@link byUrl}, an SDK client on it (one attempt, silent), the operator's frozen clock, and an ordered
 * event's body. {@link useOrderedDlqEndpoint}, called at a file's top level, starts them before its tests and stops
 * them after.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll } from 'vitest';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { frozenClock } from '../simulator/aws/queue-test-kit';

const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

/** The clock of the file's queues. */
export const clock = frozenClock();
/** The file's queues by URL, as the endpoint resolves them. */
export const byUrl = new Map<string, SimulatedQueue>();
/** The endpoint (set before the file's tests). */
export let endpoint: SqsEndpoint;
/** The SDK client on {@link endpoint} (set before the file's tests). */
export let sqs: SQSClient;

/** Starts the endpoint and its client before the calling file's tests, and stops them after. */
export function useOrderedDlqEndpoint(): void {
  beforeAll(async () => {
    endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url) });
    sqs = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 's', secretAccessKey: 's' }, endpoint: endpoint.endpoint, maxAttempts: 1, logger: silentLogger });
  });
  afterAll(async () => {
    sqs.destroy();
    await endpoint.stop();
  });
}

/** The body of ordered event `id`, `sequence` of `aggregateId`, as the ordered relay delivers it. */
export const orderedBody = (id: string, aggregateId: string, sequence: number): string =>
  JSON.stringify({ specversion: '1.0', id, source: 's', type: 'T', time: '2026-01-01T00:00:00.000Z', datacontenttype: 'application/json', data: {}, partitionkey: aggregateId, sequence: String(sequence).padStart(16, '0') });
