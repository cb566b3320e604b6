/**
 * What every scenario of the bench shares: the fixed clock, the messages (an `OrderPlaced` event per order), SQS
 * records, tables, clients, a logger that counts outcomes, and a dead-letter publisher that keeps dead letters in memory.
 */
import { CreateTableCommand, DynamoDBClient, type GlobalSecondaryIndex } from '@aws-sdk/client-dynamodb';
import { createLogger, type DeadLetter, type DeadLetterPublisher, type EventEnvelope, type Logger, type SQSRecord } from '../../lambda/index';
import { buildEnvelope } from '../../lambda/producer/new-event';
import { PROCESSING_RECORD, TABLE_SCHEMA } from '../../lambda/contract/wire-format';
import type { Meter } from './meter';
import type { Prng } from './prng';

export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;
/** Every clock in the bench is fixed, so item sizes (and therefore capacity) do not depend on when it runs. */
export const EPOCH = new Date('2024-05-01T12:00:00.000Z');
export const now = (): Date => EPOCH;
/** Messages per SQS batch in the runs of N deliveries. */
export const SQS_BATCH_SIZE = 10;
/** Messages per single-message scenario (averaged; they are identical in cost). */
export const SAMPLE = 10;
/** Accounts (ledger balances, aggregates) the runs of N deliveries spread their messages over. */
export const CUSTOMERS = 20;
/** The deduplication window of every inbox, in seconds. */
export const DEDUPLICATION_WINDOW_SECONDS = 30 * 24 * 3600;
/** The lease of lease and multi-step consumers, in seconds. */
export const LEASE_DURATION_SECONDS = 60;

/** The bench's command-line arguments. */
export interface Arguments {
  /** Deliveries in the transactional run (and the baseline's). */
  readonly messages: number;
  /** Deliveries in each of the lease, multi-step and aggregate runs. */
  readonly modeMessages: number;
  readonly duplicateRate: number;
  readonly seed: number;
}

/** What every scenario module gets. */
export interface BenchContext {
  /** Unmetered: setup and verification reads. */
  readonly admin: DynamoDBClient;
  /** The runtime's client, metered. */
  readonly metered: DynamoDBClient;
  readonly meter: Meter;
  readonly args: Arguments;
}

export function client(endpoint: string, extra: { maxAttempts?: number } = {}): DynamoDBClient {
  return new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: LOCAL_CREDENTIALS, ...extra });
}

/** An on-demand table with a string partition key (and, optionally, a string sort key `sk`, or the `BlockedMessages` index). */
export async function createTable(
  admin: DynamoDBClient,
  name: string,
  options: { partitionKey?: string; sortKey?: boolean; blockedMessagesIndex?: boolean } = {},
): Promise<void> {
  const partitionKey = options.partitionKey ?? TABLE_SCHEMA.PARTITION_KEY;
  const attributes = [{ AttributeName: partitionKey, AttributeType: 'S' as const }];
  if (options.sortKey) attributes.push({ AttributeName: TABLE_SCHEMA.SORT_KEY, AttributeType: 'S' });
  const indexes: GlobalSecondaryIndex[] = [];
  if (options.blockedMessagesIndex) {
    // as the InboxTable construct creates it for lease and multi-step subscribers
    attributes.push(
      { AttributeName: PROCESSING_RECORD.BLOCKED_SUBSCRIBER_ATTRIBUTE, AttributeType: 'S' },
      { AttributeName: PROCESSING_RECORD.BLOCKED_AT_ATTRIBUTE, AttributeType: 'S' },
    );
    indexes.push({
      IndexName: PROCESSING_RECORD.BLOCKED_INDEX_NAME,
      KeySchema: [
        { AttributeName: PROCESSING_RECORD.BLOCKED_SUBSCRIBER_ATTRIBUTE, KeyType: 'HASH' },
        { AttributeName: PROCESSING_RECORD.BLOCKED_AT_ATTRIBUTE, KeyType: 'RANGE' },
      ],
      Projection: { ProjectionType: 'ALL' },
    });
  }
  await admin.send(
    new CreateTableCommand({
      TableName: name,
      AttributeDefinitions: attributes,
      KeySchema: [{ AttributeName: partitionKey, KeyType: 'HASH' }, ...(options.sortKey ? [{ AttributeName: TABLE_SCHEMA.SORT_KEY, KeyType: 'RANGE' as const }] : [])],
      BillingMode: 'PAY_PER_REQUEST',
      ...(indexes.length > 0 ? { GlobalSecondaryIndexes: indexes } : {}),
    }),
  );
}

export interface OrderLine {
  readonly sku: string;
  readonly quantity: number;
  readonly unitPriceCents: number;
}

export interface OrderPlaced {
  readonly orderId: string;
  readonly customerId: string;
  readonly totalCents: number;
  readonly currency: string;
  readonly lines: readonly OrderLine[];
}

export function newOrder(prng: Prng, customerId: string): OrderPlaced {
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
export function orderItem(order: OrderPlaced): Record<string, unknown> {
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

export const customerId = (index: number): string => `cust-${String(index).padStart(5, '0')}`;

/** One message as the consumer receives it. */
export interface Message {
  readonly envelope: EventEnvelope<OrderPlaced>;
  readonly body: string;
}

export function newMessage(prng: Prng, customer: string): Message {
  const order = newOrder(prng, customer);
  const envelope = buildEnvelope<OrderPlaced>(
    { type: 'OrderPlaced', subject: order.orderId, data: order },
    { source: 'orders-service', now: () => EPOCH, newId: () => `order-placed-${order.orderId}` },
  );
  return { envelope, body: JSON.stringify(envelope) };
}

export function sqsRecord(prng: Prng, message: Message, receiveCount: number): SQSRecord {
  return { messageId: prng.uuid(), body: message.body, attributes: { ApproximateReceiveCount: String(receiveCount) } };
}

/**
 * Counts consumer outcomes from each batch's summary line instead of printing them, at the default level (INFO), as a
 * deployed consumer logs: the per-record DEBUG lines are not even built.
 */
export function countingLogger(): { logger: Logger; outcomes: Map<string, number> } {
  const outcomes = new Map<string, number>();
  const logger = createLogger({
    now: () => EPOCH,
    level: 'INFO',
    sink: (line) => {
      const summary = (JSON.parse(line) as { message?: unknown; outcomes?: Record<string, number> }).outcomes;
      if (summary === undefined) return;
      for (const [outcome, count] of Object.entries(summary)) outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + count);
    },
  });
  return { logger, outcomes };
}

/** Swallows the consumers' EMF metric lines (they would go to standard output). */
export const noMetrics = (): void => undefined;

/** Keeps dead letters in memory (in production: one SQS SendMessage, not a DynamoDB request). */
export class MemoryDeadLetters implements DeadLetterPublisher {
  public readonly letters: DeadLetter[] = [];

  public async publish(deadLetter: DeadLetter): Promise<void> {
    this.letters.push(deadLetter);
  }
}

export const progress = (message: string): void => void process.stderr.write(`[bench] ${message}\n`);

/** Raised (with the report) when an exactly-once check fails: the bench exits 1. */
export class InvariantViolation extends Error {}

/**
 * Reports why a bench run failed and returns its exit code: an {@link InvariantViolation}'s report goes to standard
 * output (it is the result) with 1; anything else to standard error with 2.
 */
export function reportFailure(error: unknown): 1 | 2 {
  if (error instanceof InvariantViolation) {
    process.stdout.write(`${error.message}\n`);
    return 1;
  }
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  return 2;
}

/** Throws when a batch reported failures that the scenario did not expect. */
export function expectNoFailures(response: { batchItemFailures: unknown[] }, what: string): void {
  if (response.batchItemFailures.length > 0) throw new Error(`${what}: ${response.batchItemFailures.length} records failed unexpectedly`);
}

/** A promise with its resolve function. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => {
    resolve = done;
  });
  return { promise, resolve };
}
