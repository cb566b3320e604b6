/**
 * CPU per message of the transactional consumer against a hand-written inbox (issue 31, item 1), side by side in one
 * process on one DynamoDB Local: the same seeded deliveries (new `OrderPlaced` events and redeliveries) go through
 * `createTransactionalConsumer` (the real factory, its default logger and metrics writing their lines to /dev/null as
 * Lambda's stdout would take them) and through `bench/support/latency/hand-written-inbox.ts`, one invocation at a time,
 * each on fresh tables. Measured per run: the Node.js process's CPU time (`process.cpuUsage`, user + system: the
 * consumer, the SDK and the HTTP client; DynamoDB Local is another process) and wall time per message, and requests per
 * message. The runs alternate (A B, B A, ...) after a warm-up of each, so drift of the shared machine falls on both;
 * the ratio of each pair is reported, and their median.
 *
 *   npx tsx bench/cpu-per-message.ts [--messages N] [--duplicate-rate R] [--rounds K] [--seed S] [--batch-sizes 1,10]
 *
 * Results (Markdown) go to standard output, progress to standard error. Exits 1 if an exactly-once check fails, 2 on
 * any other error. See docs/BENCHMARKS.md ("CPU per message").
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createLogger, createTransactionalConsumer, type SqsBatchHandler } from '../lambda/index';
import { benchMain } from './support/bench-main';
import { readFlags, usageError } from './support/flags';
import { deliverAll, type DeliveryPlan } from './support/deliveries';
import { client, createTable, InvariantViolation, now, progress, type OrderPlaced } from './support/fixtures';
import { createHandWrittenInbox } from './support/latency/hand-written-inbox';
import { latencyPlan } from './support/latency/timed-delivery';
import { credit, ledgerCheck } from './support/modes/transactional';
import { Prng } from './support/prng';
import { inboxConfig } from './support/scenario-steps';
import { scanCount } from './support/tables';

const DEFAULTS = { messages: 1000, duplicateRate: 0.2, rounds: 3, seed: 42, batchSizes: [1, 10] } as const;
const USAGE = 'usage: npx tsx bench/cpu-per-message.ts [--messages N] [--duplicate-rate R] [--rounds K] [--seed S] [--batch-sizes 1,10] [--only transactional|hand-written]';

interface Arguments {
  readonly messages: number;
  readonly duplicateRate: number;
  readonly rounds: number;
  readonly seed: number;
  readonly batchSizes: readonly number[];
  /**
   * One consumer alone, `rounds` times, nothing compared: for a profile of its work
   * (`node --cpu-prof --import tsx bench/cpu-per-message.ts --only transactional`).
   */
  readonly only?: string;
}

function usage(problem: string): never {
  return usageError(problem, USAGE);
}

function parseArguments(argv: readonly string[]): Arguments {
  const values = readFlags(argv, ['messages', 'duplicate-rate', 'rounds', 'seed', 'batch-sizes', 'only'], USAGE);
  const messages = Number(values.messages ?? DEFAULTS.messages);
  const duplicateRate = Number(values['duplicate-rate'] ?? DEFAULTS.duplicateRate);
  const rounds = Number(values.rounds ?? DEFAULTS.rounds);
  const seed = Number(values.seed ?? DEFAULTS.seed);
  const batchSizes = values['batch-sizes'] === undefined ? DEFAULTS.batchSizes : values['batch-sizes'].split(',').map(Number);
  if (!Number.isInteger(messages) || messages < 10 || messages > 100_000) usage(`--messages must be a whole number from 10 to 100000, but was '${values.messages}'`);
  if (!(duplicateRate >= 0 && duplicateRate < 1)) usage(`--duplicate-rate must be at least 0 and below 1, but was '${values['duplicate-rate']}'`);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 20) usage(`--rounds must be a whole number from 1 to 20, but was '${values.rounds}'`);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) usage(`--seed must be a whole number from 0 to 4294967295, but was '${values.seed}'`);
  if (batchSizes.some((size) => !Number.isInteger(size) || size < 1 || size > 10)) usage(`--batch-sizes must be whole numbers from 1 to 10, but was '${values['batch-sizes']}'`);
  const only = values.only;
  if (only !== undefined && only !== 'transactional' && only !== 'hand-written') usage(`--only must be 'transactional' or 'hand-written', but was '${only}'`);
  return { messages, duplicateRate, rounds, seed, batchSizes, ...(only === undefined ? {} : { only }) };
}

/** A consumer under test on its own fresh tables, and its exactly-once check. */
interface Contender {
  readonly handler: SqsBatchHandler;
  check(plan: DeliveryPlan): Promise<string[]>;
}

interface ContenderKind {
  readonly name: string;
  create(admin: DynamoDBClient, client: DynamoDBClient, suffix: string, sink: (line: string) => void): Promise<Contender>;
}

async function inboxAndLedger(admin: DynamoDBClient, prefix: string): Promise<{ inboxTable: string; ledgerTable: string }> {
  const tables = { inboxTable: `${prefix}-inbox`, ledgerTable: `${prefix}-ledger` };
  await Promise.all([createTable(admin, tables.inboxTable), createTable(admin, tables.ledgerTable)]);
  return tables;
}

const exactlyOnce = async (admin: DynamoDBClient, who: string, tables: { inboxTable: string; ledgerTable: string }, plan: DeliveryPlan): Promise<string[]> => {
  const violations = (await ledgerCheck(admin, who, tables.ledgerTable, plan.distinct)).violations;
  const inbox = await scanCount(admin, tables.inboxTable);
  return inbox === plan.distinct.length ? violations : [...violations, `${who}: the inbox holds ${inbox} records, expected ${plan.distinct.length}`];
};

const TRANSACTIONAL: ContenderKind = {
  name: 'transactional',
  async create(admin, client, suffix, sink) {
    const tables = await inboxAndLedger(admin, `cpu-tx-${suffix}`);
    const handler = createTransactionalConsumer<OrderPlaced>({
      handle: credit(tables.ledgerTable),
      client,
      config: inboxConfig('Billing', tables.inboxTable),
      now,
      // the defaults a deployed consumer runs with (INFO, one summary line and one EMF line per batch), written where
      // Lambda's stdout would take them
      logger: createLogger({ sink, level: 'INFO' }),
      metricsSink: sink,
    });
    return { handler, check: (plan) => exactlyOnce(admin, 'transactional', tables, plan) };
  },
};

const HAND_WRITTEN: ContenderKind = {
  name: 'hand-written inbox',
  async create(admin, client, suffix) {
    const tables = await inboxAndLedger(admin, `cpu-hw-${suffix}`);
    const handler = createHandWrittenInbox({ client, ...tables, onRun: () => undefined });
    return { handler, check: (plan) => exactlyOnce(admin, 'hand-written inbox', tables, plan) };
  },
};

/** One run's figures. */
interface Sample {
  readonly cpuMicrosPerMessage: number;
  readonly wallMicrosPerMessage: number;
  readonly requestsPerMessage: number;
}

/** Counts the requests a client sends (a middleware at `initialize`: one per command). */
function countRequests(target: DynamoDBClient): () => number {
  let requests = 0;
  target.middlewareStack.add((next) => (args) => ((requests += 1), next(args)), { step: 'initialize', name: 'cpuBenchRequestCounter' });
  return () => requests;
}

let runs = 0;

async function runOnce(kind: ContenderKind, admin: DynamoDBClient, endpoint: string, plan: DeliveryPlan, batchSize: number, sink: (line: string) => void): Promise<Sample> {
  runs += 1;
  const measured = client(endpoint);
  const requests = countRequests(measured);
  const contender = await kind.create(admin, measured, String(runs), sink);
  const cpuBefore = process.cpuUsage();
  const wallBefore = performance.now();
  await deliverAll(contender.handler, plan.records, kind.name, undefined, batchSize);
  const wallMicros = (performance.now() - wallBefore) * 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const violations = await contender.check(plan);
  measured.destroy();
  if (violations.length > 0) throw new InvariantViolation(`exactly-once VIOLATED:\n${violations.map((violation) => `- ${violation}`).join('\n')}`);
  const messages = plan.records.length;
  return { cpuMicrosPerMessage: (cpu.user + cpu.system) / messages, wallMicrosPerMessage: wallMicros / messages, requestsPerMessage: requests() / messages };
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] as number) : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
};

const fixed = (value: number, digits = 0): string => value.toFixed(digits);

async function run(args: Arguments, endpoint: string): Promise<string> {
  const admin = client(endpoint);
  const devNull = openSync('/dev/null', 'w');
  const sink = (line: string): void => void writeSync(devNull, `${line}\n`);
  const lines: string[] = [];
  try {
    for (const batchSize of args.batchSizes) {
      const batches = Math.ceil(args.messages / batchSize);
      const plan = latencyPlan(new Prng(args.seed), batches, args.duplicateRate, batchSize);
      if (args.only !== undefined) {
        const kind = args.only === 'transactional' ? TRANSACTIONAL : HAND_WRITTEN;
        for (let round = 0; round <= args.rounds; round++) {
          const sample = await runOnce(kind, admin, endpoint, plan, batchSize, sink);
          progress(`${kind.name}, batch size ${batchSize}, ${round === 0 ? 'warm-up' : `round ${round}`}: CPU ${fixed(sample.cpuMicrosPerMessage)} µs per message`);
        }
        continue;
      }
      progress(`batch size ${batchSize}: warm-up`);
      for (const kind of [TRANSACTIONAL, HAND_WRITTEN]) await runOnce(kind, admin, endpoint, plan, batchSize, sink);
      const samples = new Map<string, Sample[]>([[TRANSACTIONAL.name, []], [HAND_WRITTEN.name, []]]);
      const ratios: number[] = [];
      const rounds: string[] = [];
      for (let round = 0; round < args.rounds; round++) {
        const order = round % 2 === 0 ? [TRANSACTIONAL, HAND_WRITTEN] : [HAND_WRITTEN, TRANSACTIONAL];
        const pair = new Map<string, Sample>();
        for (const kind of order) {
          const sample = await runOnce(kind, admin, endpoint, plan, batchSize, sink);
          pair.set(kind.name, sample);
          samples.get(kind.name)?.push(sample);
        }
        const ours = pair.get(TRANSACTIONAL.name) as Sample;
        const theirs = pair.get(HAND_WRITTEN.name) as Sample;
        ratios.push(ours.cpuMicrosPerMessage / theirs.cpuMicrosPerMessage);
        rounds.push(
          `| ${batchSize} | ${round + 1} | ${order.map((kind) => kind.name).join(', then ')} | ${fixed(ours.cpuMicrosPerMessage)} | ${fixed(theirs.cpuMicrosPerMessage)} | ` +
            `${(ratios.at(-1) as number).toFixed(2)}× | ${fixed(1e6 / ours.wallMicrosPerMessage)} | ${fixed(1e6 / theirs.wallMicrosPerMessage)} | ` +
            `${ours.requestsPerMessage.toFixed(3)} | ${theirs.requestsPerMessage.toFixed(3)} |`,
        );
        progress(`batch size ${batchSize}, round ${round + 1}: CPU ${fixed(ours.cpuMicrosPerMessage)} µs vs ${fixed(theirs.cpuMicrosPerMessage)} µs per message (${(ratios.at(-1) as number).toFixed(2)}×)`);
      }
      const medianOf = (name: string, pick: (sample: Sample) => number): number => median((samples.get(name) as Sample[]).map(pick));
      lines.push(
        ...rounds,
        `| ${batchSize} | **median** | | **${fixed(medianOf(TRANSACTIONAL.name, (s) => s.cpuMicrosPerMessage))}** | **${fixed(medianOf(HAND_WRITTEN.name, (s) => s.cpuMicrosPerMessage))}** | ` +
          `**${median(ratios).toFixed(2)}×** | ${fixed(1e6 / medianOf(TRANSACTIONAL.name, (s) => s.wallMicrosPerMessage))} | ${fixed(1e6 / medianOf(HAND_WRITTEN.name, (s) => s.wallMicrosPerMessage))} | | |`,
      );
    }
  } finally {
    closeSync(devNull);
  }
  return [
    '# CPU per message: the transactional consumer against a hand-written inbox',
    '',
    `- command: \`npx tsx bench/cpu-per-message.ts --messages ${args.messages} --duplicate-rate ${args.duplicateRate} --rounds ${args.rounds} --seed ${args.seed} --batch-sizes ${args.batchSizes.join(',')}\``,
    `- ${args.messages} deliveries (redeliveries drawn at ${args.duplicateRate * 100} %), one invocation at a time, no added latency, no faults; every run on fresh tables, exactly-once checked after each`,
    `- CPU: the Node.js process's user + system time during the run (consumer, SDK, HTTP; DynamoDB Local is another process), per delivery`,
    `- machine: ${cpus().length} cores, load average ${loadavg().map((value) => value.toFixed(1)).join(' / ')} at the end; Node.js ${process.versions.node}`,
    '',
    '| batch size | round | order | CPU µs/message, transactional | CPU µs/message, hand-written | CPU ratio | messages/s, transactional | messages/s, hand-written | requests/message, transactional | requests/message, hand-written |',
    '|---:|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...lines,
  ].join('\n');
}

const args = parseArguments(process.argv.slice(2));
void benchMain((local) => run(args, local.endpoint));
