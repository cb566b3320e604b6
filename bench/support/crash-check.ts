/**
 * The crash Powertools' separate record cannot survive, for both consumers, one message each:
 * - inbox: the committing TransactWriteItems is applied but its response is lost (fault proxy), then SQS redelivers;
 * - baseline: the process dies after the business Update, before the COMPLETED Update; SQS redelivers after the
 *   visibility timeout, when the INPROGRESS record's in-progress expiry has passed.
 */
import { UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createTransactionalConsumer, type EventHandler } from '../../lambda/index';
import type { FaultProxy } from '../../test/support/fault-proxy';
import { client, countingLogger, EPOCH, newMessage, noMetrics, sqsRecord, type OrderPlaced } from './fixtures';
import { baselineIdempotency, BASELINE_TABLES } from './modes/baseline';
import { credit, ledgerBalance, TRANSACTIONAL_TABLES } from './modes/transactional';
import { SimulatedCrash } from './powertools-style';
import type { Prng } from './prng';
import { inboxConfig } from './scenario-steps';

export async function crashCheck(prng: Prng, admin: DynamoDBClient, proxy: FaultProxy): Promise<{ section: string; violations: string[] }> {
  const violations: string[] = [];

  // inbox
  const inboxMessage = newMessage(prng, 'crash-inbox');
  const config = inboxConfig('Billing', TRANSACTIONAL_TABLES.billingInbox);
  const handle: EventHandler<OrderPlaced> = credit(TRANSACTIONAL_TABLES.ledger);
  const quiet = countingLogger();
  const options = { handle, config, now: () => EPOCH, logger: quiet.logger, metricsSink: noMetrics };
  const crashing = createTransactionalConsumer<OrderPlaced>({ ...options, client: client(proxy.endpoint, { maxAttempts: 1 }) });
  const fired = proxy.inject({ target: 'DynamoDB_20120810.TransactWriteItems', fault: { kind: 'drop-response' } });
  const record = sqsRecord(prng, inboxMessage, 1);
  const first = await crashing({ Records: [record] });
  const redelivery = createTransactionalConsumer<OrderPlaced>({ ...options, client: admin });
  const second = await redelivery({ Records: [{ ...record, attributes: { ApproximateReceiveCount: '2' } }] });
  const inboxApplied = (await ledgerBalance(admin, TRANSACTIONAL_TABLES.ledger, 'crash-inbox')) / inboxMessage.envelope.data.totalCents;
  if (fired() !== 1 || first.batchItemFailures.length !== 1 || second.batchItemFailures.length !== 0) {
    violations.push(`crash check (inbox): the fault did not play out as set up (fired ${fired()}, first failures ${first.batchItemFailures.length}, second failures ${second.batchItemFailures.length})`);
  }
  if (inboxApplied !== 1) violations.push(`crash check (inbox): the effect was applied ${inboxApplied} times`);

  // baseline
  const baselineMessage = newMessage(prng, 'crash-baseline');
  let clock = EPOCH.getTime();
  const crashBaseline = baselineIdempotency(admin, () => new Date(clock));
  const effect = async (): Promise<void> => {
    await admin.send(
      new UpdateItemCommand({
        TableName: BASELINE_TABLES.ledger,
        Key: { pk: { S: 'CUSTOMER#crash-baseline' } },
        UpdateExpression: 'ADD balanceCents :amount',
        ExpressionAttributeValues: { ':amount': { N: String(baselineMessage.envelope.data.totalCents) } },
      }),
    );
  };
  let crashed = false;
  try {
    await crashBaseline.process(baselineMessage.envelope.id, effect, 'after-effect');
  } catch (error) {
    crashed = error instanceof SimulatedCrash;
  }
  clock += 180_000; // the queue's visibility timeout (6 x a 30 s function timeout) passes; SQS delivers again
  const redeliveredOutcome = await crashBaseline.process(baselineMessage.envelope.id, effect);
  const baselineApplied = (await ledgerBalance(admin, BASELINE_TABLES.ledger, 'crash-baseline')) / baselineMessage.envelope.data.totalCents;
  if (!crashed || redeliveredOutcome !== 'processed' || baselineApplied !== 2) {
    violations.push(`crash check (baseline): expected the documented double application, got crashed=${crashed}, redelivery ${redeliveredOutcome}, applied ${baselineApplied}x (bench bug)`);
  }

  const section = [
    '## Crash between the business write and the idempotency record',
    '',
    '| consumer | crash | deliveries | effect applied |',
    '|---|---|---:|---:|',
    `| transactional inbox (this library) | committing TransactWriteItems applied, response lost (fault proxy) | 2 | ${inboxApplied}x |`,
    `| Powertools-style baseline | process dies after the business Update, before the COMPLETED Update; redelivered after the 180 s visibility timeout | 2 | ${baselineApplied}x |`,
    '',
    'The baseline writes the effect and its idempotency record in separate requests, so a crash between them applies the effect twice; ' +
      'the inbox commits both in one transaction, so either both happened (the redelivery is a duplicate) or neither did.',
  ].join('\n');
  return { section, violations };
}
