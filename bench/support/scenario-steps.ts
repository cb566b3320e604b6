/**
 * What the consumer modes' scenarios (modes/*.ts) have in common: the consumer configuration, a measured single batch,
 * the sample messages, and the run of N deliveries with duplicates (its plan, its measurement and row, and the checks
 * that follow it).
 */
import type { ConsumerConfig, LeaseConsumerConfig, SqsBatchHandler } from '../../lambda/index';
import { PROCESSING_RECORD, RECORD_STATUS } from '../../lambda/contract/wire-format';
import { atLeastOnce, deliverAll, type DeliveryPlan } from './deliveries';
import {
  countingLogger,
  CUSTOMERS,
  customerId,
  DEDUPLICATION_WINDOW_SECONDS,
  expectNoFailures,
  LEASE_DURATION_SECONDS,
  MemoryDeadLetters,
  newMessage,
  noMetrics,
  now,
  SAMPLE,
  SQS_BATCH_SIZE,
  sqsRecord,
  type BenchContext,
  type Message,
} from './fixtures';
import type { Figures } from './meter';
import type { Prng } from './prng';
import { count, fixed, ruleWriteUnits, type Row } from './report';
import { scanCount } from './tables';

/** The configuration of a consumer with an inbox: the bench's deduplication window. */
export const inboxConfig = (subscriberName: string, inboxTableName: string): ConsumerConfig => ({
  subscriberName,
  inboxTableName,
  deduplicationWindowSeconds: DEDUPLICATION_WINDOW_SECONDS,
});

/**
 * What a lease or multi-step consumer is built with besides its business logic: the metered client, its configuration
 * (the bench's deduplication window and lease), the fixed clock, a counting logger (its `outcomes`), no metrics, a
 * dead-letter publisher in memory (`deadLetter`) and owner tokens drawn from `prng`.
 */
export function leaseConsumerParts(context: BenchContext, prng: Prng, subscriberName: string, inboxTableName: string) {
  const log = countingLogger();
  const deadLetter = new MemoryDeadLetters();
  const config: LeaseConsumerConfig = { ...inboxConfig(subscriberName, inboxTableName), leaseDurationSeconds: LEASE_DURATION_SECONDS };
  const options = { client: context.metered, config, now, logger: log.logger, metricsSink: noMetrics, deadLetter, newOwnerToken: () => prng.uuid() };
  return { options, outcomes: log.outcomes, deadLetter };
}

/** {@link SAMPLE} new messages, one to each of the customers numbered from `firstCustomer` on. */
export const sampleMessages = (prng: Prng, firstCustomer: number): Message[] =>
  Array.from({ length: SAMPLE }, (_, i) => newMessage(prng, customerId(firstCustomer + i)));

/**
 * A function that measures delivering `messages` to `handler` in one SQS batch, each with `receiveCount`, and throws
 * (naming the scenario `what`) if any record fails.
 */
export function batchDelivery(context: BenchContext, prng: Prng) {
  return (handler: SqsBatchHandler, messages: readonly Message[], receiveCount: number, what: string): Promise<Figures> =>
    context.meter.measure(async () => expectNoFailures(await handler({ Records: messages.map((message) => sqsRecord(prng, message, receiveCount)) }), what));
}

/**
 * The plan of a run: `deliveries` deliveries at the bench's duplicate rate, each new message to one of the
 * {@link CUSTOMERS} customers; `duplicable` as {@link atLeastOnce} takes it.
 */
export function runPlan(context: BenchContext, prng: Prng, deliveries: number, duplicable?: Parameters<typeof atLeastOnce>[4]): DeliveryPlan {
  return atLeastOnce(prng, deliveries, context.args.duplicateRate, () => newMessage(prng, customerId(prng.int(1, CUSTOMERS))), duplicable);
}

/** The last note of every run's row: the write capacity by the rule per distinct message of `plan`. */
export const wcuPerDistinctMessage = (figures: Figures, plan: DeliveryPlan): string =>
  `${fixed(ruleWriteUnits(figures) / plan.distinct.length)} WCU per distinct message by the rule, duplicates included`;

/** A run of N deliveries, measured. */
export interface MeasuredRun {
  /** Its row of the results table. */
  readonly row: Row;
  /** Deliveries the consumer logged as processed. */
  readonly processed: number;
}

/**
 * Measures delivering `plan` to `handler` as {@link deliverAll} does (batches, redelivery of failed records) and builds
 * its row: scenario `id` (also what failures are reported as), with `detail` before the common title; `outcomes` are
 * the consumer's counting logger's; `accounts` names what the {@link CUSTOMERS} customers are, where the notes say.
 */
export async function measureRun(
  context: BenchContext,
  run: { id: string; detail?: string; handler: SqsBatchHandler; outcomes: ReadonlyMap<string, number>; plan: DeliveryPlan; accounts?: string },
): Promise<MeasuredRun> {
  const { args } = context;
  const { plan } = run;
  const deliveries = plan.deliveries.length;
  let redelivered = 0;
  const figures = await context.meter.measure(async () => {
    redelivered = await deliverAll(run.handler, plan.records, run.id);
  });
  const processed = run.outcomes.get('processed') ?? 0;
  const duplicates = run.outcomes.get('duplicate') ?? 0;
  const row: Row = {
    scenario: `${run.id}. ${run.detail === undefined ? '' : `${run.detail}: `}${count(deliveries)} deliveries in batches of ${SQS_BATCH_SIZE}, duplicate rate ${args.duplicateRate} (seed ${args.seed})`,
    figures,
    messages: deliveries,
    notes:
      `${count(plan.distinct.length)} distinct messages + ${count(deliveries - plan.distinct.length)} duplicate deliveries${run.accounts === undefined ? '' : ` over ${CUSTOMERS} ${run.accounts}`}; ` +
      `outcomes: ${count(processed)} processed, ${count(duplicates)} duplicate, ${count(redelivered)} redelivered after a failure; ` +
      wcuPerDistinctMessage(figures, plan),
  };
  return { row, processed };
}

/** The violation, if any, of a run (`who`) whose consumer did not process each distinct message of `plan` once. */
export function processedCheck(who: string, processed: number, plan: DeliveryPlan): string[] {
  return processed === plan.distinct.length ? [] : [`${who}: ${processed} deliveries were processed, but there are ${plan.distinct.length} distinct messages`];
}

/** The violation, if any, of a run (`who`) whose inbox `table` does not hold one COMPLETED processing record per distinct message of `plan`. */
export async function completedRecordsCheck(context: BenchContext, who: string, table: string, plan: DeliveryPlan): Promise<string[]> {
  const completed = await scanCount(context.admin, table, (item) => item[PROCESSING_RECORD.STATUS_ATTRIBUTE]?.S === RECORD_STATUS.COMPLETED);
  return completed === plan.distinct.length ? [] : [`${who}: ${completed} COMPLETED records, expected ${plan.distinct.length}`];
}
