/**
 * Transactional mode (`createTransactionalConsumer`): the handler's staged writes, the outbox items of the events it
 * emits and the inbox record (with the payload fingerprint) commit in one TransactWriteItems, or, with nothing staged
 * or emitted, one conditional PutItem. Scenarios T1-T5; T5 ends in the ledger check.
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createTransactionalConsumer, Outbox, type EventHandler, type ProducerConfig, type SqsBatchHandler } from '../../../lambda/index';
import type { DeliveryPlan } from '../deliveries';
import { countingLogger, createTable, noMetrics, now, progress, SAMPLE, type BenchContext, type Message, type OrderPlaced } from '../fixtures';
import type { Prng } from '../prng';
import { count, type ModeResult, type Row } from '../report';
import { batchDelivery, inboxConfig, measureRun, processedCheck, runPlan, sampleMessages } from '../scenario-steps';
import { scanCount, storedSize } from '../tables';

export const TRANSACTIONAL_TABLES = {
  ledger: 'bench-ledger',
  billingInbox: 'bench-inbox-billing',
  shippingInbox: 'bench-inbox-shipping',
  paymentsLedger: 'bench-ledger-payments',
  paymentsInbox: 'bench-inbox-payments',
} as const;

/** What the baseline needs from this mode: the same first deliveries and the same run. */
export interface TransactionalResult extends ModeResult {
  readonly firstDeliveries: readonly Message[];
  readonly plan: DeliveryPlan;
}

/** A handler that credits the order total to the customer's balance in `table`. */
export const credit =
  (table: string): EventHandler<OrderPlaced> =>
  (envelope, tx) => {
    tx.update({
      TableName: table,
      Key: { pk: `CUSTOMER#${envelope.data.customerId}` },
      UpdateExpression: 'ADD balanceCents :amount',
      ExpressionAttributeValues: { ':amount': envelope.data.totalCents },
    });
  };

/** The balance {@link credit} left on `customer`'s item in the ledger `table`, read consistently (0 when there is none). */
export async function ledgerBalance(admin: DynamoDBClient, table: string, customer: string): Promise<number> {
  const item = (await admin.send(new GetItemCommand({ TableName: table, Key: { pk: { S: `CUSTOMER#${customer}` } }, ConsistentRead: true }))).Item;
  return Number(item?.balanceCents?.N ?? 0);
}

/**
 * Checks that every balance in the ledger `table` is the sum of the distinct `messages` to its customer: how many
 * balances there are, and a violation (reported as `who`) per balance that is not.
 */
export async function ledgerCheck(admin: DynamoDBClient, who: string, table: string, messages: readonly Message[]): Promise<{ balances: number; violations: string[] }> {
  const expected = new Map<string, number>();
  for (const message of messages) expected.set(message.envelope.data.customerId, (expected.get(message.envelope.data.customerId) ?? 0) + message.envelope.data.totalCents);
  const violations: string[] = [];
  for (const [customer, cents] of [...expected.entries()].sort()) {
    const balance = await ledgerBalance(admin, table, customer);
    if (balance !== cents) violations.push(`${who}: ${customer} has ${balance}, the sum of its distinct messages is ${cents}`);
  }
  return { balances: expected.size, violations };
}

export async function transactionalScenarios(context: BenchContext, prng: Prng, outboxConfig: ProducerConfig): Promise<TransactionalResult> {
  const { admin, metered, args } = context;
  const tables = TRANSACTIONAL_TABLES;
  await Promise.all(Object.values(tables).map((table) => createTable(admin, table)));

  const billingLog = countingLogger();
  const billing: SqsBatchHandler = createTransactionalConsumer<OrderPlaced>({
    handle: credit(tables.ledger),
    client: metered,
    config: inboxConfig('Billing', tables.billingInbox),
    now,
    logger: billingLog.logger,
    metricsSink: noMetrics,
    // the scenarios measure the batch read's cost on every batch (the default decides per batch: see docs/BENCHMARKS.md, issue 31)
    batchRead: true,
  });
  const shipping: SqsBatchHandler = createTransactionalConsumer<OrderPlaced>({
    handle: () => undefined,
    client: metered,
    config: inboxConfig('Shipping', tables.shippingInbox),
    now,
    logger: countingLogger().logger,
    metricsSink: noMetrics,
    batchRead: true,
  });
  // credits its own ledger and emits PaymentRequested in the same transaction (the outbox Put of a derived-id event)
  const payments: SqsBatchHandler = createTransactionalConsumer<OrderPlaced>({
    handle: (envelope, tx, handlerContext) => {
      void credit(tables.paymentsLedger)(envelope, tx, handlerContext);
      tx.emit({
        type: 'PaymentRequested',
        subject: envelope.data.orderId,
        data: { orderId: envelope.data.orderId, customerId: envelope.data.customerId, amountCents: envelope.data.totalCents, currency: envelope.data.currency },
      });
    },
    client: metered,
    config: inboxConfig('Payments', tables.paymentsInbox),
    outbox: new Outbox({ client: metered, config: outboxConfig, now }),
    now,
    logger: countingLogger().logger,
    metricsSink: noMetrics,
    batchRead: true,
  });

  const rows: Row[] = [];
  const deliver = batchDelivery(context, prng);

  progress('transactional: single messages');
  const firstDeliveries = sampleMessages(prng, 1000);
  rows.push({
    scenario: 'T1. First delivery, handler stages 1 Update (ledger credit)',
    figures: await deliver(billing, firstDeliveries, 1, 'T1'),
    messages: SAMPLE,
    notes: 'one batch read (BatchGetItem, eventually consistent) per batch of 10, then ledger Update + inbox Put in one transaction',
  });
  rows.push({
    scenario: 'T2. First delivery, handler stages 1 Update and emits 1 event (`tx.emit`)',
    figures: await deliver(payments, firstDeliveries, 1, 'T2'),
    messages: SAMPLE,
    notes: 'ledger Update + outbox Put (derived event id) + inbox Put in one transaction',
  });
  rows.push({
    scenario: 'T3. First delivery, handler stages nothing',
    figures: await deliver(shipping, firstDeliveries, 1, 'T3'),
    messages: SAMPLE,
    notes: 'inbox record alone: one conditional PutItem, no transaction',
  });
  rows.push({
    scenario: 'T4a. Duplicate delivery (already processed), handler stages 1 Update',
    figures: await deliver(billing, firstDeliveries, 2, 'T4a'),
    messages: SAMPLE,
    notes: 'the batch read finds the live inbox record: acknowledged with no handler run and no write, nothing applied',
  });
  rows.push({
    scenario: 'T4b. Duplicate delivery, handler stages 1 Update and emits 1 event',
    figures: await deliver(payments, firstDeliveries, 2, 'T4b'),
    messages: SAMPLE,
    notes: 'the batch read finds the inbox record: no handler run, no transaction; nothing applied, nothing emitted',
  });
  rows.push({
    scenario: 'T4c. Duplicate delivery, handler stages nothing',
    figures: await deliver(shipping, firstDeliveries, 2, 'T4c'),
    messages: SAMPLE,
    notes: 'the batch read finds the inbox record: no PutItem; acknowledged',
  });
  const violations: string[] = [];
  const duplicatesSeen = billingLog.outcomes.get('duplicate') ?? 0;
  if (duplicatesSeen !== SAMPLE) violations.push(`T4a: expected ${SAMPLE} duplicates, the consumer logged ${duplicatesSeen}`);

  const sample = firstDeliveries[0] as Message;
  const sizes: Array<[string, number]> = [
    ['inbox record (transactional, with payload fingerprint)', await storedSize(admin, tables.billingInbox, { pk: { S: `Billing#${sample.envelope.id}` } })],
    ['ledger item', await storedSize(admin, tables.ledger, { pk: { S: `CUSTOMER#${sample.envelope.data.customerId}` } })],
  ];

  // -- T5: N deliveries with duplicates, then the ledger check -------------------------------------------------------
  progress(`transactional: ${args.messages} deliveries, duplicate rate ${args.duplicateRate}`);
  const plan = runPlan(context, prng, args.messages);
  billingLog.outcomes.clear();
  const { row, processed } = await measureRun(context, { id: 'T5', handler: billing, outcomes: billingLog.outcomes, plan, accounts: 'ledger accounts' });
  rows.push(row);

  progress('transactional: ledger check');
  const ledger = await ledgerCheck(admin, 'transactional', tables.ledger, plan.distinct);
  violations.push(...ledger.violations);
  const inboxCount = await scanCount(admin, tables.billingInbox);
  if (inboxCount !== plan.distinct.length + SAMPLE) violations.push(`transactional: the inbox holds ${inboxCount} records, expected ${plan.distinct.length + SAMPLE}`);
  violations.push(...processedCheck('transactional', processed, plan));
  const section =
    violations.length === 0
      ? `- transactional (T5): every one of the ${ledger.balances} ledger balances equals the sum of its distinct messages; the inbox holds one record per ` +
        `distinct message (${count(plan.distinct.length)} from T5 + ${SAMPLE} from T1); ${count(processed)} processed = ${count(plan.distinct.length)} distinct.`
      : `- transactional (T5): VIOLATED (see below)`;
  return { rows, checks: [section], violations, sizes, firstDeliveries, plan };
}
