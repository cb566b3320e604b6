/**
 * Issue 40, review r1: the invocation's deadline is shared by the batch. The retry used to keep a 1 s margin "for the rest of the batch and the response" per delivery, but a record that has not
 * started yet when a contended peer gives up gets no deadline check at all: with fewer free slots than records (the
 * consumer's `maxConcurrency`, or any batch larger than it), the contended record's retries use the invocation's time
 * down to the margin, and the records behind it then run past the Lambda timeout. Lambda kills the invocation: the
 * whole batch's response is lost (every record, applied or not, is received again and spends a receive).
 */
import { DynamoDBClient, TransactWriteItemsCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import type { ConsumerConfig } from '../../lambda/config';
import { createTransactionalConsumer } from '../../lambda/consumer/transactional-consumer';
import { LOCAL_CREDENTIALS, localClient } from '../support/dynamodb-client';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { createInbox, createKeyedTable } from '../support/proof/tables';
import { startUpstreamGate, type UpstreamGate } from '../support/upstream-gate';
import { envelopeObject, RecordingDeadLetterPublisher, recordingLogger, sqsRecord } from './helpers';

let gate: UpstreamGate;
let proxy: FaultProxy;
let blockerClient: DynamoDBClient;
const direct = localClient();
let business: string;
let config: ConsumerConfig;

beforeAll(async () => {
  gate = await startUpstreamGate(inject('dynamoDbEndpoint'));
  proxy = await startFaultProxy(gate.endpoint, { transactionConflicts: true });
  blockerClient = new DynamoDBClient({ endpoint: proxy.endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, maxAttempts: 1 });
  business = await createKeyedTable(direct, 'r1-contention');
  config = await createInbox(direct, { subscriberName: 'r1-contended', deduplicationWindowSeconds: 86_400 });
});
afterAll(async () => {
  blockerClient.destroy();
  direct.destroy();
  await proxy.stop();
  await gate.stop();
});

/** Another writer's transaction on the account, held ongoing at the upstream gate: every write on it is a real TransactionConflict meanwhile. */
async function holdAccount(account: string): Promise<{ release: () => Promise<void> }> {
  const held = gate.holdNext('TransactWriteItems');
  const done = blockerClient.send(
    new TransactWriteItemsCommand({
      TransactItems: [
        { ConditionCheck: { TableName: business, Key: { pk: { S: account } }, ConditionExpression: 'attribute_not_exists(#never)', ExpressionAttributeNames: { '#never': 'never-set' } } },
        { Put: { TableName: business, Item: { pk: { S: `blocker-${crypto.randomUUID()}` } } } },
      ],
    }),
  );
  await held.arrived;
  let released: Promise<void> | undefined;
  return {
    release: () => {
      held.release();
      released ??= done.then(() => undefined);
      return released;
    },
  };
}

const deposit = (account: string) => {
  const envelope = envelopeObject({ data: { account, amount: 1 } });
  return { id: envelope.id as string, record: sqsRecord(JSON.stringify(envelope)) };
};

test('a contended record leaves the records behind it their time: the invocation ends within the Lambda timeout (3 s, the default) with a batch of 10 at 200 ms per handler run, one at a time', async () => {
  const timeoutMilliseconds = 3000; // Lambda's default timeout
  const handlerMilliseconds = 200; // each handler run (the business logic) costs this much of the invocation's time
  let elapsed = 0; // the invocation's virtual time: handler runs and back-off waits
  let overranAt: number | undefined;
  const hot = deposit(`hot-${crypto.randomUUID()}`);
  const cold = Array.from({ length: 9 }, () => deposit(`cold-${crypto.randomUUID()}`));
  const blocker = await holdAccount((JSON.parse(hot.record.body) as { data: { account: string } }).data.account);
  const handler = createTransactionalConsumer<{ account: string; amount: number }>({
    client: localClient({ endpoint: proxy.endpoint, maxAttempts: 1 }),
    config,
    deadLetter: new RecordingDeadLetterPublisher(),
    logger: recordingLogger().logger,
    metricsSink: () => undefined,
    maxConcurrency: 1,
    batchRead: false,
    // seeded jitter and virtual waits: the retry decides from the virtual remaining time only
    contentionRetry: { random: () => 0.5, sleep: async (milliseconds) => void (elapsed += milliseconds) },
    handle: (envelope, tx) => {
      elapsed += handlerMilliseconds;
      if (elapsed > timeoutMilliseconds) overranAt ??= elapsed;
      tx.update({ TableName: business, Key: { pk: envelope.data.account }, UpdateExpression: 'ADD #total :amount', ExpressionAttributeNames: { '#total': 'total' }, ExpressionAttributeValues: { ':amount': envelope.data.amount } });
    },
  });

  try {
    const response = await handler({ Records: [hot.record, ...cold.map((c) => c.record)] }, { getRemainingTimeInMillis: () => Math.max(0, timeoutMilliseconds - elapsed) });
    // the hot record is a batch item failure; every cold one was applied
    expect(response.batchItemFailures).toEqual([{ itemIdentifier: hot.record.messageId }]);
  } finally {
    await blocker.release();
  }
  // Lambda ends an invocation at its timeout: a handler still running then returns no response at all
  expect(overranAt, `the invocation ran to ${elapsed} ms of virtual time, past its ${timeoutMilliseconds} ms timeout`).toBeUndefined();
});
