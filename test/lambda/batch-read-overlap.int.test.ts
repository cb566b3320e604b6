/**
 * Issue 40, the batch at its floor with redeliveries: the batch read is no longer a round trip before every commit. A
 * record first in its lane (no earlier record of the batch before it in its FIFO group or lane) commits at once, its
 * commit's condition answering a redelivery; the read goes out at the same time, only for the records that wait behind
 * another in their lane, and answers them when their turn comes. A batch whose every record is first in its lane sends
 * no read. Against DynamoDB Local, through the fault proxy (request counts) and an upstream gate that holds the read
 * ongoing for as long as the test wants: no timing decides anything.
 */
import { afterAll, beforeAll, expect, inject, test, vi } from 'vitest';
import type { ConsumerConfig } from '../../lambda/config';
import type { BatchReadPolicy } from '../../lambda/consumer/batch-read-policy';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';
import type { SQSRecord } from '../../lambda/consumer/sqs';
import { localClient } from '../support/dynamodb-client';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { createInbox, createKeyedTable } from '../support/proof/tables';
import { startUpstreamGate, type UpstreamGate } from '../support/upstream-gate';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { envelopeObject, outcomesOf, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

const TRANSACT = 'DynamoDB_20120810.TransactWriteItems';
const BATCH_GET = 'DynamoDB_20120810.BatchGetItem';

let gate: UpstreamGate;
let proxy: FaultProxy;
const direct = localClient();
let ledger: string;
let config: ConsumerConfig;

beforeAll(async () => {
  gate = await startUpstreamGate(inject('dynamoDbEndpoint'));
  proxy = await startFaultProxy(gate.endpoint);
  ledger = await createKeyedTable(direct, 'read-overlap');
  config = await createInbox(direct, { subscriberName: 'read-overlap', deduplicationWindowSeconds: 86_400 });
});
afterAll(async () => {
  direct.destroy();
  await proxy.stop();
  await gate.stop();
});

/** The batch read turned on for every batch, as the adaptive policy is once redeliveries are common. */
const readOn: BatchReadPolicy = { shouldRead: () => true, observe: () => undefined };

function consumer() {
  const { logger, lines } = recordingLogger();
  let handlerRuns = 0;
  const handler = createTransactionalConsumer<{ account: string; amount: number }>({
    client: localClient({ endpoint: proxy.endpoint }),
    config,
    logger,
    deadLetter: new RecordingDeadLetterPublisher(),
    metricsSink: () => undefined,
    batchRead: readOn,
    handle: (envelope, tx) => {
      handlerRuns += 1;
      tx.update({ TableName: ledger, Key: { pk: envelope.data.account }, UpdateExpression: 'ADD balance :amount', ExpressionAttributeValues: { ':amount': envelope.data.amount } });
    },
  });
  return { handler, lines, handlerRuns: () => handlerRuns };
}

const deposit = (groupId?: string): SQSRecord => {
  const record = sqsRecord(JSON.stringify(envelopeObject({ data: { account: `account-${crypto.randomUUID()}`, amount: 1 } })));
  return groupId === undefined ? record : { ...record, attributes: { ...record.attributes, MessageGroupId: groupId } };
};
const accountOf = (record: SQSRecord): string => (JSON.parse(record.body) as { data: { account: string } }).data.account;
async function balance(account: string): Promise<number | undefined> {
  const { Item } = await direct.send(new GetItemCommand({ TableName: ledger, Key: { pk: { S: account } }, ConsistentRead: true }));
  return Item?.balance?.N === undefined ? undefined : Number(Item.balance.N);
}
function requestsSince() {
  const before = { transactions: proxy.requestCount(TRANSACT), batchReads: proxy.requestCount(BATCH_GET) };
  return () => ({ transactions: proxy.requestCount(TRANSACT) - before.transactions, batchReads: proxy.requestCount(BATCH_GET) - before.batchReads });
}

test('a batch of 10 on distinct items with 2 redeliveries, the read turned on: no read is sent, the 10 commits go at once, the 2 redeliveries are refused by their own conditions, nothing applies twice', async () => {
  const { handler, lines, handlerRuns } = consumer();
  const records = Array.from({ length: 10 }, () => deposit());
  await handler({ Records: records.slice(0, 2) });
  const requests = requestsSince();

  const response = await handler({ Records: [records[0]!, ...records.slice(2), records[1]!] });

  expect(response.batchItemFailures).toEqual([]);
  // every record is first in its lane: the read would answer none of them before its commit, so it is not sent
  expect(requests()).toEqual({ transactions: 10, batchReads: 0 });
  expect(outcomesOf(lines).filter((outcome) => outcome === 'duplicate')).toHaveLength(2);
  expect(handlerRuns()).toBe(12);
  for (const record of records) expect(await balance(accountOf(record))).toBe(1);
});

test("the read goes out beside the first commits, not before them; a FIFO group's second record, a redelivery, waits for its turn and is answered by the read: no handler run, no write", async () => {
  const { handler, lines, handlerRuns } = consumer();
  const applied = deposit('group-a');
  await handler({ Records: [applied] }); // one record: no read, applied by its commit
  const outcomes = ((from) => () => outcomesOf(lines.slice(from)))(lines.length);
  const fresh = deposit('group-a');
  const other = deposit('group-b');
  const requests = requestsSince();
  const heldRead = gate.holdNext('BatchGetItem');

  const done = handler({ Records: [fresh, { ...applied, messageId: 'redelivered' }, other] });
  // the read is ongoing (held at the gate), and the records first in their groups commit meanwhile
  await heldRead.arrived;
  await vi.waitFor(() => expect(outcomes()).toEqual(['processed', 'processed']), { timeout: 60_000, interval: 20 });
  expect(requests()).toEqual({ transactions: 2, batchReads: 1 });
  heldRead.release();
  const response = await done;

  expect(response.batchItemFailures).toEqual([]);
  expect(requests()).toEqual({ transactions: 2, batchReads: 1 });
  expect(outcomes()).toEqual(['processed', 'processed', 'duplicate']);
  expect(lines.find((line) => line.message === 'duplicate')).toMatchObject({ sqsMessageId: 'redelivered', detail: expect.stringContaining('batch read') });
  expect(handlerRuns()).toBe(3); // applied (first batch), fresh, other: the redelivery never ran
  for (const record of [applied, fresh, other]) expect(await balance(accountOf(record))).toBe(1);
});
