/** The batches of a latency run: the plan (SQS-shaped batches with redeliveries) and the clock around each invocation. */
import type { SQSRecord, SqsBatchHandler } from '../../../lambda/index';
import { atLeastOnce, deliverAll, type DeliveryPlan } from '../deliveries';
import { CUSTOMERS, customerId, newMessage, SQS_BATCH_SIZE, type Message } from '../fixtures';
import type { Prng } from '../prng';

/** Remembered ids per aggregate by default: a redelivery is drawn only while its aggregate still remembers it. */
const AGGREGATE_MEMORY = 100;

/**
 * `batches` batches of {@link SQS_BATCH_SIZE} records, each record with probability `redeliveryRate` a redelivery of an
 * earlier record (a new SQS message with the same body, as after a lost acknowledgement; possibly of a record in the
 * same batch), otherwise a new `OrderPlaced` to one of {@link CUSTOMERS} customers. A redelivery is drawn only among
 * messages fewer than 100 newer messages of the same customer ago, so the aggregate consumer's bounded id list still
 * remembers it (the same plan goes to every consumer).
 */
export function latencyPlan(prng: Prng, batches: number, redeliveryRate: number, batchSize: number = SQS_BATCH_SIZE, customers: number = CUSTOMERS): DeliveryPlan {
  const perCustomer = new Map<string, number>();
  const ordinal = new Map<Message, number>();
  return atLeastOnce(
    prng,
    batches * batchSize,
    redeliveryRate,
    () => {
      const message = newMessage(prng, customerId(prng.int(1, customers)));
      const customer = message.envelope.data.customerId;
      ordinal.set(message, perCustomer.get(customer) ?? 0);
      perCustomer.set(customer, (ordinal.get(message) as number) + 1);
      return message;
    },
    (candidate) => (perCustomer.get(candidate.envelope.data.customerId) as number) - (ordinal.get(candidate) as number) - 1 < AGGREGATE_MEMORY,
  );
}

/**
 * The round-trip floor of each batch of `records` (in batches of `batchSize`): the fewest sequential round trips an
 * exactly-once commit of its records needs. Records that touch one item commit one after another (DynamoDB refuses a
 * transaction on an item another ongoing transaction holds), every other record in the same round trip, and no read is
 * needed: so the floor is the most records of the batch on one customer's item.
 */
export function roundTripFloors(records: readonly SQSRecord[], batchSize: number = SQS_BATCH_SIZE): number[] {
  const floors: number[] = [];
  for (let start = 0; start < records.length; start += batchSize) {
    const perItem = new Map<string, number>();
    for (const record of records.slice(start, start + batchSize)) {
      const customer = String((JSON.parse(record.body) as { data: { customerId: string } }).data.customerId);
      perItem.set(customer, (perItem.get(customer) ?? 0) + 1);
    }
    floors.push(Math.max(...perItem.values()));
  }
  return floors;
}

/** The clock of a run. */
export interface TimedRun {
  /** Wall time of each invocation with a batch of the plan, in order, in milliseconds. */
  readonly batchMs: number[];
  /** Wall time of every invocation, redeliveries of failed records included, in milliseconds. */
  readonly totalMs: number;
  /** Records reported failed and redelivered (as SQS does after the visibility timeout). */
  readonly redelivered: number;
}

/**
 * Delivers the plan's `records` as {@link deliverAll} does (batches of {@link SQS_BATCH_SIZE}, one invocation at a time,
 * as one Lambda instance; failed records redelivered until none fail), timing each invocation: the redeliveries count in
 * `totalMs`, not in `batchMs`.
 */
export async function timedDelivery(handler: SqsBatchHandler, records: readonly SQSRecord[], what: string, batchSize: number = SQS_BATCH_SIZE): Promise<TimedRun> {
  const batchMs: number[] = [];
  let totalMs = 0;
  const redelivered = await deliverAll(handler, records, what, ({ round, elapsedMs }) => {
    totalMs += elapsedMs;
    if (round === 0) batchMs.push(elapsedMs);
  }, batchSize);
  return { batchMs, totalMs, redelivered };
}

/**
 * Delivers the plan's `records` to every handler of `handlers`, interleaved: batch i goes to each handler in turn (the
 * order rotated by one per batch, so no handler always runs first or last) before batch i + 1 goes to any, so each
 * handler's batches meet the same machine load as the others' (on a busy machine the load moves within a minute, and a
 * consumer timed after another meets another machine). Then each handler's failed records are redelivered as
 * {@link deliverAll} does, counted in its `totalMs`. `around(index, invoke, batch)` wraps each invocation of handler
 * `index` with a batch of the plan (`batch` its number, from 0), and once all of its redeliveries (`batch` undefined),
 * e.g. to count what its proxy refused or record its requests. Returns one {@link TimedRun} per handler, in order.
 */
export async function interleavedDelivery(
  handlers: readonly SqsBatchHandler[],
  records: readonly SQSRecord[],
  what: string,
  batchSize: number = SQS_BATCH_SIZE,
  around: <T>(index: number, invoke: () => Promise<T>, batch: number | undefined) => Promise<T> = (_index, invoke) => invoke(),
): Promise<TimedRun[]> {
  const runs = handlers.map(() => ({ batchMs: [] as number[], totalMs: 0, failed: [] as SQSRecord[] }));
  for (let start = 0, batchIndex = 0; start < records.length; start += batchSize, batchIndex++) {
    const batch = records.slice(start, start + batchSize);
    for (let turn = 0; turn < handlers.length; turn++) {
      const index = (turn + batchIndex) % handlers.length;
      const run = runs[index] as (typeof runs)[number];
      const started = performance.now();
      const response = await around(index, () => (handlers[index] as SqsBatchHandler)({ Records: batch }), batchIndex);
      const elapsedMs = performance.now() - started;
      run.batchMs.push(elapsedMs);
      run.totalMs += elapsedMs;
      const failedIds = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      run.failed.push(...batch.filter((record) => failedIds.has(record.messageId)));
    }
  }
  const timed: TimedRun[] = [];
  for (const [index, run] of runs.entries()) {
    let redeliveryMs = 0;
    const again = run.failed.map((record) => ({ ...record, attributes: { ...record.attributes, ApproximateReceiveCount: String(Number(record.attributes?.ApproximateReceiveCount ?? 1) + 1) } }));
    const redelivered = again.length === 0 ? 0 : await around(index, () => deliverAll(handlers[index] as SqsBatchHandler, again, what, ({ elapsedMs }) => void (redeliveryMs += elapsedMs), batchSize), undefined);
    timed.push({ batchMs: run.batchMs, totalMs: run.totalMs + redeliveryMs, redelivered: run.failed.length + redelivered });
  }
  return timed;
}
