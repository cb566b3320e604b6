/**
 * Issue 38: an operator's accepted `fence skip` drops named events on purpose. When one of them arrives afterwards
 * (a copy still in the queue, a redrive, a replay) it has no inbox record and is younger than the deduplication window,
 * which alone would make it a `SequenceReusedError` dead letter (a new event under a sequence already passed). It is
 * not new: the operator decided to drop exactly it. The fence remembers what each skip dropped (a skip record beside
 * the fence), so such an event is acknowledged unapplied with a WARN line naming the skip: no dead letter, no alarm,
 * not silent, even after later events moved the fence on. A new event under a skipped sequence (the heads went back
 * after the skip) is not the one the operator dropped: it is still dead-lettered.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { main } from '../../../simulator/cli/main';
import { localClient } from '../../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../../support/proof/tables';
import { startEmptyDeadLetterQueue, type EmptyDeadLetterQueue } from '../../support/empty-dead-letter-queue';
import { outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../helpers';

const SUBSCRIBER = 'statements';
const WINDOW_SECONDS = 3600;
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;
/** The subscriber's dead-letter queue, empty: `fence skip` reads it before it moves a fence. */
let deadLetterQueue: EmptyDeadLetterQueue;

beforeAll(async () => {
  deadLetterQueue = await startEmptyDeadLetterQueue('SkippedLateDlq.fifo');
  client = localClient();
  documents = DynamoDBDocumentClient.from(client);
  [inboxConfig, ledgerTable] = await Promise.all([
    createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: WINDOW_SECONDS }),
    createKeyedTable(client, 'ordered-skipped-late-ledger'),
  ]);
});
afterAll(async () => {
  client.destroy();
  await deadLetterQueue.stop();
});

const newOutbox = (): Promise<ProducerConfig> => createOutbox(client, { eventSource: 'payments', timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE });

function consumer() {
  const { logger, lines } = recordingLogger();
  const deadLetter = new RecordingDeadLetterPublisher();
  const handler = createOrderedConsumer<{ step: string }>({
    client,
    config: inboxConfig,
    deadLetter,
    logger,
    metricsSink: () => undefined,
    handle: (event, tx) => {
      tx.update({
        TableName: ledgerTable,
        Key: { pk: (event as unknown as { subject: string }).subject },
        UpdateExpression: 'SET steps = list_append(if_not_exists(steps, :none), :step)',
        ExpressionAttributeValues: { ':none': [], ':step': [event.data.step] },
      });
    },
  });
  return { handler, lines, deadLetter };
}

async function ledger(aggregateId: string): Promise<string[]> {
  const item = (await documents.send(new GetCommand({ TableName: ledgerTable, Key: { pk: aggregateId }, ConsistentRead: true }))).Item;
  return (item?.steps as string[] | undefined) ?? [];
}

async function emit(config: ProducerConfig, aggregateId: string, step: string): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config }).transactWrite({ events: [{ type: 'PaymentStep', aggregateId, subject: aggregateId, data: { step } }] });
  return envelope!;
}

async function deliver(handler: ReturnType<typeof consumer>['handler'], ...envelopes: OrderedEnvelope[]): Promise<void> {
  for (const envelope of envelopes) {
    const response = await handler({ Records: [sqsRecord(JSON.stringify(envelope))] });
    expect(response.batchItemFailures).toEqual([]);
  }
}

/** The operator's `fence skip --yes` (the real CLI) of the aggregate from `from` to `to`. */
async function fenceSkip(outbox: ProducerConfig, aggregateId: string, from: number, to: number): Promise<void> {
  let stderr = '';
  const code = await main(
    ['fence', 'skip', SUBSCRIBER, aggregateId, '--table', inboxConfig.inboxTableName, '--outbox-table', outbox.outboxTableName, '--dead-letter-queue', deadLetterQueue.url, '--queue', deadLetterQueue.queueUrl, '--from', String(from), '--to', String(to), '--reason', 'lost past every retention', '--yes'],
    { stdout: () => undefined, stderr: (text) => void (stderr += text), user: 'on-call', createClient: () => localClient(), createSqsClient: () => deadLetterQueue.createSqsClient() },
  );
  expect({ code, stderr: code === 0 ? '' : stderr }).toEqual({ code: 0, stderr: '' });
}

const aggregate = (name: string): string => `payment-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

describe("an event an operator's fence skip dropped, arriving later within the window", () => {
  test('is acknowledged unapplied with a WARN line naming the skip, not dead-lettered; also after later events moved the fence on', async () => {
    const id = aggregate('skipped');
    const outbox = await newOutbox();
    const { handler, lines, deadLetter } = consumer();
    const authorised = await emit(outbox, id, 'authorised');
    const captured = await emit(outbox, id, 'captured');
    const settled = await emit(outbox, id, 'settled');
    await deliver(handler, authorised);
    await fenceSkip(outbox, id, 1, 3);

    await deliver(handler, captured);
    expect(outcomesOf(lines).slice(-1)).toEqual(['duplicate']);
    const warning = lines.find((line) => line.level === 'WARN' && line.eventId === captured.id);
    expect(warning).toMatchObject({ aggregateId: id, sequence: 2 });
    expect(String(warning?.skip)).toMatch(/skipped 2\.\.3: lost past every retention \(by on-call\)/);

    // the fence moves on (its Put does not keep the skip's reason): the skip is still remembered
    const refunded = await emit(outbox, id, 'refunded');
    await deliver(handler, refunded, settled);
    expect(outcomesOf(lines).slice(-2)).toEqual(['processed', 'duplicate']);
    expect(lines.some((line) => line.level === 'WARN' && line.eventId === settled.id)).toBe(true);
    expect(deadLetter.published).toEqual([]);
    expect(await ledger(id)).toEqual(['authorised', 'refunded']);
  });

  test('a new event under a skipped sequence (the heads went back after the skip) is not the one dropped: still a SequenceReusedError dead letter', async () => {
    const id = aggregate('reused');
    const outbox = await newOutbox();
    const { handler, lines, deadLetter } = consumer();
    const authorised = await emit(outbox, id, 'authorised');
    await emit(outbox, id, 'captured');
    await deliver(handler, authorised);
    await fenceSkip(outbox, id, 1, 2);

    const replaced = await newOutbox();
    await emit(replaced, id, 'first of the new table');
    const reused = await emit(replaced, id, 'second of the new table');
    expect(reused.sequence).toBe('0000000000000002');
    await deliver(handler, reused);
    expect(outcomesOf(lines).slice(-1)).toEqual(['dead-lettered']);
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['SequenceReusedError']);
    expect(await ledger(id)).toEqual(['authorised']);
  });
});
