/**
 * What `HeldAggregate` rests on (review ro12, RO12-12): an ordered consumer that holds an aggregate (its next event
 * missing: a gap the fence waits for) fails the message, and its metric line counts it as `Failed` under the
 * subscriber's dimensions, at every receive; the alarm watches that metric, not the queue's
 * ApproximateAgeOfOldestMessage (which SQS computes without a message received repeatedly). Review ro13, RO13-6: a
 * failure alone does not say an aggregate is held (any transient failure of a healthy subscriber is one), so the line
 * also counts `SequenceGaps`, a message the fence holds behind a gap, and only that. DynamoDB Local.
 */
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { CONSUMER_METRICS } from '../../../lambda/contract/metric-names';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox } from '../../../lambda/ordered/ordered-outbox';
import { localClient } from '../../support/dynamodb-client';
import { createInbox, createOutbox } from '../../support/proof/tables';
import { recordingLogger } from '../helpers';

const dynamo = localClient();
let inbox: ConsumerConfig;
let outbox: ProducerConfig;
beforeAll(async () => {
  [inbox, outbox] = await Promise.all([createInbox(dynamo, { subscriberName: 'Held', deduplicationWindowSeconds: 3600 }), createOutbox(dynamo, { eventSource: 'held' })]);
});
afterAll(() => dynamo.destroy());

test('a message held behind a gap is counted Failed, with the subscriber dimension, at each receive', async () => {
  const lines: string[] = [];
  const handler = createOrderedConsumer<{ step: string }>({ client: dynamo, config: inbox, logger: recordingLogger().logger, metricsSink: (line) => lines.push(line), handle: () => undefined });
  const aggregate = `held-${Date.now()}`;
  const producer = new OrderedOutbox({ client: dynamo, config: outbox });
  await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step: 'opened' } }] });
  const [second] = await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step: 'credited' } }] });
  for (let receive = 1; receive <= 2; receive++) {
    const response = await handler({ Records: [{ messageId: 'm2', body: JSON.stringify(second), receiptHandle: `r${receive}`, attributes: { ApproximateReceiveCount: String(receive), MessageGroupId: aggregate } } as never] });
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'm2' }]);
  }
  const failed = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((line) => line[CONSUMER_METRICS.FAILED] === 1);
  expect(failed).toHaveLength(2);
  for (const line of failed) expect(line[CONSUMER_METRICS.SUBSCRIBER_DIMENSION]).toBe('Held');
});

test('a message held behind a gap is counted SequenceGaps at each receive; a transient failure of the handler is Failed, never SequenceGaps (review ro13, RO13-6)', async () => {
  const lines: string[] = [];
  let failing = false;
  const handler = createOrderedConsumer<{ step: string }>({
    client: dynamo,
    config: inbox,
    logger: recordingLogger().logger,
    metricsSink: (line) => lines.push(line),
    handle: () => {
      if (failing) throw new Error('the downstream timed out');
    },
  });
  const aggregate = `gap-${Date.now()}`;
  const producer = new OrderedOutbox({ client: dynamo, config: outbox });
  const [first] = await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step: 'opened' } }] });
  const [second] = await producer.transactWrite({ events: [{ type: 'Step', aggregateId: aggregate, subject: aggregate, data: { step: 'credited' } }] });
  const deliver = (id: string, body: string, receive: number) =>
    handler({ Records: [{ messageId: id, body, receiptHandle: `${id}-r${receive}`, attributes: { ApproximateReceiveCount: String(receive), MessageGroupId: aggregate } } as never] });
  // #2 before #1: held behind the gap, twice
  for (let receive = 1; receive <= 2; receive++) expect((await deliver('m2', JSON.stringify(second), receive)).batchItemFailures).toEqual([{ itemIdentifier: 'm2' }]);
  // #1 with its handler failing: a transient failure, no gap
  failing = true;
  expect((await deliver('m1', JSON.stringify(first), 1)).batchItemFailures).toEqual([{ itemIdentifier: 'm1' }]);
  const parsed = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(parsed.map((line) => [line[CONSUMER_METRICS.FAILED], line[CONSUMER_METRICS.SEQUENCE_GAPS]])).toEqual([[1, 1], [1, 1], [1, 0]]);
  const declared = (parsed[0]!._aws as { CloudWatchMetrics: Array<{ Metrics: Array<{ Name: string }> }> }).CloudWatchMetrics[0]!.Metrics.map((metric) => metric.Name);
  expect(declared).toContain(CONSUMER_METRICS.SEQUENCE_GAPS);
});
