/**
 * Issue 38 item 8 (i): a subscriber deployed by the constructs (its processing mode set) whose handler is built with a
 * factory without the sequence fence refuses, at its first invocation, a batch from an ordered subscriber's FIFO queue
 * (records with a message group, bodies with an ordered position), naming the factory to use. Nothing is applied.
 * `createOrderedConsumer` on the same batch applies it (against DynamoDB Local).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { ConfigurationError, type ConsumerConfig, type ProducerConfig } from '../../../lambda/config';
import { createTransactionalConsumer } from '../../../lambda/consumer/transactional-consumer';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import type { SQSRecord } from '../../../lambda/consumer/sqs';
import { localClient } from '../../support/dynamodb-client';
import { createInbox, createOutbox } from '../../support/proof/tables';
import { outcomesOf, recordingLogger, rejection, sqsRecord } from '../helpers';

let client: DynamoDBClient;
let outboxConfig: ProducerConfig;
let deployed: ConsumerConfig;

beforeAll(async () => {
  client = localClient();
  let inbox: ConsumerConfig;
  [outboxConfig, inbox] = await Promise.all([createOutbox(client, { eventSource: 'payments' }), createInbox(client, { subscriberName: 'Ledger', deduplicationWindowSeconds: 3600 })]);
  // as the OrderedSubscriber construct deploys its function: transactional mode
  deployed = { ...inbox, processingMode: 'transactional' };
});
afterAll(() => client.destroy());

/** The record Lambda delivers from an ordered subscriber's FIFO queue: the aggregate is its message group. */
function fifoRecord(envelope: OrderedEnvelope): SQSRecord {
  const record = sqsRecord(JSON.stringify(envelope));
  return { ...record, attributes: { ...record.attributes, MessageGroupId: envelope.partitionkey } };
}

async function capture(aggregateId: string): Promise<OrderedEnvelope> {
  const outbox = new OrderedOutbox({ client, config: outboxConfig });
  const [envelope] = await outbox.transactWrite({ events: [{ type: 'PaymentCaptured', aggregateId, subject: aggregateId, data: { amount: 10 } }] });
  return envelope!;
}

describe('a fence-less factory behind an ordered subscriber', () => {
  test('createTransactionalConsumer refuses the first batch of ordered events from a FIFO queue with a ConfigurationError naming createOrderedConsumer', async () => {
    const event = await capture(`payment-${Date.now()}-guard`);
    const handled: string[] = [];
    const { logger, lines } = recordingLogger();
    const handler = createTransactionalConsumer({ client, config: deployed, logger, metricsSink: () => undefined, handle: (envelope) => void handled.push(envelope.id) });
    const error = await rejection(handler({ Records: [fifoRecord(event)] }));
    expect(error).toBeInstanceOf(ConfigurationError);
    expect(error.message).toMatch(/subscriber 'Ledger' .*ordered subscriber's FIFO queue.*createTransactionalConsumer.*no sequence fence.*createOrderedConsumer/);
    expect(handled).toEqual([]);
    expect(outcomesOf(lines)).toEqual([]);
  });

  test('createOrderedConsumer applies the same batch', async () => {
    const event = await capture(`payment-${Date.now()}-ordered`);
    const { logger, lines } = recordingLogger();
    const handler = createOrderedConsumer({ client, config: deployed, logger, metricsSink: () => undefined, handle: () => undefined });
    expect((await handler({ Records: [fifoRecord(event)] })).batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['processed']);
  });

  test('createTransactionalConsumer still runs standard events, and ordered events outside the constructs (no processing mode deployed)', async () => {
    const event = await capture(`payment-${Date.now()}-undeployed`);
    const { processingMode: _, ...undeployed } = deployed;
    const { logger, lines } = recordingLogger();
    const handler = createTransactionalConsumer({ client, config: undeployed, logger, metricsSink: () => undefined, handle: () => undefined });
    await handler({ Records: [fifoRecord(event)] });
    const standard = createTransactionalConsumer({ client, config: deployed, logger, metricsSink: () => undefined, handle: () => undefined });
    const { partitionkey: _p, sequence: _s, ...plain } = await capture(`payment-${Date.now()}-plain`);
    await standard({ Records: [sqsRecord(JSON.stringify({ ...plain, id: `${plain.id}-standard` }))] });
    expect(outcomesOf(lines)).toEqual(['processed', 'processed']);
  });
});
