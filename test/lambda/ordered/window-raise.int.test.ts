/**
 * The subscriber's deduplication window raised (a redeploy with a longer `deduplicationWindow`): inbox records written
 * under the old window expire by it. A copy of an applied event, older than the old window and younger than the new,
 * must not be called never applied: the consumer acknowledges it as a duplicate (its fence passed it) and the redrive
 * plan calls it unproven, never `reused` ("write it again"), which would apply it twice.
 */
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { planOrderedRedrive } from '../../../operator/ordered/redrive-plan';
import { SequenceFences } from '../../../operator/ordered/sequence-fences';
import { OrderedEventRecords } from '../../../operator/ordered/ordered-event-records';
import { TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { localClient } from '../../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../../support/proof/tables';
import { RecordingDeadLetterPublisher, recordingLogger } from '../helpers';

const SUBSCRIBER = 'Ledger';
const dynamo = localClient();
let ledgerTable: string;
let outbox: ProducerConfig;
let inbox: ConsumerConfig;
beforeAll(async () => {
  [ledgerTable, outbox, inbox] = await Promise.all([
    createKeyedTable(dynamo, 'window-raise-ledger'),
    createOutbox(dynamo, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE }),
    createInbox(dynamo, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }),
  ]);
});
afterAll(() => dynamo.destroy());

function consumer(config: ConsumerConfig, now: () => Date, deadLetter: RecordingDeadLetterPublisher) {
  return createOrderedConsumer<{ step: string }>({
    client: dynamo,
    config,
    deadLetter,
    logger: recordingLogger().logger,
    metricsSink: () => undefined,
    now,
    handle: (event, tx) =>
      tx.update({ TableName: ledgerTable, Key: { pk: event.subject as string }, UpdateExpression: 'SET steps = list_append(if_not_exists(steps, :none), :s)', ExpressionAttributeValues: { ':none': [], ':s': [event.data.step] } }),
  });
}
let receipts = 0;
const record = (envelope: OrderedEnvelope) => ({ Records: [{ messageId: `m-${++receipts}`, body: JSON.stringify(envelope), receiptHandle: `r-${receipts}`, attributes: { ApproximateReceiveCount: '1', MessageGroupId: envelope.partitionkey } } as never] });
async function emit(aggregateId: string, step: string): Promise<OrderedEnvelope> {
  return (await new OrderedOutbox({ client: dynamo, config: outbox }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step } }] }))[0]!;
}

test('after the window is raised, a copy of an applied event older than the old window is a duplicate, and the plan calls it unproven, not reused', async () => {
  const id = `acct-${Date.now()}`;
  const start = Date.now();
  const at = (minutes: number) => () => new Date(start + minutes * 60_000);
  const letters = new RecordingDeadLetterPublisher();
  const credited = await emit(id, 'credited 100');
  const debited = await emit(id, 'debited 40');
  const oneHour = consumer(inbox, at(1), letters);
  await oneHour(record(credited));
  await oneHour(record(debited));
  // redeployed with a 3-hour window; 90 minutes after the application, a copy of `credited` arrives
  const threeHours = { ...inbox, deduplicationWindowSeconds: 3 * 3600 };
  const response = await consumer(threeHours, at(91), letters)(record(credited));
  expect(response).toEqual({ batchItemFailures: [] });
  expect(letters.errorNamesByMessage()).toEqual({});
  const fences = new SequenceFences({ client: dynamo, tableName: inbox.inboxTableName, subscriberName: SUBSCRIBER });
  const records = new OrderedEventRecords({ client: dynamo, tableName: inbox.inboxTableName, subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3 * 3600, now: at(91) });
  const plan = await planOrderedRedrive([{ id: 'dl-1', body: JSON.stringify(credited) }], fences, records);
  const steps = ((await DynamoDBDocumentClient.from(dynamo).send(new GetCommand({ TableName: ledgerTable, Key: { pk: id } }))).Item?.steps as string[]) ?? [];
  expect(steps).toEqual(['credited 100', 'debited 40']);
  expect(plan.reused).toEqual([]);
  expect(plan.unproven.map((l) => l.eventId)).toEqual([credited.id]);
});
