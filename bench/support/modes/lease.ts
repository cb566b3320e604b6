/**
 * Lease mode (`createLeaseConsumer`): the effect (outside DynamoDB) runs under an owner-fenced lease kept in a
 * processing record in the inbox table: a conditional PutItem claims the message, an UpdateItem completes it.
 * Scenarios L1-L4; L4 ends in the effect-ledger check.
 */
import { createLeaseConsumer, RetryableError, type SqsBatchHandler } from '../../../lambda/index';
import { deliverAll } from '../deliveries';
import { EffectLedger } from '../effect-ledger';
import { createTable, progress, SAMPLE, sqsRecord, type BenchContext, type Message, type OrderPlaced } from '../fixtures';
import type { Prng } from '../prng';
import { count, type ModeResult, type Row } from '../report';
import { batchDelivery, completedRecordsCheck, leaseConsumerParts, measureRun, processedCheck, runPlan, sampleMessages } from '../scenario-steps';
import { storedSize } from '../tables';

export const LEASE_TABLES = { inbox: 'bench-inbox-lease', runInbox: 'bench-inbox-lease-run' } as const;
const SUBSCRIBER = 'Mailer';

/** The effect's ledger key of a message (lease mode has one step, named `effect`). */
const effectKey = (message: Message): string => `${message.envelope.id}#effect`;

export async function leaseScenarios(context: BenchContext, prng: Prng): Promise<ModeResult> {
  const { admin, meter, args } = context;
  await Promise.all(Object.values(LEASE_TABLES).map((table) => createTable(admin, table, { blockedMessagesIndex: true })));

  /** A lease consumer on `inboxTableName` whose effect "sends the order confirmation" into `ledger`; `failOnce` ids throw RetryableError the first time. */
  const consumer = (inboxTableName: string, ledger: EffectLedger, failOnce = new Set<string>()) => {
    const { options, outcomes } = leaseConsumerParts(context, prng, SUBSCRIBER, inboxTableName);
    const handler: SqsBatchHandler = createLeaseConsumer<OrderPlaced>({
      ...options,
      handle: (envelope) => {
        if (failOnce.delete(envelope.id)) throw new RetryableError('mail server answered 421 (try again later); nothing was sent');
        ledger.apply(`${envelope.id}#effect`);
      },
    });
    return { handler, outcomes };
  };

  const rows: Row[] = [];
  const violations: string[] = [];
  progress('lease: single messages');
  const ledger = new EffectLedger();
  const failOnce = new Set<string>();
  const { handler } = consumer(LEASE_TABLES.inbox, ledger, failOnce);
  const deliver = batchDelivery(context, prng);

  const firstDeliveries = sampleMessages(prng, 2000);
  rows.push({
    scenario: 'L1. First delivery (happy path)',
    figures: await deliver(handler, firstDeliveries, 1, 'L1'),
    messages: SAMPLE,
    notes: 'claim: conditional PutItem of the processing record (IN_PROGRESS, lease, step PROCESSING); the effect; completion: owner-fenced UpdateItem (COMPLETED)',
  });
  rows.push({
    scenario: 'L2. Duplicate delivery (already completed)',
    figures: await deliver(handler, firstDeliveries, 2, 'L2'),
    messages: SAMPLE,
    notes: 'the claim (conditional PutItem) fails on the COMPLETED record and returns it: acknowledged, the effect does not run (no batch read: `batchRead` is off by default in this mode)',
  });
  const retried = sampleMessages(prng, 2100);
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
  const plan = runPlan(context, prng, args.modeMessages);
  const { row, processed } = await measureRun(context, { id: 'L4', handler: run.handler, outcomes: run.outcomes, plan });
  rows.push(row);
  const runViolations = [
    ...runLedger.check(plan.distinct.map(effectKey), 'lease L4'),
    ...(await completedRecordsCheck(context, 'lease L4', LEASE_TABLES.runInbox, plan)),
    ...processedCheck('lease L4', processed, plan),
  ];
  violations.push(...runViolations);
  const checks = [
    runViolations.length === 0
      ? `- lease (L4): each of the ${count(plan.distinct.length)} distinct messages' effects ran exactly once (${count(runLedger.total)} effects for ` +
        `${count(args.modeMessages)} deliveries) and every one has a COMPLETED record.`
      : '- lease (L4): VIOLATED (see below)',
  ];
  return { rows, checks, violations, sizes };
}
