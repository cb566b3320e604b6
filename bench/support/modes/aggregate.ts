/**
 * Aggregate mode (`createAggregateConsumer`): a strongly consistent GetItem of the aggregate, then one conditional Put
 * of its next version carrying the bounded list of processed message ids (default 100), or a TransactWriteItems with
 * the outbox Puts when it emits events. No inbox. Scenarios A1-A7; A7 ends in the version check.
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createAggregateConsumer, Outbox, type AggregateHandler, type ProducerConfig, type SqsBatchHandler } from '../../../lambda/index';
import { AGGREGATE_ITEM } from '../../../lambda/contract/wire-format';
import {
  countingLogger,
  createTable,
  customerId,
  deferred,
  expectNoFailures,
  newMessage,
  noMetrics,
  now,
  progress,
  SAMPLE,
  sqsRecord,
  type BenchContext,
  type Message,
  type OrderPlaced,
} from '../fixtures';
import type { Prng } from '../prng';
import { count, type ModeResult, type Row } from '../report';
import { batchDelivery, measureRun, processedCheck, runPlan, sampleMessages } from '../scenario-steps';
import { scanAll, storedSize } from '../tables';

export const AGGREGATE_TABLES = { accounts: 'bench-accounts', runAccounts: 'bench-accounts-run' } as const;
/** The runtime's default `maxProcessedMessages`. */
const DEFAULT_MAX_PROCESSED = 100;

/** The customer account the aggregate consumer keeps: order count and total, and the last order. */
export interface CustomerAccount extends Record<string, unknown> {
  readonly orderCount: number;
  readonly totalCents: number;
  readonly lastOrderId: string;
  readonly currency: string;
}

/** The aggregate handler of every aggregate consumer in the bench: counts the order and adds its total. */
export const recordOrder: AggregateHandler<OrderPlaced, CustomerAccount> = (current, envelope) => ({
  state: {
    orderCount: (current?.orderCount ?? 0) + 1,
    totalCents: (current?.totalCents ?? 0) + envelope.data.totalCents,
    lastOrderId: envelope.data.orderId,
    currency: envelope.data.currency,
  },
});

/** The key (`pk`) of a customer's account aggregate. */
export const accountKey = (customer: string): string => `CUSTOMER#${customer}`;

/**
 * The version check of an aggregate run: every account aggregate in `table` is at version = the number of distinct
 * `messages` that changed it, its total equals their sum, and no other aggregate exists. Returns how many aggregates
 * were expected and a violation (reported as `who`) per difference.
 */
export async function versionCheck(admin: DynamoDBClient, who: string, table: string, messages: readonly Message[]): Promise<{ aggregates: number; violations: string[] }> {
  const violations: string[] = [];
  const expected = new Map<string, { messages: number; cents: number }>();
  for (const message of messages) {
    const key = accountKey(message.envelope.data.customerId);
    const entry = expected.get(key) ?? { messages: 0, cents: 0 };
    expected.set(key, { messages: entry.messages + 1, cents: entry.cents + message.envelope.data.totalCents });
  }
  const items = new Map((await scanAll(admin, table)).map((item) => [item.pk?.S as string, item] as [string, Record<string, AttributeValue>]));
  for (const [key, want] of [...expected.entries()].sort()) {
    const item = items.get(key);
    const version = Number(item?.[AGGREGATE_ITEM.VERSION_ATTRIBUTE]?.N ?? 0);
    const cents = Number(item?.totalCents?.N ?? 0);
    if (version !== want.messages) violations.push(`${who}: ${key} is at version ${version}, but ${want.messages} distinct messages changed it`);
    if (cents !== want.cents) violations.push(`${who}: ${key} totals ${cents}, the sum of its distinct messages is ${want.cents}`);
  }
  if (items.size !== expected.size) violations.push(`${who}: ${items.size} aggregates exist, expected ${expected.size}`);
  return { aggregates: expected.size, violations };
}

export async function aggregateScenarios(context: BenchContext, prng: Prng, outboxConfig: ProducerConfig): Promise<ModeResult> {
  const { admin, metered, meter, args } = context;
  await Promise.all(Object.values(AGGREGATE_TABLES).map((table) => createTable(admin, table)));

  /** Called before `apply` with the event id; may hold the delivery (to stage a lost race). */
  let beforeApply: (eventId: string) => Promise<void> = async () => undefined;
  const consumer = (tableName: string, options: { emit?: boolean } = {}) => {
    const log = countingLogger();
    const handler: SqsBatchHandler = createAggregateConsumer<OrderPlaced, CustomerAccount>({
      locate: (envelope) => ({ tableName, key: { pk: accountKey(envelope.data.customerId) } }),
      apply: async (current, envelope, handlerContext) => {
        await beforeApply(envelope.id);
        const change = await recordOrder(current, envelope, handlerContext);
        if (!options.emit) return change;
        return {
          ...change,
          events: [{ type: 'CustomerOrderRecorded', subject: envelope.data.customerId, data: { customerId: envelope.data.customerId, orderId: envelope.data.orderId, orderCount: change.state.orderCount } }],
        };
      },
      client: metered,
      config: { subscriberName: 'Accounts' },
      ...(options.emit ? { outbox: new Outbox({ client: metered, config: outboxConfig, now }) } : {}),
      now,
      logger: log.logger,
      metricsSink: noMetrics,
    });
    return { handler, outcomes: log.outcomes };
  };
  const { handler } = consumer(AGGREGATE_TABLES.accounts);
  const emitting = consumer(AGGREGATE_TABLES.accounts, { emit: true });
  const deliver = batchDelivery(context, prng);
  /** Delivers `perCustomer` messages to each customer, one by one, outside any measurement (no rule check). */
  const prepare = (customers: readonly string[], perCustomer: number) =>
    meter.unchecked(async () => {
      for (const customer of customers) {
        for (let i = 0; i < perCustomer; i++) expectNoFailures(await handler({ Records: [sqsRecord(prng, newMessage(prng, customer), 1)] }), 'aggregate setup');
      }
    });
  const stored = (customer: string) => storedSize(admin, AGGREGATE_TABLES.accounts, { pk: { S: accountKey(customer) } });

  const rows: Row[] = [];
  const sizes: Array<[string, number]> = [];
  progress('aggregate: single messages');

  const newItems = sampleMessages(prng, 4000);
  rows.push({
    scenario: 'A1. New aggregate (0 remembered ids)',
    figures: await deliver(handler, newItems, 1, 'A1'),
    messages: SAMPLE,
    notes: 'consistent GetItem (no item) + conditional PutItem (attribute_not_exists) of version 1 with 1 id',
  });
  sizes.push(['aggregate item, 1 remembered id (after A1)', await stored(newItems[0]?.envelope.data.customerId as string)]);

  const tenCustomers = Array.from({ length: SAMPLE }, (_, i) => customerId(4100 + i));
  await prepare(tenCustomers, 10);
  const tenBytes = await stored(tenCustomers[0] as string);
  sizes.push(['aggregate item, 10 remembered ids', tenBytes]);
  const tenItems = tenCustomers.map((customer) => newMessage(prng, customer));
  rows.push({
    scenario: 'A2. Aggregate with 10 remembered ids',
    figures: await deliver(handler, tenItems, 1, 'A2'),
    messages: SAMPLE,
    notes: 'GetItem of the item with 10 ids + conditional PutItem (version check) of the item with 11',
  });

  const fullCustomer = customerId(4200);
  await prepare([fullCustomer], DEFAULT_MAX_PROCESSED);
  const fullBytes = await stored(fullCustomer);
  sizes.push([`aggregate item, ${DEFAULT_MAX_PROCESSED} remembered ids (the default maximum)`, fullBytes]);
  const perId = (fullBytes - tenBytes) / (DEFAULT_MAX_PROCESSED - 10);
  const fullItems = Array.from({ length: SAMPLE }, () => newMessage(prng, fullCustomer));
  rows.push({
    scenario: `A3. Aggregate with the full default list (${DEFAULT_MAX_PROCESSED} remembered ids)`,
    figures: await deliver(handler, fullItems, 1, 'A3'),
    messages: SAMPLE,
    notes:
      `${SAMPLE} messages in one batch to one aggregate whose list is full: the first reads ${DEFAULT_MAX_PROCESSED} ids, each writes ${DEFAULT_MAX_PROCESSED} (the oldest dropped), and each later one starts from what the one before wrote (no read); ` +
      `the item is ${count(fullBytes)} B, about ${Math.round(perId)} B per remembered id (event ids of ${(fullItems[0] as Message).envelope.id.length} characters)`,
  });

  const emittingItems = sampleMessages(prng, 4300);
  rows.push({
    scenario: 'A4. New aggregate, handler emits 1 event',
    figures: await deliver(emitting.handler, emittingItems, 1, 'A4'),
    messages: SAMPLE,
    notes: 'consistent GetItem + TransactWriteItems: aggregate Put (condition) + outbox Put (derived event id)',
  });

  rows.push({
    scenario: 'A5a. Duplicate delivery (aggregate with 1 id, from A1)',
    figures: await deliver(handler, newItems, 2, 'A5a'),
    messages: SAMPLE,
    notes: 'the GetItem finds the id in the list: acknowledged, no write',
  });
  rows.push({
    scenario: `A5b. Duplicate delivery (aggregate with ${DEFAULT_MAX_PROCESSED} ids, from A3)`,
    figures: await deliver(handler, fullItems, 2, 'A5b'),
    messages: SAMPLE,
    notes: 'the same, reading the full list once for the batch (the later messages start from it)',
  });

  // -- A6: two concurrent deliveries to one (new) aggregate; the second reads before the first writes, and loses ------
  progress('aggregate: lost races');
  const raceWinners = sampleMessages(prng, 4400);
  const raceLosers = raceWinners.map((winner) => newMessage(prng, winner.envelope.data.customerId));
  const holds = new Map<string, () => Promise<void>>();
  beforeApply = async (eventId) => {
    const hold = holds.get(eventId);
    holds.delete(eventId);
    if (hold !== undefined) await hold();
  };
  const raceFigures = await meter.measure(async () => {
    for (let i = 0; i < SAMPLE; i++) {
      const winner = raceWinners[i] as Message;
      const loser = raceLosers[i] as Message;
      const loserHasRead = deferred();
      const winnerDone = deferred();
      holds.set(winner.envelope.id, () => loserHasRead.promise); // the winner writes only once the loser has read too
      holds.set(loser.envelope.id, async () => {
        loserHasRead.resolve();
        await winnerDone.promise; // the loser writes on its stale read after the winner wrote: its condition fails
      });
      const first = handler({ Records: [sqsRecord(prng, winner, 1)] }).then((response) => (winnerDone.resolve(), response));
      const second = handler({ Records: [sqsRecord(prng, loser, 1)] });
      for (const response of await Promise.all([first, second])) expectNoFailures(response, 'A6');
    }
  });
  beforeApply = async () => undefined;
  rows.push({
    scenario: 'A6. Lost optimistic-concurrency race: 2 concurrent deliveries to one new aggregate',
    figures: raceFigures,
    messages: SAMPLE,
    notes:
      'per pair (2 messages, both applied): both read version none; the winner writes; the loser\'s conditional Put fails, it re-reads and writes version 2. ' +
      'The race costs 1 GetItem and 1 failed PutItem more than 2 uncontended deliveries (2 × A1)',
  });

  // -- A7: N deliveries with duplicates, then the version check --------------------------------------------------------
  progress(`aggregate: ${args.modeMessages} deliveries, duplicate rate ${args.duplicateRate}`);
  const run = consumer(AGGREGATE_TABLES.runAccounts);
  // a duplicate is drawn only while its id is still in its aggregate's list (fewer than 100 newer messages there),
  // since the bounded list is documented to forget older ones
  const plan = runPlan(context, prng, args.modeMessages, (candidate, index, distinct) => {
    let newer = 0;
    for (let i = index + 1; i < distinct.length; i++) if ((distinct[i] as Message).envelope.data.customerId === candidate.envelope.data.customerId) newer += 1;
    return newer < DEFAULT_MAX_PROCESSED;
  });
  const { row, processed } = await measureRun(context, { id: 'A7', handler: run.handler, outcomes: run.outcomes, plan, accounts: 'aggregates' });
  rows.push(row);

  const { aggregates, violations } = await versionCheck(admin, 'aggregate A7', AGGREGATE_TABLES.runAccounts, plan.distinct);
  violations.push(...processedCheck('aggregate A7', processed, plan));
  const checks = [
    violations.length === 0
      ? `- aggregate (A7): each of the ${aggregates} aggregates is at version = the number of distinct messages that changed it, ` +
        `and its total equals their sum (${count(plan.distinct.length)} distinct, ${count(processed)} processed).`
      : '- aggregate (A7): VIOLATED (see below)',
  ];
  return { rows, checks, violations, sizes };
}
