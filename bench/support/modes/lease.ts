/**
 * Lease mode (`createLeaseConsumer`): the effect (outside DynamoDB) runs under an owner-fenced lease kept in a
 * processing record in the inbox table: a conditional PutItem claims the message, an UpdateItem completes it.
 * Scenarios L1-L4; L4 ends in the effect-ledger check.
 */
import { createLeaseConsumer, RetryableError, type LeaseConsumerConfig, type SqsBatchHandler } from '../../../lambda/index';
import { PROCESSING_RECORD, RECORD_STATUS } from '../../../lambda/wire-format';
import { atLeastOnce, deliverAll } from '../deliveries';
import { EffectLedger } from '../effect-ledger';
import {
  countingLogger,
  createTable,
  CUSTOMERS,
  customerId,
  DEDUPLICATION_WINDOW_SECONDS,
  expectNoFailures,
  LEASE_DURATION_SECONDS,
  MemoryDeadLetters,
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
import { count, fixed, ruleWriteUnits, type ModeResult, type Row } from '../report';
import { scanCount, storedSize } from '../tables';

export const LEASE_TABLES = { inbox: 'bench-inbox-lease', runInbox: 'bench-inbox-lease-run' } as const;
const SUBSCRIBER = 'Mailer';

/** The effect's ledger key of a message (lease mode has one step, named `effect`). */
const effectKey = (message: Message): string => `${message.envelope.id}#effect`;

export async function leaseScenarios(context: BenchContext, prng: Prng): Promise<ModeResult> {
  const { admin, metered, meter, args } = context;
  await Promise.all(Object.values(LEASE_TABLES).map((table) => createTable(admin, table, { blockedMessagesIndex: true })));

  /** A lease consumer on `inboxTableName` whose effect "sends the order confirmation" into `ledger`; `failOnce` ids throw RetryableError the first time. */
  const consumer = (inboxTableName: string, ledger: EffectLedger, failOnce = new Set<string>()) => {
    const log = countingLogger();
    const config: LeaseConsumerConfig = { subscriberName: SUBSCRIBER, inboxTableName, deduplicationWindowSeconds: DEDUPLICATION_WINDOW_SECONDS, leaseDurationSeconds: LEASE_DURATION_SECONDS };
    const handler: SqsBatchHandler = createLeaseConsumer<OrderPlaced>({
      handle: (envelope) => {
        if (failOnce.delete(envelope.id)) throw new RetryableError('mail server answered 421 (try again later); nothing was sent');
        ledger.apply(`${envelope.id}#effect`);
      },
      client: metered,
      config,
      now,
      logger: log.logger,
      metricsSink: noMetrics,
      deadLetter: new MemoryDeadLetters(),
      newOwnerToken: () => prng.uuid(),
    });
    return { handler, outcomes: log.outcomes };
  };

  const rows: Row[] = [];
  const violations: string[] = [];
  progress('lease: single messages');
  const ledger = new EffectLedger();
  const failOnce = new Set<string>();
  const { handler } = consumer(LEASE_TABLES.inbox, ledger, failOnce);
  const deliver = (messages: readonly Message[], receiveCount: number, what: string) =>
    meter.measure(async () => expectNoFailures(await handler({ Records: messages.map((message) => sqsRecord(prng, message, receiveCount)) }), what));

  const firstDeliveries = Array.from({ length: SAMPLE }, (_, i) => newMessage(prng, customerId(2000 + i)));
  rows.push({
    scenario: 'L1. First delivery (happy path)',
    figures: await deliver(firstDeliveries, 1, 'L1'),
    messages: SAMPLE,
    notes: 'claim: conditional PutItem of the processing record (IN_PROGRESS, lease, step PROCESSING); the effect; completion: owner-fenced UpdateItem (COMPLETED)',
  });
  rows.push({
    scenario: 'L2. Duplicate delivery (already completed)',
    figures: await deliver(firstDeliveries, 2, 'L2'),
    messages: SAMPLE,
    notes: 'the claim fails; ALL_OLD returns the COMPLETED record, so no read; acknowledged, the effect does not run',
  });
  const retried = Array.from({ length: SAMPLE }, (_, i) => newMessage(prng, customerId(2100 + i)));
  for (const message of retried) failOnce.add(message.envelope.id);
  let redelivered = 0;
  const retryFigures = await meter.measure(async () => {
    redelivered = await deliverAll(handler, retried.map((message) => sqsRecord(prng, message, 1)), 'L3');
  });
  rows.push({
    scenario: 'L3. Effect throws `RetryableError` once, then succeeds on the redelivery',
    figures: retryFigures,
    messages: SAMPLE,
    notes:
      `per message, both deliveries (${count(redelivered)} of ${SAMPLE} redelivered): claim Put + release Update (TRY_AGAIN, lease ended); ` +
      'then claim Put fails on the released record + takeover Update + completion Update',
  });
  violations.push(...ledger.check([...firstDeliveries, ...retried].map(effectKey), 'lease L1-L3'));
  const sizes: Array<[string, number]> = [
    ['processing record, lease mode, COMPLETED', await storedSize(admin, LEASE_TABLES.inbox, { pk: { S: `${SUBSCRIBER}#${(firstDeliveries[0] as Message).envelope.id}` } })],
  ];

  // -- L4: N deliveries with duplicates, then the effect-ledger check -------------------------------------------------
  progress(`lease: ${args.modeMessages} deliveries, duplicate rate ${args.duplicateRate}`);
  const runLedger = new EffectLedger();
  const run = consumer(LEASE_TABLES.runInbox, runLedger);
  const plan = atLeastOnce(prng, args.modeMessages, args.duplicateRate, () => newMessage(prng, customerId(prng.int(1, CUSTOMERS))));
  let runRedelivered = 0;
  const runFigures = await meter.measure(async () => {
    runRedelivered = await deliverAll(run.handler, plan.records, 'L4');
  });
  const processed = run.outcomes.get('processed') ?? 0;
  const duplicates = run.outcomes.get('duplicate') ?? 0;
  rows.push({
    scenario: `L4. ${count(args.modeMessages)} deliveries in batches of 10, duplicate rate ${args.duplicateRate} (seed ${args.seed})`,
    figures: runFigures,
    messages: args.modeMessages,
    notes:
      `${count(plan.distinct.length)} distinct messages + ${count(args.modeMessages - plan.distinct.length)} duplicate deliveries; ` +
      `outcomes: ${count(processed)} processed, ${count(duplicates)} duplicate, ${count(runRedelivered)} redelivered after a failure; ` +
      `${fixed(ruleWriteUnits(runFigures) / plan.distinct.length)} WCU per distinct message by the rule, duplicates included`,
  });
  const runViolations = runLedger.check(plan.distinct.map(effectKey), 'lease L4');
  const completed = await scanCount(admin, LEASE_TABLES.runInbox, (item) => item[PROCESSING_RECORD.STATUS_ATTRIBUTE]?.S === RECORD_STATUS.COMPLETED);
  if (completed !== plan.distinct.length) runViolations.push(`lease L4: ${completed} COMPLETED records, expected ${plan.distinct.length}`);
  if (processed !== plan.distinct.length) runViolations.push(`lease L4: ${processed} deliveries were processed, but there are ${plan.distinct.length} distinct messages`);
  violations.push(...runViolations);
  const checks = [
    runViolations.length === 0
      ? `- lease (L4): each of the ${count(plan.distinct.length)} distinct messages' effects ran exactly once (${count(runLedger.total)} effects for ` +
        `${count(args.modeMessages)} deliveries) and every one has a COMPLETED record.`
      : '- lease (L4): VIOLATED (see below)',
  ];
  return { rows, checks, violations, sizes };
}
