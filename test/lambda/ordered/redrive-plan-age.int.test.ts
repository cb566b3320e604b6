/**
 * planOrderedRedrive ages the events it has no inbox record of, as the consumer does (review r8b, R8b-10): at or below
 * the fence, the absence of a record proves an event never applied only while a record of an application would still
 * be live, i.e. while the event is younger than the subscriber's deduplication window (from its write time,
 * `iefwrittenat`, never from the producer's `time`). Past it (the outbox keeps history for 90 days, the inbox 30),
 * or when its age can not be proven (no write time, or one later than now), the plan must not call it "never applied,
 * write it again" (`reused`): that is a second application. It is `unproven`. DynamoDB Local.
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

const SUBSCRIBER = 'aged-ledger';
const WINDOW_SECONDS = 3600;
let client: DynamoDBClient;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;
let outbox: ProducerConfig;

beforeAll(async () => {
  client = localClient();
  [inboxConfig, ledgerTable, outbox] = await Promise.all([
    createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: WINDOW_SECONDS }),
    createKeyedTable(client, 'aged-ledger'),
    createOutbox(client, { eventSource: 'orders' }),
  ]);
});
afterAll(() => client.destroy());

const consumer = () => stepLedgerConsumer(client, inboxConfig, ledgerTable);

async function appliedPair(): Promise<{ aggregateId: string; first: OrderedEnvelope; second: OrderedEnvelope }> {
  const aggregateId = `aged-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;
  const producer = new OrderedOutbox({ client, config: outbox });
  const [first] = await producer.transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step: 'placed' } }] });
  const [second] = await producer.transactWrite({ events: [{ type: 'Step', aggregateId, subject: aggregateId, data: { step: 'paid' } }] });
  for (const envelope of [first!, second!]) expect((await consumer()({ Records: [sqsRecord(JSON.stringify(envelope))] })).batchItemFailures).toEqual([]);
  return { aggregateId, first: first!, second: second! };
}

const at = (epochMs: number) => () => new Date(epochMs);
const fencesOf = () => new SequenceFences({ client, tableName: inboxConfig.inboxTableName, subscriberName: SUBSCRIBER });
const recordsAt = (now: () => Date, window: 'with the window' | 'without it' = 'with the window') =>
  new OrderedEventRecords({ client, tableName: inboxConfig.inboxTableName, subscriberName: SUBSCRIBER, now, ...(window === 'without it' ? {} : { deduplicationWindowSeconds: WINDOW_SECONDS }) });
const ids = (letters: ReadonlyArray<{ id: string }> | undefined) => (letters ?? []).map((letter) => letter.id);

describe('planOrderedRedrive: an event below the fence without an inbox record, by its age', () => {
  test('applied, then older than the window (its record expired): unproven, never "never applied, write it again"', async () => {
    const { first } = await appliedPair();
    const later = at(Date.now() + (WINDOW_SECONDS + 120) * 1000);
    const plan = await planOrderedRedrive([{ id: 'replayed-1', body: JSON.stringify(first) }], fencesOf(), recordsAt(later));
    expect(ids(plan.reused)).toEqual([]);
    expect(ids(plan.unproven)).toEqual(['replayed-1']);
    expect(plan.unproven[0]!.why).toMatch(/older than the subscriber's deduplication window/);
    expect(plan.redrive).toEqual([]);
  });

  test('within the window, its live record shows it applied; a never-applied event at the same age is still reused', async () => {
    const { aggregateId, first } = await appliedPair();
    const within = at(Date.now() + 60_000);
    const never = { ...first, id: `never-${aggregateId}` };
    const plan = await planOrderedRedrive([{ id: 'copy-1', body: JSON.stringify(first) }, { id: 'never-1', body: JSON.stringify(never) }], fencesOf(), recordsAt(within));
    expect(ids(plan.alreadyApplied)).toEqual(['copy-1']);
    expect(ids(plan.reused)).toEqual(['never-1']);
    expect(ids(plan.unproven)).toEqual([]);
  });

  test('no write time (an older runtime, another producer, by hand), or one later than now: its age is unproven, whatever its time says', async () => {
    const { aggregateId, first } = await appliedPair();
    const now = Date.now();
    const { iefwrittenat: _written, ...withoutWriteTime } = first as OrderedEnvelope & { iefwrittenat?: number };
    const noWriteTime = { ...withoutWriteTime, id: `no-write-time-${aggregateId}`, time: new Date(now).toISOString() };
    const futureWriteTime = { ...first, id: `future-${aggregateId}`, iefwrittenat: now + 40 * 86_400_000 };
    const plan = await planOrderedRedrive([{ id: 'no-write-time', body: JSON.stringify(noWriteTime) }, { id: 'future', body: JSON.stringify(futureWriteTime) }], fencesOf(), recordsAt(at(now)));
    expect(ids(plan.reused)).toEqual([]);
    expect(ids(plan.unproven).sort()).toEqual(['future', 'no-write-time']);
    expect(plan.unproven.find((letter) => letter.id === 'no-write-time')!.why).toMatch(/does not say when it was written/);
    expect(plan.unproven.find((letter) => letter.id === 'future')!.why).toMatch(/later than now/);
  });

  test('records read without the window prove no age: an unrecorded event is unproven, not reused', async () => {
    const { aggregateId, first } = await appliedPair();
    const never = { ...first, id: `never-${aggregateId}` };
    const plan = await planOrderedRedrive([{ id: 'never-1', body: JSON.stringify(never) }], fencesOf(), recordsAt(at(Date.now()), 'without it'));
    expect(ids(plan.reused)).toEqual([]);
    expect(ids(plan.unproven)).toEqual(['never-1']);
    expect(plan.unproven[0]!.why).toMatch(/deduplication window/);
  });
});
