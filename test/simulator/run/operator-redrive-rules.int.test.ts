/**
 * The simulator's operator redrives by the rules of `dlq redrive`, through its code (issue 39 item 6): a dead letter
 * still blocked stays, and so does one whose redriven copy could outlive the subscriber's deduplication window. The
 * pass before moved every dead letter of the subscriber back, whatever its record or its age. The shared DynamoDB
 * Local holds the inbox records.
 */
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { describe, expect, test } from 'vitest';
import { recordKey, RECORD_STATUS, TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { parseEnvelope } from '../../../lambda/envelope';
import type { SubscriberView } from '../../../simulator/observation/run-facts';
import { dlqRedriveRules, redriveDeadLetters } from '../../../simulator/run/operator';
import { START_MS } from '../aws/queue-test-kit';
import { subscriberKit } from '../check/check-kit';
import { createTable, localClient, uniqueTableName } from '../../support/dynamodb-client';

const client = localClient();
const documents = DynamoDBDocumentClient.from(client);

/** A lease subscriber with an inbox table, each event blocked and dead-lettered by the runtime; `records` its inbox records' statuses. */
async function blockedDeadLetters(records: Readonly<Record<string, string>>, environment: Readonly<Record<string, string>> = {}) {
  const kit = subscriberKit({ maxReceiveCount: 5 });
  const table = uniqueTableName('operator-redrive');
  await createTable(client, table, { partitionKey: TABLE_SCHEMA.PARTITION_KEY });
  const subscriber: SubscriberView = { ...kit.subscriber, environment: { IEF_PROCESSING_MODE: 'lease', IEF_INBOX_TABLE_NAME: table, ...environment } };
  for (const [eventId, status] of Object.entries(records)) {
    const body = JSON.stringify({ specversion: '1.0', id: eventId, source: 'urn:test', type: 'OrderPlaced', time: new Date(START_MS).toISOString(), datacontenttype: 'application/json', data: {} });
    expect(parseEnvelope(body).id).toBe(eventId);
    kit.queue.send({ body, origin: { via: 'sns', eventId, subscription: kit.subscriber.subscription.key } });
    kit.deadLetterByRuntime(kit.queue.receive(1)[0]!, eventId);
    await client.send(new PutItemCommand({ TableName: table, Item: { [TABLE_SCHEMA.PARTITION_KEY]: { S: recordKey(subscriber.name, eventId) }, status: { S: status } } }));
  }
  return { kit, subscriber };
}

describe("the operator's redrive, by the rules of dlq redrive", () => {
  test('leaves a dead letter whose message is still blocked where it is, and moves the resolved one back', async () => {
    // GIVEN two blocked dead letters of Billing: event-1's block was resolved, event-2's is still blocked
    const { kit, subscriber } = await blockedDeadLetters({ 'event-1': RECORD_STATUS.IN_PROGRESS, 'event-2': RECORD_STATUS.BLOCKED });

    // WHEN the operator redrives
    await redriveDeadLetters(subscriber, dlqRedriveRules(subscriber, { documents, clock: kit.clock }));

    // THEN only event-1 went back to the queue; event-2 stays on the dead-letter queue (dlq redrive refuses it)
    expect(kit.queue.messages().map((message) => message.origin.eventId)).toEqual(['event-1']);
    expect(kit.deadLetterQueue.messages().map((message) => message.origin.eventId)).toEqual(['event-2']);
  });

  test('says why it left a dead letter: still blocked, resolve it first', async () => {
    const { kit, subscriber } = await blockedDeadLetters({ 'event-2': RECORD_STATUS.BLOCKED });

    const outcome = await redriveDeadLetters(subscriber, dlqRedriveRules(subscriber, { documents, clock: kit.clock }));

    expect(outcome).toEqual({ moved: 0, refused: ['event-2: it is still blocked: resolve it first (idempotent-event-flow blocked resolve), then redrive it'] });
  });

  test('leaves a dead letter whose copy could outlive an overridden deduplication window (IEF_DEDUPLICATION_WINDOW_SECONDS=60)', async () => {
    // GIVEN a resolved dead letter of a subscriber whose window was overridden to 60 s; its queue keeps a message 4 days
    const { kit, subscriber } = await blockedDeadLetters({ 'event-1': RECORD_STATUS.IN_PROGRESS }, { IEF_DEDUPLICATION_WINDOW_SECONDS: '60' });

    // WHEN the operator redrives
    await redriveDeadLetters(subscriber, dlqRedriveRules(subscriber, { documents, clock: kit.clock }));

    // THEN it stays: a copy could wait in the queue past the window, and be applied twice
    expect(kit.queue.messages()).toEqual([]);
    expect(kit.deadLetterQueue.messages().map((message) => message.origin.eventId)).toEqual(['event-1']);
  });
});
