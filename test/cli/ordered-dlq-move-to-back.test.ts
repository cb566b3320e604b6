/**
 * Letters a redrive keeps move to the back of their FIFO group when they hide letters it did not read (review ro13,
 * RO13-8): sent again to the dead-letter queue and deleted, they must read as before the move: why they are there
 * (SQS moved them after maxReceiveCount, from which queue) and when they first reached the queue, which a send can
 * not set. The simulator's FIFO SQS behind its endpoint, the real @aws-sdk/client-sqs.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DEAD_LETTER_ATTRIBUTE } from '../../lambda/consumer/dead-letter';
import { planOrderedRedrive, type IFenceReader } from '../../operator/ordered/redrive-plan';
import { CLOCK_BUFFER_BYTES, VirtualClock } from '../../simulator/aws/clock';
import type { SimulatedQueue } from '../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../simulator/aws/sqs-endpoint';
import { DEAD_LETTER_REASON, deadLetterView } from '../../operator/cli/dead-letters/dead-letter-view';
import { readOrderedDeadLetters } from '../../operator/cli/dead-letters/ordered-queue-read';
import { receiveMessages, releaseMessages } from '../../operator/cli/dead-letters/queue-messages';
import { makeQueue, queueModel } from '../simulator/aws/queue-test-kit';

const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };
let nowMs = Date.UTC(2026, 10, 1);
const clock = new VirtualClock(new SharedArrayBuffer(CLOCK_BUFFER_BYTES), () => nowMs);
let endpoint: SqsEndpoint;
let sqs: SQSClient;
const byUrl = new Map<string, SimulatedQueue>();
beforeAll(async () => {
  endpoint = await startSqsEndpoint({ resolveQueue: (url) => byUrl.get(url) });
  sqs = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 's', secretAccessKey: 's' }, endpoint: endpoint.endpoint, maxAttempts: 1, logger: silentLogger });
});
afterAll(async () => {
  sqs.destroy();
  await endpoint.stop();
});
const body = (id: string, sequence: number): string =>
  JSON.stringify({ specversion: '1.0', id, source: 's', type: 'T', time: '2026-01-01T00:00:00.000Z', datacontenttype: 'application/json', data: {}, partitionkey: 'a', sequence: String(sequence).padStart(16, '0') });

test('letters moved to the back of their group keep the reason SQS gave them and when they first reached the queue; nothing is lost or sent', async () => {
  const dlq = makeQueue(queueModel('MoveDlq.fifo', { fifo: true, queueName: 'MoveDlq.fifo', contentBasedDeduplication: false }), { clock, baseUrl: endpoint.endpoint });
  const queue = makeQueue(queueModel('MoveQ.fifo', { fifo: true, queueName: 'MoveQ.fifo', redrive: { deadLetterQueue: 'Stack/MoveDlq.fifo', maxReceiveCount: 1 } }), { clock, baseUrl: endpoint.endpoint, deadLetterQueue: dlq });
  for (const each of [queue, dlq]) byUrl.set(each.address.url, each);
  // the fence at 1, #2 lost: #3..#13, dead-lettered by the consumer once and redriven (their iefErrorName kept), fail
  // again and SQS moves them to the dead-letter queue (11 letters, all waiting): the name is an earlier reason
  for (let sequence = 3; sequence <= 13; sequence++) {
    queue.send({ body: body(`E${sequence}`, sequence), messageAttributes: { [DEAD_LETTER_ATTRIBUTE.ERROR_NAME]: { DataType: 'String', StringValue: 'SequenceGapError' } }, messageGroupId: 'a', messageDeduplicationId: `s${sequence}`, origin: { via: 'send-message' } });
    queue.receive(1, 0);
    queue.receive(1, 0);
  }
  expect(dlq.counts().total).toBe(11);
  const before = await receiveMessages(sqs, dlq.address.url);
  const sentAt = new Map(before.map((message) => [message.body, deadLetterView(message, 'queue').sentAtEpochMilliseconds]));
  expect(before.map((message) => deadLetterView(message, 'queue').reason)).toEqual(Array(10).fill(DEAD_LETTER_REASON.MAX_RECEIVE_COUNT));
  await releaseMessages(sqs, before);
  nowMs += 3_600_000;
  const fences: IFenceReader = { get: async () => ({ appliedSequence: 1, appliedEventId: 'E1' }) };
  const read = await readOrderedDeadLetters({
    sqs,
    deadLetterQueueUrl: dlq.address.url,
    select: (message) => ({ id: message.messageId, body: message.body }),
    plan: (letters) => planOrderedRedrive(letters, fences, { find: async () => undefined }),
    sendTo: queue.address.url,
  });
  await releaseMessages(sqs, read.held);
  // every letter read (the eleventh behind the ten in front), none sent or deleted, all still there, the gap named
  expect(read).toMatchObject({ unread: 0, sent: [], deleted: [] });
  expect(read.plan.waiting).toHaveLength(11);
  expect(read.plan.gaps).toEqual({ a: [2] });
  expect(dlq.counts().total).toBe(11);
  const after = await receiveMessages(sqs, dlq.address.url);
  await releaseMessages(sqs, after);
  const moved = after.filter((message) => message.attributes.DeadLetterQueueSourceArn === undefined);
  expect(moved.length).toBeGreaterThan(0);
  for (const message of after) {
    const view = deadLetterView(message, 'queue');
    expect(view).toMatchObject({ reason: DEAD_LETTER_REASON.MAX_RECEIVE_COUNT, previousReason: 'SequenceGapError' });
    expect(view.sentAtEpochMilliseconds).toBe(sentAt.get(message.body) ?? Date.UTC(2026, 10, 1));
  }
});
