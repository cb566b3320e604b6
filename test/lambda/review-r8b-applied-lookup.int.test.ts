/**
 * Review r8b, R8b-8: the look-up a consumer makes when an offloaded event's object is missing (consumer/applied-lookup.ts)
 * answers for the sequence as the batch read does (known-records.ts `recognise`): an ordered subscriber's record of the
 * event at another sequence (the event written again further on, after an outbox restore: review r38, R38-9) does not
 * make the copy a duplicate; the copy goes on to its path (the fence must pass its sequence). Against DynamoDB Local.
 */
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { appliedRecordLookup } from '../../lambda/consumer/applied-lookup';
import { ORDERED_INBOX_ITEM } from '../../lambda/contract/ordered-wire-format';
import { INBOX_ITEM, recordKey, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import type { EventEnvelope } from '../../lambda/envelope';
import type { FaultProxy } from '../support/fault-proxy';
import { createInbox } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';

let client: DynamoDBClient;
let proxy: FaultProxy;
let tableName: string;

beforeAll(async () => {
  ({ client, proxy } = await startTestbed());
  ({ inboxTableName: tableName } = await createInbox(client, { subscriberName: 'ledger', deduplicationWindowSeconds: 3600 }));
});
afterAll(async () => {
  await proxy.stop();
});

const FINGERPRINT = `sha256:${'c'.repeat(64)}`;

async function record(eventId: string, orderedSequence?: number): Promise<void> {
  await client.send(
    new PutItemCommand({
      TableName: tableName,
      Item: {
        [TABLE_SCHEMA.PARTITION_KEY]: { S: recordKey('ledger', eventId) },
        [TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE]: { N: String(Math.floor(Date.now() / 1000) + 3600) },
        [INBOX_ITEM.FINGERPRINT_ATTRIBUTE]: { S: FINGERPRINT },
        ...(orderedSequence === undefined ? {} : { [ORDERED_INBOX_ITEM.SEQUENCE_ATTRIBUTE]: { N: String(orderedSequence) } }),
      },
    }),
  );
}

function lookup() {
  const source = { client: DynamoDBDocumentClient.from(client), tableName, subscriberName: 'ledger', accepts: 'inbox-or-completed' as const };
  return appliedRecordLookup(source, () => new Date(), 'batch-get');
}

const envelopeOf = (id: string) => ({ specversion: '1.0', id, source: 's', type: 'Posted', datacontenttype: 'application/json' }) as unknown as EventEnvelope<unknown>;

describe('R8b-8: the missing-object look-up of an ordered subscriber answers for the delivered sequence', () => {
  test('a record of the event at another sequence is not a duplicate; at the same sequence it is', async () => {
    const id = `posted-${crypto.randomUUID()}`;
    await record(id, 3);
    expect(await lookup()(envelopeOf(id), FINGERPRINT, () => 5)).toBeUndefined();
    expect(await lookup()(envelopeOf(id), FINGERPRINT, () => 3)).toBe('duplicate');
  });

  test('a record without a sequence (not ordered), or a copy whose sequence is not asked, is answered by its fingerprint as before', async () => {
    const id = `posted-${crypto.randomUUID()}`;
    await record(id);
    expect(await lookup()(envelopeOf(id), FINGERPRINT, () => 5)).toBe('duplicate');
    expect(await lookup()(envelopeOf(id), FINGERPRINT)).toBe('duplicate');
  });
});
