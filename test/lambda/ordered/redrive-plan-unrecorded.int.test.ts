/**
 * planOrderedRedrive and a dead letter below the fence that carries no error name (the ordered model's counterexample
 * on s5-b38, seed -1770662656): after the outbox table is replaced (or restored), the old table's event #1 crashed on
 * its only receive and SQS moved it to the dead-letter queue after maxReceiveCount (no `iefErrorName`); the new table's
 * #1 and #2 were applied. The letter is below the fence, but it was never applied: the plan must check its inbox
 * record (as the consumer does), never count it "applied already" and have the operator delete it. DynamoDB Local.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { OrderedEventRecords } from '../../../operator/ordered/ordered-event-records';
import { planOrderedRedrive } from '../../../operator/ordered/redrive-plan';
import { SequenceFences } from '../../../operator/ordered/sequence-fences';
import { localClient } from '../../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../../support/proof/tables';
import { stepLedgerConsumer } from '../../support/step-ledger';
import { sqsRecord } from '../helpers';

const SUBSCRIBER = 'unrecorded-ledger';
let client: DynamoDBClient;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;

beforeAll(async () => {
  client = localClient();
  [inboxConfig, ledgerTable] = await Promise.all([createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 }), createKeyedTable(client, 'unrecorded-ledger')]);
});
afterAll(() => client.destroy());

const consumer = () => stepLedgerConsumer(client, inboxConfig, ledgerTable);

async function emit(config: ProducerConfig, aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config }).transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

describe('planOrderedRedrive: a dead letter below the fence without an error name', () => {
  test('after a replaced outbox table, the old never-applied #1 (moved by SQS, no error name) is a letter to write again, not "applied already"; a copy of an applied event still is', async () => {
    const aggregateId = `unrecorded-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
    const old = await emit(await createOutbox(client, { eventSource: 'orders' }), aggregateId, 'placed'); // never applied: SQS moved it
    const replaced = await createOutbox(client, { eventSource: 'orders' });
    const first = await emit(replaced, aggregateId, 'paid');
    const second = await emit(replaced, aggregateId, 'shipped');
    expect([old.sequence, first.sequence]).toEqual(['0000000000000001', '0000000000000001']);
    for (const envelope of [first, second]) expect((await consumer()({ Records: [sqsRecord(JSON.stringify(envelope))] })).batchItemFailures).toEqual([]);
    const fences = new SequenceFences({ client, tableName: inboxConfig.inboxTableName, subscriberName: SUBSCRIBER });
    // within the window (3600 s): no record of the old #1 proves it never applied (older, it would be unproven)
    const records = new OrderedEventRecords({ client, tableName: inboxConfig.inboxTableName, subscriberName: SUBSCRIBER, deduplicationWindowSeconds: 3600 });

    const plan = await planOrderedRedrive([{ id: 'dl-old', body: JSON.stringify(old) }, { id: 'dl-copy', body: JSON.stringify(first) }], fences, records);

    expect(plan.alreadyApplied.map((letter) => letter.id)).toEqual(['dl-copy']);
    expect(plan.reused.map((letter) => letter.id)).toEqual(['dl-old']);
    expect(plan.redrive).toEqual([]);
  });
});
