/**
 * Issue 38, item 1: an ordered subscriber's dead letters reach its FIFO dead-letter queue at once, with their reason.
 * The ordered consumer (createOrderedConsumer, DynamoDB Local) sends through the runtime's SqsDeadLetterPublisher and
 * the real @aws-sdk/client-sqs to the simulator's SQS endpoint, whose FIFO queue refuses what SQS refuses: a send
 * without MessageGroupId, or without MessageDeduplicationId on a queue without content-based deduplication (as the
 * constructs create the ordered dead-letter queue). Before the fix every such send failed, so the message was retried
 * until SQS moved it without its reason (`MaxReceiveCountExceeded` in `dlq list`).
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { DEAD_LETTER_ATTRIBUTE, SqsDeadLetterPublisher, type DeadLetter } from '../../../lambda/consumer/dead-letter';
import type { SQSRecord } from '../../../lambda/consumer/sqs';
import { PermanentError } from '../../../lambda/errors';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import { startSqsEndpoint, type SqsEndpoint } from '../../../simulator/aws/sqs-endpoint';
import { localClient } from '../../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../../support/proof/tables';
import { frozenClock, makeQueue, queueModel } from '../../simulator/aws/queue-test-kit';
import { outcomesOf, recordingLogger } from '../helpers';

const SUBSCRIBER = 'ledger';
const silentLogger = { trace: () => {}, debug: () => {}, info: () => {}, warn: () => {}, error: () => {} };

let dynamo: DynamoDBClient;
let outboxConfig: ProducerConfig;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;
let server: SqsEndpoint;
let sqs: SQSClient;
let deadLetterQueue: SimulatedQueue;
const queues = new Map<string, SimulatedQueue>();
let receipts = 0;

beforeAll(async () => {
  dynamo = localClient();
  [outboxConfig, inboxConfig, ledgerTable] = await Promise.all([
    createOutbox(dynamo, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
    createInbox(dynamo, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }),
    createKeyedTable(dynamo, 'ordered-dead-letter-ledger'),
  ]);
  server = await startSqsEndpoint({ resolveQueue: (url) => queues.get(url) });
  sqs = new SQSClient({ region: 'us-east-1', credentials: { accessKeyId: 'simulated', secretAccessKey: 'simulated' }, endpoint: server.endpoint, maxAttempts: 1, logger: silentLogger });
});

beforeEach(() => {
  // the ordered subscriber's dead-letter queue as OrderedSubscriber creates it: FIFO, no content-based deduplication
  queues.clear();
  deadLetterQueue = makeQueue(queueModel('LedgerDlq', { fifo: true, queueName: 'ledger-dlq.fifo', contentBasedDeduplication: false }), { clock: frozenClock(), baseUrl: server.endpoint });
  queues.set(deadLetterQueue.address.url, deadLetterQueue);
});

afterAll(async () => {
  sqs.destroy();
  dynamo.destroy();
  await server.stop();
});

function consumer(fail?: (event: { readonly data: { readonly step: string } }) => void) {
  const { logger, lines } = recordingLogger();
  const handler = createOrderedConsumer<{ step: string }>({
    client: dynamo,
    config: inboxConfig,
    deadLetter: new SqsDeadLetterPublisher({ queueUrl: deadLetterQueue.address.url, client: sqs }),
    logger,
    metricsSink: () => undefined,
    handle: (event, tx) => {
      fail?.(event);
      tx.update({
        TableName: ledgerTable,
        Key: { pk: (event as unknown as { subject: string }).subject },
        UpdateExpression: 'SET steps = list_append(if_not_exists(steps, :none), :step)',
        ExpressionAttributeValues: { ':none': [], ':step': [event.data.step] },
      });
    },
  });
  return { handler, lines };
}

async function emit(aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client: dynamo, config: outboxConfig }).transactWrite({ events: [{ type: 'PaymentStep', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

/** A message of the subscriber's FIFO queue as Lambda hands it over: its group is the aggregate (the relay's MessageGroupId). */
function fifoRecord(body: string, group: string, messageId = `m-${++receipts}`): SQSRecord {
  return { messageId, body, receiptHandle: `receipt-${++receipts}`, attributes: { ApproximateReceiveCount: '1', MessageGroupId: group } };
}

/** What the dead-letter queue holds: each message's group, error name and event id. */
function deadLetters(): Array<{ group: string | undefined; errorName: string | undefined; errorMessage: string | undefined; eventId: string | undefined }> {
  return deadLetterQueue.receive(10).map((message) => ({
    group: message.attributes.MessageGroupId,
    errorName: message.messageAttributes[DEAD_LETTER_ATTRIBUTE.ERROR_NAME]?.StringValue,
    errorMessage: message.messageAttributes[DEAD_LETTER_ATTRIBUTE.ERROR_MESSAGE]?.StringValue,
    eventId: message.messageAttributes[DEAD_LETTER_ATTRIBUTE.EVENT_ID]?.StringValue,
  }));
}

const aggregate = (name: string): string => `payment-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

describe('an ordered subscriber dead-letters to its FIFO dead-letter queue at once, with the reason', () => {
  test('a PermanentError from the handler: dead-lettered at the first receive, grouped by its aggregate', async () => {
    const id = aggregate('permanent');
    const envelope = await emit(id, 'captured');
    const { handler, lines } = consumer(() => {
      throw new PermanentError('card network says: refund of an unknown capture');
    });
    const response = await handler({ Records: [fifoRecord(JSON.stringify(envelope), id)] });
    expect(response.batchItemFailures).toEqual([]);
    expect(outcomesOf(lines)).toEqual(['dead-lettered']);
    expect(deadLetters()).toEqual([{ group: id, errorName: 'PermanentError', errorMessage: expect.any(String), eventId: envelope.id }]);
  });

  test('a body that is no envelope (the schema check): dead-lettered at once as MalformedEnvelopeError, in the group it came in', async () => {
    const id = aggregate('malformed');
    const response = await consumer().handler({ Records: [fifoRecord('{"not":"an envelope"}', id)] });
    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetters()).toEqual([{ group: id, errorName: 'MalformedEnvelopeError', errorMessage: expect.any(String), eventId: undefined }]);
  });

  test('an envelope without its ordered position: NotAnOrderedEventError, at once', async () => {
    const id = aggregate('unordered');
    const { partitionkey: _partitionkey, sequence: _sequence, ...standard } = await emit(id, 'captured');
    const response = await consumer().handler({ Records: [fifoRecord(JSON.stringify(standard), id)] });
    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetters()).toEqual([{ group: id, errorName: 'NotAnOrderedEventError', errorMessage: expect.stringMatching(/not an ordered event/), eventId: standard.id }]);
  });

  test('a second event under an applied sequence: SequenceReusedError, at once, naming both events', async () => {
    const id = aggregate('reused');
    const first = await emit(id, 'captured');
    const { handler } = consumer();
    expect((await handler({ Records: [fifoRecord(JSON.stringify(first), id)] })).batchItemFailures).toEqual([]);
    const impostor = { ...first, id: `${first.id}-other` };
    const response = await handler({ Records: [fifoRecord(JSON.stringify(impostor), id)] });
    expect(response.batchItemFailures).toEqual([]);
    expect(deadLetters()).toEqual([{ group: id, errorName: 'SequenceReusedError', errorMessage: expect.stringContaining(`'${first.id}'`), eventId: impostor.id }]);
  });

  test('a dead letter redriven and failing again within the 5-minute deduplication window is dead-lettered again, not dropped by SQS', async () => {
    const id = aggregate('again');
    const envelope = await emit(id, 'captured');
    const { handler } = consumer(() => {
      throw new PermanentError('still broken');
    });
    // the same SQS message (a redrive that keeps its message id) received twice: each receive is a dead letter of its own
    const messageId = `m-again-${Date.now()}`;
    for (let receive = 0; receive < 2; receive++) {
      expect((await handler({ Records: [fifoRecord(JSON.stringify(envelope), id, messageId)] })).batchItemFailures).toEqual([]);
    }
    expect(deadLetters().map((letter) => letter.eventId)).toEqual([envelope.id, envelope.id]);
  });

  test("one receive's dead letter sent twice (the SDK retrying a send whose answer was lost) is one dead letter", async () => {
    const publisher = new SqsDeadLetterPublisher({ queueUrl: deadLetterQueue.address.url, client: sqs });
    const letter: DeadLetter = { body: '{"id":"e"}', errorName: 'PermanentError', errorMessage: 'x', subscriber: SUBSCRIBER, sourceMessageId: 'm-1', eventId: 'e', messageGroupId: 'payment-1', receiptHandle: 'r-1' };
    await publisher.publish(letter);
    await publisher.publish(letter);
    expect(deadLetters()).toEqual([{ group: 'payment-1', errorName: 'PermanentError', errorMessage: 'x', eventId: 'e' }]);
  });
});
