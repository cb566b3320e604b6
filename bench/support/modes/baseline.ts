/**
 * The comparison baseline (`powertools-style.ts`): Powertools idempotency's request sequence around the same ledger
 * credit, on the same deliveries as transactional mode. Scenarios B1-B3.
 */
import { UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DeliveryPlan } from '../deliveries';
import { createTable, now, progress, SAMPLE, type BenchContext, type Message } from '../fixtures';
import { PowertoolsStyleIdempotency, type BaselineOutcome } from '../powertools-style';
import { count, type ModeResult, type Row } from '../report';
import { wcuPerDistinctMessage } from '../scenario-steps';
import { storedSize } from '../tables';
import { ledgerCheck } from './transactional';

export const BASELINE_TABLES = {
  records: 'bench-powertools-idempotency',
  ledger: 'bench-ledger-baseline',
} as const;

export function baselineIdempotency(client: DynamoDBClient, clock: () => Date = now): PowertoolsStyleIdempotency {
  return new PowertoolsStyleIdempotency({
    client,
    tableName: BASELINE_TABLES.records,
    functionName: 'billing-function',
    expiresAfterSeconds: 3600,
    remainingTimeMillis: 30_000,
    now: clock,
  });
}

export async function baselineScenarios(context: BenchContext, firstDeliveries: readonly Message[], plan: DeliveryPlan): Promise<ModeResult> {
  const { admin, metered, meter } = context;
  await Promise.all([
    createTable(admin, BASELINE_TABLES.records, { partitionKey: 'id' }), // Powertools' default key attribute
    createTable(admin, BASELINE_TABLES.ledger),
  ]);
  const baseline = baselineIdempotency(metered);
  const baselineCredit = (message: Message) => async (): Promise<void> => {
    await metered.send(
      new UpdateItemCommand({
        TableName: BASELINE_TABLES.ledger,
        Key: { pk: { S: `CUSTOMER#${message.envelope.data.customerId}` } },
        UpdateExpression: 'ADD balanceCents :amount',
        ExpressionAttributeValues: { ':amount': { N: String(message.envelope.data.totalCents) } },
      }),
    );
  };
  /** Measures processing each of `firstDeliveries` once, each with the outcome `expected` (`what` names the scenario). */
  const deliverEach = (expected: BaselineOutcome, what: string) =>
    meter.measure(async () => {
      for (const message of firstDeliveries) {
        const outcome = await baseline.process(message.envelope.id, baselineCredit(message));
        if (outcome !== expected) throw new Error(`${what}: expected ${expected}, got ${outcome}`);
      }
    });
  const rows: Row[] = [];
  progress('baseline: single messages');
  rows.push({
    scenario: 'B1. First delivery, 1 ledger Update',
    figures: await deliverEach('processed', 'B1'),
    messages: SAMPLE,
    notes: 'INPROGRESS Put, business Update, COMPLETED Update: three separate writes',
  });
  rows.push({
    scenario: 'B2. Duplicate delivery',
    figures: await deliverEach('duplicate', 'B2'),
    messages: SAMPLE,
    notes: 'conditional Put fails (ALL_OLD returns the COMPLETED record, so no extra read)',
  });

  progress('baseline: the transactional run, again');
  const outcomes = new Map<string, number>();
  const runFigures = await meter.measure(async () => {
    for (const delivery of plan.deliveries) {
      const outcome = await baseline.process(delivery.message.envelope.id, baselineCredit(delivery.message));
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
    }
  });
  rows.push({
    scenario: `B3. The same ${count(plan.deliveries.length)} deliveries as T5`,
    figures: runFigures,
    messages: plan.deliveries.length,
    notes:
      `outcomes: ${count(outcomes.get('processed') ?? 0)} processed, ${count(outcomes.get('duplicate') ?? 0)} duplicate; ` +
      wcuPerDistinctMessage(runFigures, plan),
  });

  const { balances, violations } = await ledgerCheck(admin, 'baseline', BASELINE_TABLES.ledger, plan.distinct);
  const sample = firstDeliveries[0] as Message;
  return {
    rows,
    checks: [
      violations.length === 0
        ? `- baseline (B3, no crash): every one of the ${balances} ledger balances equals the sum of its distinct messages.`
        : '- baseline (B3): VIOLATED (see below)',
    ],
    violations,
    sizes: [['baseline idempotency record (COMPLETED)', await storedSize(admin, BASELINE_TABLES.records, { id: { S: baseline.key(sample.envelope.id) } })]],
  };
}
