/**
 * What `HeldAggregate` rests on (review ro12, RO12-12): an ordered consumer that holds an aggregate (its next event
 * missing: a gap the fence waits for) fails the message, and its metric line counts it as `Failed` under the
 * subscriber's dimensions, at every receive; the alarm watches that metric, not the queue's
 * ApproximateAgeOfOldestMessage (which SQS computes without a message received repeatedly). DynamoDB Local.
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
