/**
 * Review r8b's findings on issue 42 (the claim-check), against DynamoDB Local and the local S3 (s3rver behind the
 * simulator's S3 endpoint).
 *
 * R8b-6: an event committed again (`transactWriteOnce` after the outbox's `eventRetention` removed its item: it writes
 * the events again) is the same event whatever the key order of its data and whether it travels inline or offloaded:
 * its fingerprint is the one of `payloadFingerprint` (type, subject, canonical data) on both paths, so a consumer that
 * applied the first commit acknowledges the second as a duplicate, in every mode, instead of dead-lettering it as
 * `PayloadMismatchError` ("an event id must not be reused": an invitation to send it again under a new id).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, LeaseConsumerConfig, ProducerConfig } from '../../lambda/config';
import { createAggregateConsumer } from '../../lambda/aggregate/aggregate-consumer';
import type { ClaimCheckConfig } from '../../lambda/claim-check/claim-check-config';
import { S3PayloadStore } from '../../lambda/claim-check/payload-store';
import { TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';
import type { SqsBatchHandler } from '../../lambda/consumer/create-consumer';
import type { SQSRecord } from '../../lambda/consumer/sqs';
import type { EventEnvelope } from '../../lambda/envelope';
import { createLeaseConsumer } from '../../lambda/processing/lease-consumer';
import { createMultiStepConsumer } from '../../lambda/processing/multi-step-consumer';
import { Outbox } from '../../lambda/producer/outbox';
import type { FaultProxy } from '../support/fault-proxy';
import { createInbox, createKeyedTable, createLeaseInbox, createOutbox } from '../support/proof/tables';
import { startTestbed } from '../support/proof/testbed';
import { startLocalS3, type LocalS3 } from '../support/s3-local';
import { RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

const PREFIX = 'event-data/';

let client: DynamoDBClient;
let proxy: FaultProxy;
let s3: LocalS3;
let store: S3PayloadStore;
let bucket: string;
let inboxConfig: ConsumerConfig;
let leaseConfig: LeaseConsumerConfig;
let aggregatesTable: string;
let offloading: ClaimCheckConfig;
let inline: ClaimCheckConfig;

beforeAll(async () => {
  [{ client, proxy }, s3] = await Promise.all([startTestbed(), startLocalS3()]);
  store = new S3PayloadStore(s3.client);
  [bucket, inboxConfig, leaseConfig, aggregatesTable] = await Promise.all([
    s3.createBucket(),
    createInbox(client, { subscriberName: 'billing', deduplicationWindowSeconds: 3600 }),
    createLeaseInbox(client, { subscriberName: 'shipping', deduplicationWindowSeconds: 3600, leaseDurationSeconds: 30 }),
    createKeyedTable(client, 'orders'),
  ]);
  offloading = { bucketName: bucket, keyPrefix: PREFIX, inlineThresholdBytes: 1024 };
  inline = { ...offloading, inlineThresholdBytes: 256 * 1024 };
});
afterAll(async () => {
  await Promise.all([proxy.stop(), s3.stop()]);
});

/** A fresh outbox table: the first commit's item is gone, as after the outbox's eventRetention. */
async function freshOutbox(): Promise<ProducerConfig> {
  return createOutbox(client, { eventSource: 'orders-service', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });
}

/** Commits `data` as event `id` with transactWriteOnce on a fresh outbox table; `offload` picks the form. */
async function commit(id: string, subject: string, data: unknown, offload: boolean): Promise<EventEnvelope> {
  const outbox = new Outbox({ client, config: await freshOutbox(), claimCheck: { config: offload ? offloading : inline, store } });
  const result = await outbox.transactWriteOnce({ events: [{ id, type: 'OrderPlaced', subject, data }] });
  expect(result.written).toBe(true);
  expect(result.events[0]!.dataref !== undefined).toBe(offload);
  return result.events[0]!;
}

/** The same order's data with its keys in two orders (JSON.stringify writes them as inserted). */
function orderData(order: string, attachment = 'x'.repeat(3000)): { readonly keysFirst: unknown; readonly keysLast: unknown } {
  return { keysFirst: { orderId: order, amount: 42, attachment }, keysLast: { attachment, amount: 42, orderId: order } };
}

type Mode = 'transactional' | 'lease' | 'multi-step' | 'aggregate';

function consumer(mode: Mode, options: { batchRead?: boolean } = {}) {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const applied: string[] = [];
  const common = { client, deadLetter, logger, metricsSink: () => undefined, payloadReader: store };
  Object.assign(process.env, { IEF_PAYLOAD_BUCKET_NAME: bucket, IEF_PAYLOAD_KEY_PREFIX: PREFIX });
  let handler: SqsBatchHandler;
  const batchRead = options.batchRead === undefined ? {} : { batchRead: options.batchRead };
  if (mode === 'transactional') {
    handler = createTransactionalConsumer({ ...common, config: inboxConfig, handle: (envelope) => void applied.push(envelope.id), ...batchRead });
  } else if (mode === 'lease') {
    handler = createLeaseConsumer({ ...common, config: leaseConfig, handle: (envelope) => void applied.push(envelope.id), ...batchRead });
  } else if (mode === 'multi-step') {
    const steps = [{ name: 'ship', run: (envelope: EventEnvelope<unknown>) => (applied.push(envelope.id), { shipped: true }) }];
    handler = createMultiStepConsumer({ ...common, config: { ...leaseConfig, processingMode: 'multi-step' }, steps });
  } else {
    handler = createAggregateConsumer<unknown, { placed: number }>({
      ...common,
      config: { subscriberName: 'orders-view' },
      locate: (envelope) => ({ tableName: aggregatesTable, key: { pk: envelope.subject! } }),
      apply: (current, envelope) => (applied.push(envelope.id), { state: { placed: (current?.placed ?? 0) + 1 } }),
    });
  }
  delete process.env.IEF_PAYLOAD_BUCKET_NAME;
  delete process.env.IEF_PAYLOAD_KEY_PREFIX;
  const run = async (records: SQSRecord[]): Promise<string[]> => {
    const from = lines.length;
    await handler({ Records: records });
    const outcomeOf = new Map(lines.slice(from).filter((line) => typeof line.outcome === 'string').map((line) => [line.sqsMessageId, line.outcome as string]));
    return records.map((record) => outcomeOf.get(record.messageId) ?? 'none');
  };
  return { run, deadLetter, applied };
}

const modes: Mode[] = ['transactional', 'lease', 'multi-step', 'aggregate'];
const forms = [
  ['offloaded', 'offloaded with its keys in another order', true, true],
  ['offloaded', 'inline', true, false],
  ['inline', 'offloaded', false, true],
] as const;

describe.each(modes)('R8b-6, %s mode: the same event committed again is a duplicate', (mode) => {
  test.each(forms)('first %s, then %s', async (_first, _second, firstOffloaded, secondOffloaded) => {
    const order = `order-${crypto.randomUUID()}`;
    const id = `order-placed-${order}`;
    const { keysFirst, keysLast } = orderData(order);
    const first = await commit(id, order, keysFirst, firstOffloaded);
    const again = await commit(id, order, keysLast, secondOffloaded);
    const { run, deadLetter, applied } = consumer(mode);
    expect(await run([sqsRecord(JSON.stringify(first))])).toEqual(['processed']);
    // 'duplicate': nothing committed for the copy (a transactional handler runs before its commit finds the record)
    expect(await run([sqsRecord(JSON.stringify(again))])).toEqual(['duplicate']);
    const handlerRuns = mode === 'transactional' ? 2 : 1;
    expect({ applied: applied.length, deadLetters: deadLetter.published.map((letter) => letter.errorName) }).toEqual({ applied: handlerRuns, deadLetters: [] });
  });

  test('another payload under the id is still refused (PayloadMismatchError), whichever form each takes', async () => {
    const order = `order-${crypto.randomUUID()}`;
    const id = `order-placed-${order}`;
    const first = await commit(id, order, orderData(order).keysFirst, true);
    const other = await commit(id, order, orderData(order, 'y'.repeat(3000)).keysLast, false);
    const { run, deadLetter } = consumer(mode);
    expect(await run([sqsRecord(JSON.stringify(first))])).toEqual(['processed']);
    // (a transactional handler runs before its commit finds the id taken: what counts is that nothing is committed)
    expect(await run([sqsRecord(JSON.stringify(other))])).toEqual(['dead-lettered']);
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['PayloadMismatchError']);
  });
});

describe('R8b-6 with the batch read: a copy committed again in another form is known applied before any S3 read', () => {
  test.each(['transactional', 'lease'] as const)('%s mode', async (mode) => {
    const order = `order-${crypto.randomUUID()}`;
    const id = `order-placed-${order}`;
    const { keysFirst, keysLast } = orderData(order);
    const first = await commit(id, order, keysFirst, false);
    const again = await commit(id, order, keysLast, true);
    const other = await commit(`order-placed-${crypto.randomUUID()}`, order, keysFirst, true);
    const { run, applied } = consumer(mode, { batchRead: true });
    expect(await run([sqsRecord(JSON.stringify(first))])).toEqual(['processed']);
    // two records: a one-record batch makes no batch read
    expect(await run([sqsRecord(JSON.stringify(again)), sqsRecord(JSON.stringify(other))])).toEqual(['duplicate', 'processed']);
    expect(applied).toEqual([id, other.id]);
  });
});

describe('R8b-6 at the producer: transactWriteOnce takes its own earlier commit whatever the key order', () => {
  test('a retry with the keys in another order, offloaded both times, says written: false', async () => {
    const order = `order-${crypto.randomUUID()}`;
    const id = `order-placed-${order}`;
    const { keysFirst, keysLast } = orderData(order);
    const outbox = new Outbox({ client, config: await freshOutbox(), claimCheck: { config: offloading, store } });
    const first = await outbox.transactWriteOnce({ events: [{ id, type: 'OrderPlaced', subject: order, data: keysFirst }] });
    const retried = await outbox.transactWriteOnce({ events: [{ id, type: 'OrderPlaced', subject: order, data: keysLast }] });
    expect(retried).toEqual({ written: false, events: first.events });
  });
});

/** The envelope an earlier version wrote for the same offloaded event: no `ieffingerprint`. */
function writtenBeforeFingerprint(envelope: EventEnvelope): EventEnvelope {
  const { ieffingerprint: _fingerprint, ...older } = envelope;
  return older as EventEnvelope;
}

describe.each(modes)('R8b-6, %s mode: records written with the fingerprint of before (envelopes without ieffingerprint)', (mode) => {
  test('a copy of the old envelope is a duplicate, and so is the event committed again by this version, inline or offloaded', async () => {
    const order = `order-${crypto.randomUUID()}`;
    const id = `order-placed-${order}`;
    const { keysFirst, keysLast } = orderData(order);
    const old = writtenBeforeFingerprint(await commit(id, order, keysFirst, true));
    const offloadedAgain = await commit(id, order, keysFirst, true);
    const inlineAgain = await commit(id, order, keysFirst, false);
    const inlineReordered = await commit(id, order, keysLast, false);
    const { run, deadLetter } = consumer(mode);
    expect(await run([sqsRecord(JSON.stringify(old))])).toEqual(['processed']);
    expect(await run([sqsRecord(JSON.stringify(old))])).toEqual(['duplicate']);
    expect(await run([sqsRecord(JSON.stringify(offloadedAgain))])).toEqual(['duplicate']);
    expect(await run([sqsRecord(JSON.stringify(inlineAgain))])).toEqual(['duplicate']);
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual([]);
    // the old fingerprint digests JSON.stringify's bytes: against a record of it, key order still counts (documented)
    expect(await run([sqsRecord(JSON.stringify(inlineReordered))])).toEqual(['dead-lettered']);
  });
});

describe('R8b-6: the consumer checks ieffingerprint against the data it fetched', () => {
  test('an envelope whose ieffingerprint is not its data\'s is dead-lettered with the reason, the handler not run', async () => {
    const order = `order-${crypto.randomUUID()}`;
    const event = await commit(`order-placed-${order}`, order, orderData(order).keysFirst, true);
    const forged = { ...event, ieffingerprint: `sha256:${'a'.repeat(64)}` };
    const { run, deadLetter, applied } = consumer('lease');
    expect(await run([sqsRecord(JSON.stringify(forged))])).toEqual(['dead-lettered']);
    expect({ applied, reasons: deadLetter.published.map((letter) => [letter.errorName, letter.errorMessage]) }).toEqual({
      applied: [],
      reasons: [['PayloadUnavailableError', expect.stringContaining("offloaded data does not match the event's fingerprint")]],
    });
  });
});
