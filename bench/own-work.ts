/**
 * The runtime's own work per message, without DynamoDB: the transactional consumer and the hand-written inbox's
 * per-message steps against a client whose `send` answers at once (no SDK, no HTTP), so what is left is parsing, the
 * fingerprint, the limit checks, logs and metrics. A profiling aid beside bench/cpu-per-message.ts, whose figures are
 * the ones that count (it measures with the real SDK and DynamoDB Local).
 *
 *   npx tsx bench/own-work.ts [--messages N] [--batch-size B] [--rounds K]
 */
import { createLogger, createTransactionalConsumer, type SQSRecord } from '../lambda/index';
import { closeSync, openSync, writeSync } from 'node:fs';
import { now, type OrderPlaced } from './support/fixtures';
import { latencyPlan } from './support/latency/timed-delivery';
import { credit } from './support/modes/transactional';
import { Prng } from './support/prng';
import { inboxConfig } from './support/scenario-steps';

const argument = (name: string, fallback: number): number => {
  const index = process.argv.indexOf(`--${name}`);
  return index < 0 ? fallback : Number(process.argv[index + 1]);
};
const messages = argument('messages', 20_000);
const batchSize = argument('batch-size', 1);
const rounds = argument('rounds', 5);

/** A DocumentClient stand-in that answers every command at once with nothing. */
const instantClient = { config: { translateConfig: { marshallOptions: { removeUndefinedValues: true } } }, send: async () => ({}) } as never;

async function main(): Promise<void> {
  const devNull = openSync('/dev/null', 'w');
  const sink = (line: string): void => void writeSync(devNull, `${line}\n`);
  const plan = latencyPlan(new Prng(42), Math.ceil(messages / batchSize), 0, batchSize);
  const handler = createTransactionalConsumer<OrderPlaced>({
    handle: credit('ledger'),
    client: instantClient,
    config: inboxConfig('Billing', 'inbox'),
    now,
    logger: createLogger({ sink, level: 'INFO' }),
    metricsSink: sink,
    batchRead: false,
  });
  const handWritten = async (records: readonly SQSRecord[]): Promise<void> => {
    for (const record of records) {
      const envelope = JSON.parse(record.body) as { id: string; data: OrderPlaced };
      await (instantClient as { send: (command: unknown) => Promise<unknown> }).send({
        TransactItems: [
          { Update: { TableName: 'ledger', Key: { pk: `CUSTOMER#${envelope.data.customerId}` }, UpdateExpression: 'ADD balanceCents :amount', ExpressionAttributeValues: { ':amount': envelope.data.totalCents } } },
          { Put: { TableName: 'inbox', Item: { pk: `Billing#${envelope.id}` }, ConditionExpression: 'attribute_not_exists(pk)' } },
        ],
      });
    }
  };
  for (let round = 0; round <= rounds; round++) {
    for (const [name, run] of [['transactional', (batch: SQSRecord[]) => handler({ Records: batch })], ['hand-written', handWritten]] as const) {
      const before = process.cpuUsage();
      for (let start = 0; start < plan.records.length; start += batchSize) await run(plan.records.slice(start, start + batchSize));
      const cpu = process.cpuUsage(before);
      process.stderr.write(`${round === 0 ? 'warm-up' : `round ${round}`}: ${name} ${((cpu.user + cpu.system) / plan.records.length).toFixed(1)} µs per message\n`);
    }
  }
  closeSync(devNull);
}

void main();
