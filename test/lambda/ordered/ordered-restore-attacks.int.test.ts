/**
 * Reviewer r4's findings against issue 38 as built on s4-int: each test states what must hold and FAILS on s4-int
 * (no fixes here). Against DynamoDB Local, with the real OrderedOutbox, ordered consumer, carryOrderedHeads and
 * planOrderedRedrive.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { ConsumerConfig, ProducerConfig } from '../../../lambda/config';
import { InvalidEventError } from '../../../lambda/errors';
import { createOrderedConsumer } from '../../../lambda/ordered/ordered-consumer';
import { OrderedOutbox, type OrderedEnvelope } from '../../../lambda/ordered/ordered-outbox';
import { carryOrderedHeads } from '../../../operator/ordered/outbox-heads';
import { planOrderedRedrive } from '../../../operator/ordered/redrive-plan';
import { OrderedEventRecords } from '../../../operator/ordered/ordered-event-records';
import { SequenceFences } from '../../../operator/ordered/sequence-fences';
import { TABLE_SCHEMA } from '../../../lambda/contract/wire-format';
import { EXIT_CODE, main } from '../../../simulator/cli/main';
import { localClient } from '../../support/dynamodb-client';
import { createInbox, createKeyedTable, createOutbox } from '../../support/proof/tables';
import { outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from '../helpers';

const SUBSCRIBER = 'r4-ledger';
const WINDOW_SECONDS = 3600;
let client: DynamoDBClient;
let documents: DynamoDBDocumentClient;
let inboxConfig: ConsumerConfig;
let ledgerTable: string;

beforeAll(async () => {
  client = localClient();
  documents = DynamoDBDocumentClient.from(client);
  [inboxConfig, ledgerTable] = await Promise.all([
    createInbox(client, { subscriberName: SUBSCRIBER, deduplicationWindowSeconds: WINDOW_SECONDS }),
    createKeyedTable(client, 'r4-ledger'),
  ]);
});
afterAll(() => client.destroy());

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

async function emit(config: ProducerConfig, aggregateId: string, step: string, extra: { time?: Date; id?: string } = {}): Promise<OrderedEnvelope> {
  const [envelope] = await new OrderedOutbox({ client, config }).transactWrite({ events: [{ type: 'PaymentStep', aggregateId, subject: aggregateId, data: { step }, ...extra }] });
  return envelope!;
}

async function deliver(handler: ReturnType<typeof consumer>['handler'], ...envelopes: OrderedEnvelope[]): Promise<void> {
  for (const envelope of envelopes) {
    const response = await handler({ Records: [sqsRecord(JSON.stringify(envelope))] });
    expect(response.batchItemFailures).toEqual([]);
  }
}

const aggregate = (name: string): string => `r4-${name}-${Date.now()}-${Math.floor(Math.random() * 1e6)}`;

describe('r4: lost events after the heads go back', () => {
  test('F1: a new event below the fence whose producer-given time is older than the window is acknowledged unapplied (lost silently)', async () => {
    const id = aggregate('backdated');
    const original = await newOutbox();
    const { handler, lines, deadLetter } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'), await emit(original, id, 'captured'));
    // the table is replaced (or restored); a producer imports a refund that happened two hours ago (NewEvent.time: "When it happened")
    const replaced = await newOutbox();
    const refund = await emit(replaced, id, 'refunded', { time: new Date(Date.now() - (WINDOW_SECONDS + 3600) * 1000) });
    expect(refund.sequence).toBe('0000000000000001');
    await deliver(handler, refund);
    // never applied, so it must not be acknowledged as a duplicate: the producer's date proves nothing about the event's age
    expect(outcomesOf(lines).slice(-1)).not.toEqual(['duplicate']);
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['SequenceReusedError']);
  });

  test('F2: heads carried from the fences while an old event is in flight: the in-flight event after the reused sequence is applied on the new one (out of order, across histories)', async () => {
    const id = aggregate('in-flight');
    const original = await newOutbox();
    const { handler } = consumer();
    const authorised = await emit(original, id, 'authorised');
    const captured = await emit(original, id, 'captured'); // committed, still in flight when the table is replaced
    const refunded = await emit(original, id, 'refunded'); // committed after it, in flight behind it
    await deliver(handler, authorised);

    const replaced = await newOutbox();
    // the documented runbook step 2/3 with --from-fences (what `outbox heads --from-fences --yes` runs)
    await carryOrderedHeads({ client, outbox: replaced, source: { kind: 'fences', subscribers: [{ subscriberName: SUBSCRIBER, inboxTable: inboxConfig.inboxTableName }] }, apply: true });
    const chargeback = await emit(replaced, id, 'chargeback');
    expect(chargeback.sequence).toBe('0000000000000002'); // the in-flight 'captured' took 2 in the old table

    // the group's arrival order on the FIFO queue: the new table's event comes through first, then the old in-flight pair
    await deliver(handler, chargeback, captured, refunded);
    // 'captured' is dead-lettered (SequenceReusedError); 'refunded' (old sequence 3) must not be applied without it
    expect(await ledger(id)).not.toContain('refunded');
    expect(await ledger(id)).toEqual(['authorised', 'chargeback']);
  });

  test("F3: `fence redrive`'s plan calls a SequenceReusedError dead letter (never applied) 'applied' and tells the operator to delete it", async () => {
    const id = aggregate('replan');
    const original = await newOutbox();
    const { handler, deadLetter } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'), await emit(original, id, 'captured'));
    const replaced = await newOutbox();
    await deliver(handler, await emit(replaced, id, 'refunded'));
    expect(deadLetter.published.map((letter) => letter.errorName)).toEqual(['SequenceReusedError']);
    expect(await ledger(id)).toEqual(['authorised', 'captured']); // 'refunded' was never applied

    // as `fence redrive` hands it over: with the consumer's reason, read from the dead letter's iefErrorName attribute
    const plan = await planOrderedRedrive([{ id: 'dl-1', body: deadLetter.published[0]!.body, errorName: deadLetter.published[0]!.errorName }], new SequenceFences({ client, tableName: inboxConfig.inboxTableName, subscriberName: SUBSCRIBER }), new OrderedEventRecords({ client, tableName: inboxConfig.inboxTableName, subscriberName: SUBSCRIBER }));
    // alreadyApplied: "applied (or about to be); delete them, do not redrive" -- false for this one
    expect(plan.alreadyApplied.map((letter) => letter.id)).not.toContain('dl-1');
  });
});

describe('r4: an event id that starts with AGGREGATE# lands on another aggregate\'s head key', () => {
  test("F4: event id 'AGGREGATE#<a>' of aggregate b is accepted, and a's first event then takes sequence 2 (a gap no event fills: a held forever)", async () => {
    const a = aggregate('a');
    const b = aggregate('b');
    const outbox = await newOutbox();
    let accepted = true;
    try {
      await emit(outbox, b, 'authorised', { id: `AGGREGATE#${a}` });
    } catch (error) {
      if (!(error instanceof InvalidEventError)) throw error;
      accepted = false; // refusing such an id is a fix
    }
    if (!accepted) return;
    const first = await emit(outbox, a, 'authorised');
    expect(first.sequence).toBe('0000000000000001');
  });
});

describe('r4: `outbox heads` on the wrong thing', () => {
  test("F6: --from-fences with a standard (not ordered) subscriber's Operator output is accepted: 'set 0 head(s)', exit OK, though no fence was read", async () => {
    const id = aggregate('wrong-output');
    const original = await newOutbox();
    const { handler } = consumer();
    await deliver(handler, await emit(original, id, 'authorised'), await emit(original, id, 'captured'));
    const replaced = await newOutbox();
    // the Operator output of the flow's standard fraud subscriber, picked instead of the ledger's (same inbox table here)
    const standardOutput = JSON.stringify({
      format: 1,
      subscriberName: 'fraud',
      processingMode: 'transactional',
      queueUrl: 'https://sqs.eu-west-1.amazonaws.com/111111111111/fraud',
      deadLetterQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/111111111111/fraud-dlq',
      inboxTable: inboxConfig.inboxTableName,
      deduplicationWindowSeconds: WINDOW_SECONDS,
      outboxTable: original.outboxTableName,
    });
    let stdout = '';
    let stderr = '';
    const code = await main(['outbox', 'heads', '--outbox-table', replaced.outboxTableName, '--from-fences', '--subscriber-output', standardOutput, '--previous-outbox-table', original.outboxTableName, '--yes'], {
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
      user: 'on-call',
      createClient: () => localClient(),
    });
    // an output that is not an ordered subscriber's has no fences: the command must refuse it, not report success
    expect(stderr).not.toContain('deduplicationWindowSeconds'); // the output itself is well-formed (parsed)
    expect(stderr).toContain('is not an ordered subscriber');
    expect({ code, stdout, stderr }).toMatchObject({ code: EXIT_CODE.USAGE });
  });

  test("F6: --from-fences with an ordered subscriber's output of another flow (another outbox table) is refused, naming the table", async () => {
    const replaced = await newOutbox();
    const otherFlows = JSON.stringify({
      format: 1,
      subscriberName: 'shipping-ledger',
      processingMode: 'transactional',
      ordered: true,
      queueUrl: 'https://sqs.eu-west-1.amazonaws.com/111111111111/shipping.fifo',
      deadLetterQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/111111111111/shipping-dlq.fifo',
      inboxTable: inboxConfig.inboxTableName,
      deduplicationWindowSeconds: WINDOW_SECONDS,
      outboxTable: 'shipping-outbox',
    });
    let stdout = '';
    let stderr = '';
    const code = await main(['outbox', 'heads', '--outbox-table', replaced.outboxTableName, '--from-fences', '--subscriber-output', otherFlows, '--previous-outbox-table', 'payments-outbox-old', '--yes'], {
      stdout: (text) => void (stdout += text),
      stderr: (text) => void (stderr += text),
      user: 'on-call',
      createClient: () => localClient(),
    });
    expect({ code, stdout }).toEqual({ code: EXIT_CODE.USAGE, stdout: '' });
    expect(stderr).toContain('shipping-outbox');
  });
});
