import { PutItemCommand, TransactWriteItemsCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import type { SimulatedQueue } from '../../../simulator/aws/queue';
import { SimulatedRelay, type RelayTarget } from '../../../simulator/aws/stream-relay';
import { relayQueueTarget } from '../../../simulator/aws/relay-queue-target';
import { SimulatedTopic } from '../../../simulator/aws/topic';
import type { PipeStreamEvent } from '../../../simulator/aws/stream-record';
import { createTables } from '../../../simulator/aws/tables';
import { FaultPlan, NO_FAULTS, type FaultKind } from '../../../simulator/faults/fault-plan';
import type { RelayModel } from '../../../simulator/model/flow-model';
import type { SimulationObserver } from '../../../simulator/observation/observer';
import { LOCAL_CREDENTIALS, localClient, uniqueTableName } from '../../support/dynamodb-client';
import { EXAMPLE_OUTBOX_TABLE, EXAMPLE_RELAY } from '../support/example-models';
import { frozenClock, makeQueue, queueModel } from './queue-test-kit';

const REGION = 'eu-west-1';
const PIPE_ARN = 'arn:aws:pipes:eu-west-1:000000000000:pipe/orders-relay';

const OUTBOX_TABLE = EXAMPLE_OUTBOX_TABLE;
const RELAY = EXAMPLE_RELAY;

type Image = Record<string, { S?: string }>;
const imageOf = (event: unknown): Image | undefined => (event as PipeStreamEvent).dynamodb.NewImage as Image | undefined;

/** What the example's filter pattern matches (written out here; the pattern compiler is tested on its own). */
const isOutboxInsert = (event: unknown): boolean => (event as PipeStreamEvent).eventName === 'INSERT' && imageOf(event)?.iefRecordType?.S === 'OutboxEvent.v1';
/** What the example's input template renders: the envelope string. */
const envelopeOf = (event: unknown): string => imageOf(event)?.iefEnvelope?.S ?? 'no envelope';

let client: DynamoDBClient;
let streams: DynamoDBStreamsClient;

beforeAll(() => {
  client = localClient();
  streams = new DynamoDBStreamsClient({ endpoint: inject('dynamoDbEndpoint'), region: 'us-east-1', credentials: LOCAL_CREDENTIALS });
});

/** A topic stand-in that records what it is given. */
class RecordingTarget implements RelayTarget {
  public readonly messages: string[] = [];
  public constructor(public readonly refusesBatch?: (messages: readonly string[]) => string | undefined) {}
  public publish(message: string): { readonly messageId: string } {
    this.messages.push(message);
    return { messageId: `message-${this.messages.length}` };
  }
}

/** An observer that records the relay's reports. */
function recordingObserver() {
  const records: { relay: string; eventId?: string; published: boolean; duplicate: boolean }[] = [];
  const faults: { kind: FaultKind; subject: string; count?: number }[] = [];
  const gaveUp: { relay: string; eventIds: readonly string[]; reason: string; deadLetterQueue?: string }[] = [];
  const observer: SimulationObserver = {
    onStreamRecord: (relay, record) => records.push({ relay, ...record }),
    onFault: (kind, subject, detail) => faults.push({ kind, subject, ...(detail?.count === undefined ? {} : { count: detail.count }) }),
    onRelayGaveUp: (relay, given) => gaveUp.push({ relay, ...given }),
  };
  return { observer, records, faults, gaveUp };
}

interface Setup {
  readonly tableName: string;
  readonly streamArn: string;
  readonly target: RecordingTarget;
  readonly reports: ReturnType<typeof recordingObserver>;
  readonly relay: SimulatedRelay;
}

/** A fresh outbox table (its own stream) and a relay on it. */
async function setUp(
  options: {
    duplicateRate?: number;
    relayFailureRate?: number;
    relay?: Partial<RelayModel>;
    render?: (event: unknown) => string;
    deadLetterQueue?: SimulatedQueue;
    authorizeDeadLetter?: () => string | undefined;
    authorizePublish?: () => string | undefined;
    refusesBatch?: (messages: readonly string[]) => string | undefined;
    /** A target other than the recording one (a queue target). */
    target?: RelayTarget;
    /** @default the example's filter (outbox INSERTs) */
    filters?: readonly ((event: unknown) => boolean)[];
  } = {},
): Promise<Setup> {
  const tableName = uniqueTableName('Outbox');
  const local = (await createTables(client, [OUTBOX_TABLE], () => tableName)).get(OUTBOX_TABLE.key);
  if (local?.streamArn === undefined) throw new Error('the outbox has no stream');
  const target = new RecordingTarget(options.refusesBatch);
  const reports = recordingObserver();
  const relay = new SimulatedRelay({
    model: { ...RELAY, ...options.relay },
    streamArn: local.streamArn,
    streams,
    target: options.target ?? target,
    faults: new FaultPlan('relay-test', { ...NO_FAULTS, duplicate: options.duplicateRate ?? 0, relayFailure: options.relayFailureRate ?? 0 }),
    region: REGION,
    observer: reports.observer,
    filters: options.filters ?? [isOutboxInsert],
    render: options.render ?? envelopeOf,
    pipeArn: PIPE_ARN,
    ...(options.deadLetterQueue === undefined ? {} : { deadLetterQueue: options.deadLetterQueue }),
    ...(options.authorizeDeadLetter === undefined ? {} : { authorizeDeadLetter: options.authorizeDeadLetter }),
    ...(options.authorizePublish === undefined ? {} : { authorizePublish: options.authorizePublish }),
  });
  return { tableName, streamArn: local.streamArn, target, reports, relay };
}

/** An outbox item as the runtime writes it: the envelope JSON under iefEnvelope. */
function outboxItem(eventId: string, padding = '') {
  return {
    pk: { S: `outbox#${eventId}` },
    sk: { S: 'event' },
    iefRecordType: { S: 'OutboxEvent.v1' },
    iefEnvelope: { S: JSON.stringify({ id: eventId, type: 'OrderPlaced', data: { orderId: eventId, ...(padding === '' ? {} : { padding }) } }) },
    expiresAt: { N: String(Math.floor(Date.now() / 1000) + 3600) },
  };
}

const putOutboxEvent = (tableName: string, eventId: string) => client.send(new PutItemCommand({ TableName: tableName, Item: outboxItem(eventId) }));
const idsOf = (messages: readonly string[]) => messages.map((message) => (JSON.parse(message) as { id: string }).id);

describe('SimulatedRelay against DynamoDB Local', () => {
  test('publishes only the records that pass the filter, in stream order, and reports every record read', async () => {
    const { tableName, target, reports, relay } = await setUp();
    await putOutboxEvent(tableName, 'e1');
    await client.send(new PutItemCommand({ TableName: tableName, Item: { pk: { S: 'order#1' }, sk: { S: 'state' }, iefRecordType: { S: 'Other' } } }));
    await putOutboxEvent(tableName, 'e2');
    await client.send(new UpdateItemCommand({ TableName: tableName, Key: { pk: { S: 'outbox#e1' }, sk: { S: 'event' } }, UpdateExpression: 'SET touched = :t', ExpressionAttributeValues: { ':t': { S: 'yes' } } }));
    await putOutboxEvent(tableName, 'e3');

    expect(await relay.poll()).toBe(5);

    expect(idsOf(target.messages)).toEqual(['e1', 'e2', 'e3']);
    expect(reports.records).toEqual([
      { relay: RELAY.key, eventId: 'e1', published: true, duplicate: false },
      { relay: RELAY.key, published: false, duplicate: false },
      { relay: RELAY.key, eventId: 'e2', published: true, duplicate: false },
      { relay: RELAY.key, published: false, duplicate: false },
      { relay: RELAY.key, eventId: 'e3', published: true, duplicate: false },
    ]);
    expect(reports.faults).toEqual([]);
  });

  test('a second poll does not republish; records written later are relayed by the next poll', async () => {
    const { tableName, target, relay } = await setUp({ relay: { batchSize: 2 } });
    for (const id of ['a', 'b', 'c', 'd', 'e']) await putOutboxEvent(tableName, id);
    expect(await relay.poll()).toBe(5);
    expect(await relay.poll()).toBe(0);
    expect(idsOf(target.messages)).toEqual(['a', 'b', 'c', 'd', 'e']);

    await putOutboxEvent(tableName, 'f');
    expect(await relay.poll()).toBe(1);
    expect(idsOf(target.messages)).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
  });

  test('relays the outbox records a TransactWriteItems wrote together with a business item', async () => {
    const { tableName, target, relay } = await setUp();
    await client.send(
      new TransactWriteItemsCommand({
        TransactItems: [
          { Put: { TableName: tableName, Item: { pk: { S: 'order#7' }, sk: { S: 'state' }, status: { S: 'PLACED' } }, ConditionExpression: 'attribute_not_exists(pk)' } },
          { Put: { TableName: tableName, Item: outboxItem('t1') } },
          { Put: { TableName: tableName, Item: outboxItem('t2') } },
        ],
      }),
    );
    expect(await relay.poll()).toBe(3);
    expect(idsOf(target.messages).sort()).toEqual(['t1', 't2']);
  });

  test('the event has the shape AWS documents for a DynamoDB stream source, attribute values in DynamoDB JSON', async () => {
    const events: unknown[] = [];
    const { tableName, streamArn, relay } = await setUp({ render: (event) => (events.push(event), envelopeOf(event)) });
    const before = Math.floor(Date.now() / 1000);
    await client.send(new PutItemCommand({ TableName: tableName, Item: { ...outboxItem('shape'), bytes: { B: new Uint8Array([1, 2, 255]) }, count: { N: '42' } } }));
    await relay.poll();

    expect(events).toHaveLength(1);
    const event = events[0] as PipeStreamEvent;
    expect(Object.keys(event)).toEqual(['eventID', 'eventName', 'eventVersion', 'eventSource', 'awsRegion', 'dynamodb', 'eventSourceARN']);
    expect(event).toMatchObject({ eventName: 'INSERT', eventSource: 'aws:dynamodb', awsRegion: REGION, eventSourceARN: streamArn });
    expect(event.eventID).toEqual(expect.any(String));
    expect(Object.keys(event.dynamodb)).toEqual(['ApproximateCreationDateTime', 'Keys', 'NewImage', 'SequenceNumber', 'SizeBytes', 'StreamViewType']);
    expect(event.dynamodb.Keys).toEqual({ pk: { S: 'outbox#shape' }, sk: { S: 'event' } });
    expect(event.dynamodb.NewImage).toMatchObject({ bytes: { B: Buffer.from([1, 2, 255]).toString('base64') }, count: { N: '42' }, iefRecordType: { S: 'OutboxEvent.v1' } });
    expect(event.dynamodb.StreamViewType).toBe('NEW_IMAGE');
    expect(event.dynamodb.SequenceNumber).toMatch(/^\d+$/);
    // epoch seconds (DynamoDB Local rounds down to the minute)
    expect(event.dynamodb.ApproximateCreationDateTime).toBeGreaterThanOrEqual(before - 60);
    expect(event.dynamodb.ApproximateCreationDateTime).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000));
  });

  test('a duplicate-delivery fault publishes the record twice and is reported', async () => {
    const { tableName, target, reports, relay } = await setUp({ duplicateRate: 1 });
    await putOutboxEvent(tableName, 'd1');
    await putOutboxEvent(tableName, 'd2');
    await relay.poll();
    expect(idsOf(target.messages)).toEqual(['d1', 'd1', 'd2', 'd2']);
    expect(reports.records).toEqual([
      { relay: RELAY.key, eventId: 'd1', published: true, duplicate: true },
      { relay: RELAY.key, eventId: 'd2', published: true, duplicate: true },
    ]);
    expect(reports.faults).toEqual([
      { kind: 'duplicate-delivery', subject: RELAY.key },
      { kind: 'duplicate-delivery', subject: RELAY.key },
    ]);
  });

  test("duplicates follow the fault plan: keyed by the relay, the record's event name and its item key", async () => {
    const events: PipeStreamEvent[] = [];
    const { tableName, target, reports, relay } = await setUp({ duplicateRate: 0.5, render: (event) => (events.push(event as PipeStreamEvent), envelopeOf(event)) });
    for (let index = 0; index < 12; index++) await putOutboxEvent(tableName, `r${index}`);
    await relay.poll();
    const plan = new FaultPlan('relay-test', { ...NO_FAULTS, duplicate: 0.5 });
    const expected = events
      .filter((event) => plan.happens(0.5, 'duplicate-delivery', RELAY.key, event.eventName, JSON.stringify(event.dynamodb.Keys)))
      .map((event) => idsOf([envelopeOf(event)])[0]);
    const duplicated = reports.records.filter((record) => record.duplicate).map((record) => record.eventId);
    expect(duplicated).toEqual(expected);
    expect(duplicated.length).toBeGreaterThan(0);
    expect(duplicated.length).toBeLessThan(12);
    expect(target.messages).toHaveLength(12 + duplicated.length);
  });

  test("each write of one item draws its own faults: an ordered aggregate's head item, rewritten by every event, does not share one draw", async () => {
    // the ordered outbox rewrites its aggregate's head item with each event (a MODIFY of the same key): keyed by the item
    // alone, every event of the aggregate after the first was duplicated, or none was
    const headOf = (eventId: string) => ({ ...outboxItem(eventId), pk: { S: 'aggregate#order-1' }, sk: { S: 'head' } });
    // no filter: the head item's INSERT and its MODIFYs all pass
    const { tableName, reports, relay } = await setUp({ duplicateRate: 0.5, filters: [] });
    for (let index = 0; index < 12; index++) await client.send(new PutItemCommand({ TableName: tableName, Item: headOf(`h${index}`) }));
    await relay.poll();
    const modified = reports.records.filter((record) => record.eventId !== undefined && record.eventId !== 'h0');
    expect(modified).toHaveLength(11);
    const duplicated = modified.filter((record) => record.duplicate).length;
    expect(duplicated).toBeGreaterThan(0);
    expect(duplicated).toBeLessThan(11);
  });

  test('when rendering a record fails, the poll rejects naming the relay and the record, and the next poll resumes at that record', async () => {
    let failNext = true;
    const { tableName, target, relay } = await setUp({
      render: (event) => {
        const envelope = envelopeOf(event);
        if (envelope.includes('"id":"x2"') && failNext) {
          failNext = false;
          throw new Error('template failed');
        }
        return envelope;
      },
    });
    for (const id of ['x1', 'x2', 'x3']) await putOutboxEvent(tableName, id);
    await expect(relay.poll()).rejects.toThrow(new RegExp(`^relay ${RELAY.key}: relaying stream record \\S+ \\(sequence number \\d+\\) on stream .* failed: template failed$`));
    expect(idsOf(target.messages)).toEqual(['x1']);
    expect(await relay.poll()).toBe(2);
    expect(idsOf(target.messages)).toEqual(['x1', 'x2', 'x3']);
  });

  test('StartingPosition LATEST: records written before the first poll are not relayed, later ones are', async () => {
    const { tableName, target, relay } = await setUp({ relay: { startingPosition: 'LATEST' } });
    await putOutboxEvent(tableName, 'before');
    expect(await relay.poll()).toBe(0);
    await putOutboxEvent(tableName, 'after');
    expect(await relay.poll()).toBe(1);
    expect(idsOf(target.messages)).toEqual(['after']);
  });

  test('concurrent polls run one after the other and publish each record once', async () => {
    const { tableName, target, relay } = await setUp();
    for (const id of ['p1', 'p2', 'p3']) await putOutboxEvent(tableName, id);
    const counts = await Promise.all([relay.poll(), relay.poll(), relay.poll()]);
    expect(counts.reduce((sum, count) => sum + count, 0)).toBe(3);
    expect(idsOf(target.messages)).toEqual(['p1', 'p2', 'p3']);
  });

  describe('publish failures, under the pipe\'s retry policy', () => {
    const deadLetterQueue = () => makeQueue(queueModel('RelayDeadLetterQueue', { messageRetentionSeconds: 1_209_600 }), { clock: frozenClock() });
    type BatchInfo = { requestContext: { pipeArn: string; condition: string; approximateInvokeCount: number }; DDBStreamBatchInfo: Record<string, unknown> };
    const batchInfoOf = (queue: SimulatedQueue): BatchInfo[] => queue.messages().map((message) => JSON.parse(message.body) as BatchInfo);

    test('retries a failing publish and publishes it once an attempt succeeds, counting the failed attempts', async () => {
      const { tableName, target, reports, relay } = await setUp({ relayFailureRate: 0.5, deadLetterQueue: deadLetterQueue() });
      const ids = Array.from({ length: 12 }, (_, index) => `retried-${index}`);
      for (const id of ids) await putOutboxEvent(tableName, id);
      await relay.poll();
      // at rate 0.5 the chance that one of 12 records fails 11 attempts in a row is below 1%; the seed is fixed
      expect(idsOf(target.messages)).toEqual(ids);
      const failed = reports.faults.filter((fault) => fault.kind === 'relay-publish-failure').reduce((sum, fault) => sum + (fault.count ?? 1), 0);
      expect(failed).toBeGreaterThan(0);
      expect(reports.gaveUp).toEqual([]);
    });

    test('gives up after MaximumRetryAttempts and puts the stream batch metadata on the dead-letter queue, one message per record with bisection', async () => {
      const queue = deadLetterQueue();
      const { tableName, streamArn, target, reports, relay } = await setUp({ relayFailureRate: 1, deadLetterQueue: queue, relay: { maximumRetryAttempts: 2, bisectOnFailure: true } });
      for (const id of ['d1', 'd2']) await putOutboxEvent(tableName, id);
      await relay.poll();

      expect(target.messages).toEqual([]);
      // the first attempt and two retries failed, per record
      expect(reports.faults).toEqual([
        { kind: 'relay-publish-failure', subject: RELAY.key, count: 3 },
        { kind: 'relay-publish-failure', subject: RELAY.key, count: 3 },
      ]);
      expect(reports.gaveUp).toEqual([
        { relay: RELAY.key, eventIds: ['d1'], reason: expect.stringContaining('3 publish attempt(s) failed (injected) and its retries ran out (MaximumRetryAttempts 2'), deadLetterQueue: queue.model.key },
        { relay: RELAY.key, eventIds: ['d2'], reason: expect.stringContaining('its retries ran out'), deadLetterQueue: queue.model.key },
      ]);
      const letters = batchInfoOf(queue);
      expect(letters).toHaveLength(2);
      for (const letter of letters) {
        expect(letter.requestContext).toEqual({ pipeArn: PIPE_ARN, condition: 'RetryAttemptsExhausted', approximateInvokeCount: 3 });
        expect(letter.DDBStreamBatchInfo).toMatchObject({ batchSize: 1, streamArn, shardId: expect.stringMatching(/^shardId-/) });
        // a batch of one record: it starts and ends at that record
        expect(letter.DDBStreamBatchInfo.startSequenceNumber).toBe(letter.DDBStreamBatchInfo.endSequenceNumber);
      }
      // no record body in a dead letter: it points into the stream
      expect(queue.messages().map((message) => message.body).join('')).not.toContain('OrderPlaced');
    });

    test('without bisection, what a batch gave up on is one dead letter spanning its sequence numbers', async () => {
      const queue = deadLetterQueue();
      const { tableName, reports, relay } = await setUp({ relayFailureRate: 1, deadLetterQueue: queue, relay: { maximumRetryAttempts: 0, bisectOnFailure: false } });
      for (const id of ['b1', 'b2', 'b3']) await putOutboxEvent(tableName, id);
      await relay.poll();

      expect(reports.gaveUp).toEqual([{ relay: RELAY.key, eventIds: ['b1', 'b2', 'b3'], reason: expect.stringContaining('1 publish attempt(s) failed'), deadLetterQueue: queue.model.key }]);
      const [letter] = batchInfoOf(queue);
      expect(letter?.DDBStreamBatchInfo.batchSize).toBe(3);
      expect(BigInt(String(letter?.DDBStreamBatchInfo.endSequenceNumber))).toBeGreaterThan(BigInt(String(letter?.DDBStreamBatchInfo.startSequenceNumber)));
    });

    test('infinite retries and record age: retried until the stream trims the record, and lost even with a dead-letter queue', async () => {
      const queue = deadLetterQueue();
      const { tableName, reports, relay } = await setUp({ relayFailureRate: 1, deadLetterQueue: queue, relay: { maximumRetryAttempts: -1, maximumRecordAgeSeconds: -1 } });
      await putOutboxEvent(tableName, 'trimmed');
      await relay.poll();

      expect(queue.messages()).toEqual([]);
      expect(reports.gaveUp).toEqual([{ relay: RELAY.key, eventIds: ['trimmed'], reason: expect.stringContaining('until DynamoDB Streams trimmed it after 24 hours') }]);
    });

    test("a batch too large for one PublishBatch is refused as SNS refuses it, on every attempt, and given up; a batch that fits is published", async () => {
      const queue = deadLetterQueue();
      const topic = new SimulatedTopic({
        model: { key: 'Stack/Topic', stackName: 'Stack', logicalId: 'Topic', fifo: false, maximumMessageSize: 262_144 },
        arn: 'arn:aws:sns:eu-west-1:000000000000:Topic',
        subscriptions: [],
        faults: new FaultPlan('seed', NO_FAULTS),
        clock: frozenClock(),
        matches: () => true,
      });
      const { tableName, target, reports, relay } = await setUp({
        deadLetterQueue: queue,
        relay: { batchSize: 10, maximumRetryAttempts: 2, bisectOnFailure: false },
        refusesBatch: (messages) => topic.refusesBatch(messages),
      });
      // ten events of 30 KB: each fits a message, the ten together do not fit one 256 KiB PublishBatch
      const ids = Array.from({ length: 10 }, (_, index) => `large-${index}`);
      for (const id of ids) await client.send(new PutItemCommand({ TableName: tableName, Item: outboxItem(id, 'x'.repeat(30_000)) }));
      await relay.poll();

      expect(target.messages).toEqual([]);
      expect(reports.gaveUp).toEqual([
        {
          relay: RELAY.key,
          eventIds: ids,
          reason: expect.stringMatching(/^3 publish attempt\(s\) failed \(SNS refused its batch: BatchRequestTooLong: a PublishBatch of 10 messages of 300,\d{3} bytes together to topic Stack\/Topic, whose MaximumMessageSize is 262,144 bytes\) and its retries ran out/),
          deadLetterQueue: queue.model.key,
        },
      ]);
      // not a fault the plan injected: SNS refuses it every time
      expect(reports.faults).toEqual([]);

      const fitting = Array.from({ length: 8 }, (_, index) => `fits-${index}`);
      for (const id of fitting) await client.send(new PutItemCommand({ TableName: tableName, Item: outboxItem(id, 'x'.repeat(30_000)) }));
      await relay.poll();
      expect(idsOf(target.messages)).toEqual(fitting);
    });

    describe('to an SQS FIFO queue target (the ordered relay), by the same retry policy', () => {
      const GROUP = '$.dynamodb.NewImage.iefAggregateId.S';
      const fifoTarget = () => {
        const fifo = makeQueue(queueModel('RelayQueue', { fifo: true, queueName: 'relay.fifo' }), { clock: frozenClock() });
        return { fifo, target: relayQueueTarget({ queue: fifo.model.key, messageGroupId: GROUP, messageDeduplicationId: '$.dynamodb.NewImage.eventId.S' }, fifo) };
      };
      const putOrderedEvent = (tableName: string, eventId: string, aggregateId?: string) =>
        client.send(new PutItemCommand({ TableName: tableName, Item: { ...outboxItem(eventId), eventId: { S: eventId }, ...(aggregateId === undefined ? {} : { iefAggregateId: { S: aggregateId } }) } }));

      test('failed sends are retried; a record whose retries run out is dead-lettered and never reaches the queue', async () => {
        const queue = deadLetterQueue();
        const { fifo, target } = fifoTarget();
        const { tableName, reports, relay } = await setUp({ target, relayFailureRate: 1, deadLetterQueue: queue, relay: { maximumRetryAttempts: 2 } });
        await putOrderedEvent(tableName, 'q1', 'order-1');
        await relay.poll();

        expect(fifo.messages()).toEqual([]);
        expect(reports.gaveUp).toEqual([{ relay: RELAY.key, eventIds: ['q1'], reason: expect.stringMatching(/^3 publish attempt\(s\) failed \(injected\) and its retries ran out/), deadLetterQueue: queue.model.key }]);
        expect(reports.faults).toEqual([{ kind: 'relay-publish-failure', subject: RELAY.key, count: 3 }]);
      });

      test('a send the queue refuses (the group path finds nothing) fails every attempt and is dead-lettered, named; the records after it are sent', async () => {
        const queue = deadLetterQueue();
        const { fifo, target } = fifoTarget();
        const { tableName, reports, relay } = await setUp({ target, deadLetterQueue: queue, relay: { maximumRetryAttempts: 2 } });
        await putOrderedEvent(tableName, 'no-group');
        await putOrderedEvent(tableName, 'grouped', 'order-1');
        await relay.poll();

        expect(fifo.receive(10).map((message) => [message.attributes.MessageGroupId, message.attributes.MessageDeduplicationId])).toEqual([['order-1', 'grouped']]);
        expect(reports.gaveUp).toEqual([
          {
            relay: RELAY.key,
            eventIds: ['no-group'],
            reason: expect.stringMatching(
              /^3 publish attempt\(s\) failed \(SQS refused the send: MissingRequiredParameterException: the request must contain the parameter MessageGroupId .*\(SqsQueueParameters\.MessageGroupId \$\.dynamodb\.NewImage\.iefAggregateId\.S finds no string in the stream record\)\) and its retries ran out/,
            ),
            deadLetterQueue: queue.model.key,
          },
        ]);
        // not a fault the plan injected: SQS refuses it every time
        expect(reports.faults).toEqual([]);
      });
    });

    test('a pipe without a dead-letter queue discards what it gives up on, and says so', async () => {
      const { tableName, reports, relay } = await setUp({ relayFailureRate: 1, relay: { maximumRetryAttempts: 1 } });
      await putOutboxEvent(tableName, 'discarded');
      await relay.poll();
      expect(reports.gaveUp).toEqual([{ relay: RELAY.key, eventIds: ['discarded'], reason: expect.stringContaining('the pipe has no dead-letter queue (DeadLetterConfig), so the record is discarded') }]);
    });

    test('a publish IAM denies goes straight to the dead-letter queue; one the pipe may not send there either is lost', async () => {
      const queue = deadLetterQueue();
      const denied = await setUp({ deadLetterQueue: queue, authorizePublish: () => 'no identity-based policy allows the sns:Publish action' });
      await putOutboxEvent(denied.tableName, 'denied');
      await denied.relay.poll();
      expect(denied.reports.faults).toEqual([]);
      expect(denied.reports.gaveUp).toEqual([
        { relay: RELAY.key, eventIds: ['denied'], reason: 'the pipe may not publish to its topic: no identity-based policy allows the sns:Publish action', deadLetterQueue: queue.model.key },
      ]);
      expect(batchInfoOf(queue)[0]?.requestContext.condition).toBe('AccessDenied');

      const nowhere = await setUp({
        deadLetterQueue: deadLetterQueue(),
        authorizePublish: () => 'no identity-based policy allows the sns:Publish action',
        authorizeDeadLetter: () => 'no identity-based policy allows the sqs:SendMessage action',
      });
      await putOutboxEvent(nowhere.tableName, 'nowhere');
      await nowhere.relay.poll();
      expect(nowhere.reports.gaveUp).toEqual([{ relay: RELAY.key, eventIds: ['nowhere'], reason: expect.stringContaining('; and no identity-based policy allows the sqs:SendMessage action') }]);
    });
  });
});
