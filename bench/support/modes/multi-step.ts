/**
 * Multi-step mode (`createMultiStepConsumer`): k ordered steps, each under the lease of the processing record: the
 * claim (which starts step 1), then one UpdateItem per step (records its success and starts the next, or completes).
 * Scenarios M1-M4 for k = 1, 2, 3; M4 ends in the effect-ledger check.
 */
import { createMultiStepConsumer, type ProcessingStep, type SqsBatchHandler } from '../../../lambda/index';
import { EffectLedger } from '../effect-ledger';
import { createTable, progress, SAMPLE, type BenchContext, type Message, type OrderPlaced } from '../fixtures';
import type { Prng } from '../prng';
import { count, type ModeResult, type Row } from '../report';
import { batchDelivery, completedRecordsCheck, leaseConsumerParts, measureRun, processedCheck, runPlan, sampleMessages } from '../scenario-steps';
import { storedSize } from '../tables';

export const MULTI_STEP_TABLES = { inbox: 'bench-inbox-steps', runInbox: 'bench-inbox-steps-run' } as const;
/** The steps, in order; a consumer with k steps runs the first k. */
const STEP_NAMES = ['create-invoice', 'email-invoice', 'notify-crm'] as const;
/** Steps of the run of N deliveries. */
const RUN_STEPS = 3;

/** The effect-ledger keys of a message's first `steps` steps (`<event id>#<step name>`). */
export const effectKeys = (message: Message, steps: number): string[] => STEP_NAMES.slice(0, steps).map((step) => `${message.envelope.id}#${step}`);

/**
 * The first `k` steps. Each records its effect in `ledger`; step 1 returns the created invoice id for the later steps.
 * With `unknownAtStep`, that step throws an error that is neither `RetryableError` nor `PermanentError`, after which
 * its outcome is unknown (the call may have reached the provider), so the message is blocked.
 */
export function steps(k: number, ledger: EffectLedger, unknownAtStep?: number): ProcessingStep<OrderPlaced>[] {
  return STEP_NAMES.slice(0, k).map((name, index) => ({
    name,
    run: (envelope) => {
      if (unknownAtStep === index + 1) throw new Error(`socket hang up while calling the provider for '${name}'; it may or may not have acted`);
      ledger.apply(`${envelope.id}#${name}`);
      return index === 0 ? { invoiceId: `INV-${envelope.data.orderId.slice(0, 8).toUpperCase()}` } : undefined;
    },
  }));
}

export async function multiStepScenarios(context: BenchContext, prng: Prng): Promise<ModeResult> {
  const { admin, args } = context;
  await Promise.all(Object.values(MULTI_STEP_TABLES).map((table) => createTable(admin, table, { blockedMessagesIndex: true })));

  const consumer = (subscriberName: string, inboxTableName: string, stepList: ProcessingStep<OrderPlaced>[]) => {
    const { options, outcomes, deadLetter } = leaseConsumerParts(context, prng, subscriberName, inboxTableName);
    const handler: SqsBatchHandler = createMultiStepConsumer<OrderPlaced>({ ...options, steps: stepList });
    return { handler, outcomes, deadLetter };
  };
  const deliver = batchDelivery(context, prng);

  const rows: Row[] = [];
  const violations: string[] = [];
  const sizes: Array<[string, number]> = [];
  progress('multi-step: single messages');
  const happyLedger = new EffectLedger();
  const happyMessages: Message[] = [];
  const duplicateRows: Row[] = [];
  for (let k = 1; k <= STEP_NAMES.length; k++) {
    const subscriber = `Invoicing-k${k}`;
    const { handler } = consumer(subscriber, MULTI_STEP_TABLES.inbox, steps(k, happyLedger));
    const messages = sampleMessages(prng, 3000 + 100 * k);
    happyMessages.push(...messages);
    rows.push({
      scenario: `M1. k = ${k}: first delivery (happy path)`,
      figures: await deliver(handler, messages, 1, `M1 k=${k}`),
      messages: SAMPLE,
      notes: `claim PutItem (starts step 1) + ${k} UpdateItem${k === 1 ? '' : 's'} (one per step; the last completes the record)`,
    });
    duplicateRows.push({
      scenario: `M2. k = ${k}: duplicate delivery (already completed)`,
      figures: await deliver(handler, messages, 2, `M2 k=${k}`),
      messages: SAMPLE,
      notes: 'the claim fails on the COMPLETED record and returns it: no step runs (no batch read: `batchRead` is off by default in this mode)',
    });
    sizes.push([`processing record, ${k} step${k === 1 ? '' : 's'}, COMPLETED`, await storedSize(admin, MULTI_STEP_TABLES.inbox, { pk: { S: `${subscriber}#${(messages[0] as Message).envelope.id}` } })]);
  }
  rows.push(...duplicateRows);
  violations.push(...happyLedger.check(happyMessages.flatMap((message, index) => effectKeys(message, Math.floor(index / SAMPLE) + 1)), 'multi-step M1-M2'));

  for (let k = 2; k <= STEP_NAMES.length; k++) {
    const subscriber = `Blocking-k${k}`;
    const blockedLedger = new EffectLedger();
    const { handler, outcomes, deadLetter } = consumer(subscriber, MULTI_STEP_TABLES.inbox, steps(k, blockedLedger, 2));
    const messages = sampleMessages(prng, 3500 + 100 * k);
    rows.push({
      scenario: `M3. k = ${k}: blocked at step 2 by an unknown error`,
      figures: await deliver(handler, messages, 1, `M3 k=${k}`),
      messages: SAMPLE,
      notes:
        'requests until blocked: claim PutItem, step 1, UpdateItem (step 1 SUCCESS, step 2 PROCESSING), step 2 throws, UpdateItem (BLOCKED, ' +
        'reason and body kept, TTL removed; the record enters the sparse BlockedMessages index); the message goes to the dead-letter queue (SQS, not counted)',
    });
    const blocked = outcomes.get('blocked') ?? 0;
    if (blocked !== SAMPLE || deadLetter.letters.length !== SAMPLE) violations.push(`multi-step M3 k=${k}: ${blocked} blocked, ${deadLetter.letters.length} dead letters, expected ${SAMPLE}`);
    violations.push(...blockedLedger.check(messages.map((message) => `${message.envelope.id}#${STEP_NAMES[0]}`), `multi-step M3 k=${k}`));
    if (k === 2) sizes.push(['processing record, 2 steps, BLOCKED at step 2 (with reason and body)', await storedSize(admin, MULTI_STEP_TABLES.inbox, { pk: { S: `${subscriber}#${(messages[0] as Message).envelope.id}` } })]);
  }

  // -- M4: N deliveries with duplicates, then the effect-ledger check -------------------------------------------------
  progress(`multi-step: ${args.modeMessages} deliveries (k = ${RUN_STEPS}), duplicate rate ${args.duplicateRate}`);
  const runLedger = new EffectLedger();
  const run = consumer('Invoicing-run', MULTI_STEP_TABLES.runInbox, steps(RUN_STEPS, runLedger));
  const plan = runPlan(context, prng, args.modeMessages);
  const { row, processed } = await measureRun(context, { id: 'M4', detail: `k = ${RUN_STEPS}`, handler: run.handler, outcomes: run.outcomes, plan });
  rows.push(row);
  const runViolations = [
    ...runLedger.check(plan.distinct.flatMap((message) => effectKeys(message, RUN_STEPS)), 'multi-step M4'),
    ...(await completedRecordsCheck(context, 'multi-step M4', MULTI_STEP_TABLES.runInbox, plan)),
    ...processedCheck('multi-step M4', processed, plan),
  ];
  violations.push(...runViolations);
  const checks = [
    runViolations.length === 0
      ? `- multi-step (M4, k = ${RUN_STEPS}): each step of each of the ${count(plan.distinct.length)} distinct messages ran exactly once ` +
        `(${count(runLedger.total)} effects for ${count(args.modeMessages)} deliveries) and every message has a COMPLETED record.`
      : '- multi-step (M4): VIOLATED (see below)',
  ];
  return { rows, checks, violations, sizes };
}
