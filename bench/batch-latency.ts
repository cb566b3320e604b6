/**
 * Time per SQS batch of idempotent-event-flow's four consumer modes against Powertools for AWS Lambda
 * (`BatchProcessor` + `makeIdempotent` with its DynamoDB persistence layer), side by side in one run, on the same
 * batches of 10 records, against a real DynamoDB Local behind a proxy that adds a fixed latency to every request, at
 * 0 % and 20 % redeliveries (the consumers of a row interleaved batch by batch, so they meet the same machine load):
 * p50 and p95 per batch, records per second, DynamoDB requests, WCU and RCU (AWS rule) per
 * record, and the exactly-once check of every run; ratios to Powertools. By default (`--conflicts aws`) the proxy also
 * refuses what DynamoDB refuses as a transaction conflict (a request on an item an ongoing transaction holds), which
 * DynamoDB Local, serializing transactions, never does; `--conflicts none` measures without it. Per batch it also
 * gives the round trips on the critical path (each request linked to the response it was sent on from) and a
 * modelled latency (those round trips at the added latency + each operation's service time from a calibration pass),
 * on which issue 40's targets are judged: on 2 cores DynamoDB Local serves concurrent requests about one at a time,
 * so the wall clock of a batch whose records commit at once measures its queue, not round trips.
 *
 *   npx tsx bench/batch-latency.ts [--batches N] [--seed S] [--conflicts aws|none] [--batch-size 1-10] [--consumers a,b,...]
 *     [--redelivery-rates 0,0.2] [--customers N] [--delays 0,8]
 *
 * Results (Markdown) go to standard output, progress to standard error. Timings vary from run to run (and with the
 * machine's load); counts and capacity depend only on the arguments, except where Powertools' concurrent records race.
 * Exits 1 if an exactly-once check fails, 2 on any other error. See docs/BENCHMARKS.md.
 */
import { existsSync, readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import * as path from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { DynamoDbLocal } from '../test/support/dynamodb-local';
import { startFaultProxy, type FaultProxy } from '../test/support/fault-proxy';
import { isReadOperation } from './support/capacity-rules';
import { deliverAll, type DeliveryPlan } from './support/deliveries';
import { benchMain } from './support/bench-main';
import { readFlags, usageError } from './support/flags';
import { client, CUSTOMERS, InvariantViolation, progress } from './support/fixtures';
import { CONSUMER_KINDS, DEFAULT_CONSUMER_KINDS, type ConsumerKind, type LatencyConsumer } from './support/latency/consumers';
import { causalPath, criticalPath, soloServiceTimes, type TimedRequest } from './support/latency/critical-path';
import { percentile } from './support/latency/percentile';
import { pathText, renderCriticalPathTable, renderLatencyTable, renderModeledTargets, renderTargets, type CriticalPathFigures, type LatencyRow } from './support/latency/report';
import { RequestTimeline } from './support/latency/request-timeline';
import { interleavedDelivery, latencyPlan, roundTripFloors, timedDelivery, type TimedRun } from './support/latency/timed-delivery';
import { Meter, type Figures } from './support/meter';
import { Prng } from './support/prng';
import { ruleReadUnits, ruleWriteUnits, totalOf } from './support/report';

/** Added latency per request, in milliseconds: none, and a real DynamoDB endpoint's round trip as the issue models it. */
const DELAYS_MS: readonly number[] = [0, 8];
const DEFAULTS = { batches: 40, seed: 42, conflicts: 'aws', batchSize: 10, redeliveryRates: [0, 0.2], customers: CUSTOMERS, delays: DELAYS_MS, capacity: 'on' } as const;
const MAX_BATCHES = 10_000;
const USAGE = 'usage: npx tsx bench/batch-latency.ts [--batches N] [--seed S] [--conflicts aws|none] [--batch-size 1-10] [--consumers name,name,...] [--redelivery-rates 0,0.2] [--customers N] [--delays 0,8] [--capacity on|off]';

function usage(problem: string): never {
  return usageError(problem, USAGE);
}

/** The bench's arguments. */
interface Arguments {
  readonly batches: number;
  readonly seed: number;
  /**
   * `aws`: the proxies refuse what DynamoDB refuses as a transaction conflict (a request on an item an ongoing
   * transaction holds), which DynamoDB Local, serializing transactions, never does; `none`: DynamoDB Local's behaviour.
   */
  readonly conflicts: 'aws' | 'none';
  /** Records per SQS batch (Lambda's batch size), 1 to 10. */
  readonly batchSize: number;
  /** The consumers to run, by name (Powertools always runs: it is every ratio's reference). */
  readonly consumers: readonly ConsumerKind[];
  /** The shares of redeliveries in the plans, one plan each. */
  readonly redeliveryRates: readonly number[];
  /**
   * How many customers the records are drawn among: each record credits one customer's item, so with few customers
   * the records of a batch share items (and commit one after another), with many (e.g. 100000) they touch distinct ones.
   */
  readonly customers: number;
  /** The added latencies per request, in milliseconds, one timed pass each. */
  readonly delays: readonly number[];
  /** `off`: no capacity pass (its WCU and RCU columns read 0); the timed runs only, for a machine too busy for both. */
  readonly capacity: 'on' | 'off';
}

function parseArguments(argv: readonly string[]): Arguments {
  const values = readFlags(argv, ['batches', 'seed', 'conflicts', 'batch-size', 'consumers', 'redelivery-rates', 'customers', 'delays', 'capacity'], USAGE);
  const batches = Number(values.batches ?? DEFAULTS.batches);
  const seed = Number(values.seed ?? DEFAULTS.seed);
  if (!Number.isInteger(batches) || batches < 1 || batches > MAX_BATCHES) usage(`--batches must be a whole number from 1 to ${MAX_BATCHES}, but was '${values.batches}'`);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) usage(`--seed must be a whole number from 0 to 4294967295, but was '${values.seed}'`);
  const conflicts = values.conflicts ?? DEFAULTS.conflicts;
  if (conflicts !== 'aws' && conflicts !== 'none') usage(`--conflicts must be 'aws' or 'none', but was '${conflicts}'`);
  const batchSize = Number(values['batch-size'] ?? DEFAULTS.batchSize);
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 10) usage(`--batch-size must be a whole number from 1 to 10 (SQS's batch for a standard queue), but was '${values['batch-size']}'`);
  const names = values.consumers === undefined ? undefined : values.consumers.split(',').map((name) => name.trim());
  const unknown = names?.filter((name) => !CONSUMER_KINDS.some((kind) => kind.name === name)) ?? [];
  if (unknown.length > 0) usage(`--consumers: unknown ${unknown.map((name) => `'${name}'`).join(', ')}; known: ${CONSUMER_KINDS.map((kind) => kind.name).join(', ')}`);
  const consumers = names === undefined ? DEFAULT_CONSUMER_KINDS : CONSUMER_KINDS.filter((kind) => kind.name === 'Powertools' || names.includes(kind.name));
  const redeliveryRates = values['redelivery-rates'] === undefined ? DEFAULTS.redeliveryRates : values['redelivery-rates'].split(',').map(Number);
  if (redeliveryRates.some((rate) => !(rate >= 0 && rate < 1))) usage(`--redelivery-rates must be shares from 0 to below 1, but was '${values['redelivery-rates']}'`);
  const customers = Number(values.customers ?? DEFAULTS.customers);
  if (!Number.isInteger(customers) || customers < 1 || customers > 1_000_000) usage(`--customers must be a whole number from 1 to 1000000, but was '${values.customers}'`);
  const delays = values.delays === undefined ? DEFAULTS.delays : values.delays.split(',').map(Number);
  if (delays.some((delay) => !(Number.isInteger(delay) && delay >= 0 && delay <= 1000))) usage(`--delays must be whole numbers of milliseconds from 0 to 1000, but was '${values.delays}'`);
  const capacity = values.capacity ?? DEFAULTS.capacity;
  if (capacity !== 'on' && capacity !== 'off') usage(`--capacity must be 'on' or 'off', but was '${capacity}'`);
  return { batches, seed, conflicts, batchSize, consumers, redeliveryRates, customers, delays, capacity };
}

/** The installed version of package `name` (found from its entry point upwards: some packages do not export `./package.json`). */
function packageVersion(name: string): string {
  for (let directory = path.dirname(require.resolve(name)); directory !== path.dirname(directory); directory = path.dirname(directory)) {
    const file = path.join(directory, 'package.json');
    if (!existsSync(file)) continue;
    const manifest = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version: string };
    if (manifest.name === name) return manifest.version;
  }
  return 'unknown';
}

/** A client through `proxy` with its own meter (rule check on only where asked: its reads would add to the timings). */
function meteredClient(proxy: FaultProxy, admin: DynamoDBClient, ruleCheck: boolean): { client: DynamoDBClient; meter: Meter } {
  const metered = client(proxy.endpoint);
  return { client: metered, meter: new Meter(metered, admin, { ruleCheck }) };
}

interface RunResult {
  readonly timed: TimedRun;
  readonly figures: Figures;
  readonly handlerRuns: number;
  readonly violations: string[];
}

/** Batches at the bench's batch size, then single records, of the calibration pass (see {@link calibrate}). */
const CALIBRATION_BATCHES = 10;
const CALIBRATION_SINGLE_RECORDS = 20;

/** The service time of each operation, from the calibration pass: the 10th percentile of its requests alone in flight. */
interface ServiceTimes {
  readonly byOperation: ReadonlyMap<string, { readonly p10Ms: number; readonly medianMs: number; readonly samples: number }>;
  /** Operations the calibration saw only under concurrency: the 10th percentile of all their requests (noted in the report). */
  readonly fallback: ReadonlyMap<string, number>;
}

/**
 * The calibration pass: every consumer (fresh instances, fresh tables, not checked) delivers the first
 * {@link CALIBRATION_BATCHES} batches of `plan`, and another instance the first {@link CALIBRATION_SINGLE_RECORDS} of
 * its records one per invocation, one invocation at a time, through the proxy with no added latency; each request alone
 * in flight is a sample of its operation's service time (DynamoDB Local's, at no concurrency: what the model charges per
 * request besides the added latency, the 10th percentile of the samples: see `soloServiceTimes`). The single records give
 * every operation a request of its own (Powertools' records of a batch and the transactional consumer's transactions are
 * concurrent); the batches give the batch read one (it runs alone, before the batch's transactions, and never in a batch
 * of one record).
 */
async function calibrate(args: Arguments, plan: DeliveryPlan, admin: DynamoDBClient, proxy: FaultProxy, prng: Prng): Promise<ServiceTimes> {
  const requests: TimedRequest[] = [];
  for (const kind of args.consumers) {
    progress(`calibration: ${kind.name}`);
    // the batches on one instance, the single records on another: each starts on empty tables, as a run does
    for (const [records, batchSize] of [[plan.records.slice(0, CALIBRATION_BATCHES * args.batchSize), args.batchSize], [plan.records.slice(0, CALIBRATION_SINGLE_RECORDS), 1]] as const) {
      const metered = client(proxy.endpoint);
      const timeline = new RequestTimeline(metered);
      runs += 1;
      const consumer = await kind.create({ admin, client: metered, prng, suffix: `calibration-${runs}` });
      const recorded = await timeline.record(() => deliverAll(consumer.handler, records, `calibration ${kind.name}`, undefined, batchSize));
      requests.push(...recorded.requests);
      metered.destroy();
    }
  }
  const byOperation = soloServiceTimes(requests);
  const fallback = new Map<string, number>();
  for (const operation of new Set(requests.map((request) => request.operation))) {
    if (byOperation.has(operation)) continue;
    const durations = requests.filter((request) => request.operation === operation).map((request) => request.endMs - request.startMs);
    fallback.set(operation, percentile(durations, 10));
  }
  return { byOperation, fallback };
}

/** The modelled cost of one request of `operation` at `delayMs`: the added latency + the operation's service time. */
function requestCost(serviceTimes: ServiceTimes, delayMs: number): (operation: string) => number {
  return (operation) => delayMs + (serviceTimes.byOperation.get(operation)?.p10Ms ?? serviceTimes.fallback.get(operation) ?? 0);
}

/** A row's critical-path figures from the requests of each of its batches and of its redeliveries. */
function criticalFigures(batches: readonly TimedRequest[][], redeliveries: readonly TimedRequest[], records: number, cost: (operation: string) => number): CriticalPathFigures & { roundTrips: number[] } {
  const paths = batches.map((requests) => causalPath(requests, cost));
  const timingChains = batches.map((requests) => criticalPath(requests).roundTrips);
  const counts = new Map<string, number>();
  for (const path of paths) counts.set(pathText(path.operations), (counts.get(pathText(path.operations)) ?? 0) + 1);
  const [typicalPath, typicalPathBatches] = [...counts.entries()].sort(([a, x], [b, y]) => y - x || a.localeCompare(b))[0] ?? ['(none)', 0];
  const totalMs = paths.reduce((sum, path) => sum + path.modeledMs, 0) + causalPath(redeliveries, cost).modeledMs;
  return {
    roundTrips: paths.map((path) => path.roundTrips),
    roundTripsP50: percentile(paths.map((path) => path.roundTrips), 50),
    roundTripsP95: percentile(paths.map((path) => path.roundTrips), 95),
    timingChainP50: percentile(timingChains, 50),
    timingChainP95: percentile(timingChains, 95),
    modeledP50Ms: percentile(paths.map((path) => path.modeledMs), 50),
    modeledP95Ms: percentile(paths.map((path) => path.modeledMs), 95),
    modeledRecordsPerSecond: records / (totalMs / 1000),
    typicalPath,
    typicalPathBatches,
    batches: paths.length,
  };
}

let runs = 0;
/** What each consumer's exactly-once check verifies, by consumer name (for the report). */
const checkDescriptions = new Map<string, string>();

/** One consumer on fresh tables: delivers `plan`, timed and metered, then checks exactly-once. */
async function runOnce(kind: ConsumerKind, plan: DeliveryPlan, setup: { admin: DynamoDBClient; client: DynamoDBClient; meter: Meter; prng: Prng; batchSize: number }, what: string): Promise<RunResult> {
  runs += 1;
  const consumer = await kind.create({ admin: setup.admin, client: setup.client, prng: setup.prng, suffix: String(runs) });
  checkDescriptions.set(kind.name, consumer.checks);
  let timed: TimedRun | undefined;
  const figures = await setup.meter.measure(async () => {
    timed = await timedDelivery(consumer.handler, plan.records, what, setup.batchSize);
  });
  return { timed: timed as TimedRun, figures, handlerRuns: consumer.handlerRuns(), violations: await consumer.check(plan) };
}

async function run(args: Arguments, local: DynamoDbLocal, proxies: ReadonlyMap<number, FaultProxy>): Promise<string> {
  const admin = client(local.endpoint);
  const prng = new Prng(args.seed);
  const plans = new Map(args.redeliveryRates.map((rate, index) => [rate, latencyPlan(new Prng((args.seed + 7919 * (index + 1)) >>> 0), args.batches, rate, args.batchSize, args.customers)] as const));

  // capacity: every plan once per consumer with no added latency and the rule check on (its reads before and after each
  // write would add to the timings, so the timed runs below go without it); doubles as the warm-up of every code path
  const capacity = meteredClient(proxies.get(0) ?? (proxies.values().next().value as FaultProxy), admin, true);
  const capacityRuns = new Map<string, RunResult>();
  for (const rate of args.capacity === 'on' ? args.redeliveryRates : []) {
    for (const kind of args.consumers) {
      progress(`capacity: ${kind.name}, ${rate * 100} % redeliveries`);
      capacityRuns.set(`${kind.name}@${rate}`, await runOnce(kind, plans.get(rate) as DeliveryPlan, { admin, ...capacity, prng, batchSize: args.batchSize }, `capacity ${kind.name}`));
    }
  }

  // calibration: each operation's service time, alone in flight, with no added latency (the model's per-request cost)
  const highestRate = Math.max(...args.redeliveryRates);
  const serviceTimes = await calibrate(args, plans.get(highestRate) as DeliveryPlan, admin, proxies.get(0) as FaultProxy, prng);
  const floorChecks: string[] = [];

  // timed: per latency and rate, the consumers interleaved batch by batch (see interleavedDelivery), each on fresh tables
  // with a metered client of its own, so each ratio compares batches run seconds apart under the same machine load
  const rows: LatencyRow[] = [];
  for (const delayMs of args.delays) {
    const proxy = proxies.get(delayMs) as FaultProxy;
    for (const rate of args.redeliveryRates) {
      const plan = plans.get(rate) as DeliveryPlan;
      const started = Date.now();
      const setups = args.consumers.map(() => meteredClient(proxy, admin, false));
      // every request of each invocation, start and end: the critical path of each batch (critical-path.ts)
      const timelines = setups.map((setup) => new RequestTimeline(setup.client));
      const batchRequests: TimedRequest[][][] = args.consumers.map(() => []);
      const redeliveryRequests: TimedRequest[][] = args.consumers.map(() => []);
      const consumers: LatencyConsumer[] = [];
      for (const [index, kind] of args.consumers.entries()) {
        runs += 1;
        const consumer = await kind.create({ admin, client: (setups[index] as (typeof setups)[number]).client, prng, suffix: String(runs) });
        checkDescriptions.set(kind.name, consumer.checks);
        consumers.push(consumer);
      }
      const refused = args.consumers.map(() => 0);
      const around = async <T>(index: number, invoke: () => Promise<T>, batch: number | undefined): Promise<T> => {
        const before = proxy.transactionConflictFigures().refused;
        try {
          const { value, requests } = await (timelines[index] as RequestTimeline).record(invoke);
          if (batch === undefined) (redeliveryRequests[index] as TimedRequest[]).push(...requests);
          else (batchRequests[index] as TimedRequest[][])[batch] = requests;
          return value;
        } finally {
          refused[index] = (refused[index] as number) + proxy.transactionConflictFigures().refused - before;
        }
      };
      // every consumer's meter measures the whole interleaved run: each counts only its own client's requests
      const figures: Figures[] = [];
      let timedRuns: TimedRun[] = [];
      const measured = setups.reduceRight<() => Promise<void>>(
        (inner, setup) => async () => void figures.unshift(await setup.meter.measure(inner)),
        async () => void (timedRuns = await interleavedDelivery(consumers.map((consumer) => consumer.handler), plan.records, `${delayMs} ms, ${rate * 100} %`, args.batchSize, around)),
      );
      await measured();
      for (const [index, kind] of args.consumers.entries()) {
        const timed = timedRuns[index] as TimedRun;
        const consumer = consumers[index] as LatencyConsumer;
        const cost = capacityRuns.get(`${kind.name}@${rate}`) ?? { figures: new Map(), violations: [] };
        const records = plan.records.length;
        const writes = totalOf(cost.figures, (op) => !isReadOperation(op));
        const { roundTrips, ...critical } = criticalFigures(batchRequests[index] as TimedRequest[][], redeliveryRequests[index] as TimedRequest[], records, requestCost(serviceTimes, delayMs));
        if (kind.name === 'round-trip floor') {
          // the instrument's check: the floor consumer's chain is known (the most records of the batch on one item)
          const floors = roundTripFloors(plan.records, args.batchSize);
          const equal = floors.filter((floor, batch) => roundTrips[batch] === floor).length;
          const longer = floors.filter((floor, batch) => (roundTrips[batch] as number) > floor).length;
          floorChecks.push(`${delayMs} ms, ${rate * 100} %: the round-trip floor consumer's critical path equals the plan's floor in ${equal} of ${floors.length} batches (longer in ${longer})`);
        }
        rows.push({
          delayMs,
          redeliveryRate: rate,
          consumer: kind.name,
          records,
          distinct: plan.distinct.length,
          p50Ms: percentile(timed.batchMs, 50),
          p95Ms: percentile(timed.batchMs, 95),
          recordsPerSecond: records / (timed.totalMs / 1000),
          requestsPerRecord: totalOf(figures[index] as Figures).requests / records,
          wcuPerRecord: ruleWriteUnits(cost.figures) / records,
          failedWcuPerRecord: writes.failedRuleUnits / records,
          rcuPerRecord: ruleReadUnits(cost.figures) / records,
          handlerRunsPerRecord: consumer.handlerRuns() / records,
          failedRedelivered: timed.redelivered,
          ...(args.conflicts === 'aws' ? { conflictsRefused: refused[index] as number } : {}),
          violations: [...(await consumer.check(plan)), ...cost.violations.map((violation) => `capacity run: ${violation}`)],
          critical,
        });
      }
      progress(
        `${delayMs} ms, ${rate * 100} %: p50 ${args.consumers.map((kind, index) => `${kind.name} ${percentile((timedRuns[index] as TimedRun).batchMs, 50).toFixed(1)} ms`).join(', ')} (${((Date.now() - started) / 1000).toFixed(1)} s)`,
      );
    }
  }

  const violations = rows.flatMap((row) => row.violations.map((violation) => `${row.delayMs} ms, ${row.redeliveryRate * 100} %, ${row.consumer}: ${violation}`));
  const retries = [...capacityRuns.values()].reduce((sum, result) => sum + totalOf(result.figures).attempts - totalOf(result.figures).requests, 0);
  const out = [
    '# Time per batch: the four modes against Powertools (`BatchProcessor` + `makeIdempotent`)',
    '',
    `- command: \`npx tsx bench/batch-latency.ts --batches ${args.batches} --seed ${args.seed} --conflicts ${args.conflicts} --batch-size ${args.batchSize}` +
      `${args.consumers === DEFAULT_CONSUMER_KINDS ? '' : ` --consumers '${args.consumers.map((kind) => kind.name).join(',')}'`}` +
      `${args.redeliveryRates === DEFAULTS.redeliveryRates ? '' : ` --redelivery-rates ${args.redeliveryRates.join(',')}`}` +
      `${args.customers === DEFAULTS.customers ? '' : ` --customers ${args.customers}`}` +
      `${args.delays === DEFAULTS.delays ? '' : ` --delays ${args.delays.join(',')}`}${args.capacity === 'on' ? '' : ' --capacity off'}\``,
    args.conflicts === 'aws'
      ? '- transaction conflicts as AWS answers them: a request on an item an ongoing transaction holds is refused (`TransactionConflict`), which DynamoDB Local never does'
      : '- transaction conflicts: none (DynamoDB Local serializes transactions; AWS would refuse some of these requests)',
    `- ${args.batches} batches of ${args.batchSize} record${args.batchSize === 1 ? '' : 's'} per row; added latency per request ${args.delays.join(' and ')} ms (fault proxy); redeliveries ${args.redeliveryRates.map((rate) => `${rate * 100} %`).join(' and ')}`,
    `- @aws-lambda-powertools/batch ${packageVersion('@aws-lambda-powertools/batch')}, @aws-lambda-powertools/idempotency ${packageVersion('@aws-lambda-powertools/idempotency')}; ` +
      `AWS SDK for JavaScript v3 ${packageVersion('@aws-sdk/client-dynamodb')}; Node.js ${process.versions.node}`,
    `- machine: ${cpus().length} cores, load average ${loadavg().map((value) => value.toFixed(1)).join(' / ')} at the end of the run`,
    `- SDK retries in the capacity runs: ${retries === 0 ? 'none happened' : retries}`,
    `- records drawn among ${args.customers} customers; round-trip floor per batch (the most records of a batch on one customer's item: they commit one ` +
      `after another, the rest in one round trip, no read needed): ${args.redeliveryRates
        .map((rate) => {
          const floors = roundTripFloors((plans.get(rate) as DeliveryPlan).records, args.batchSize);
          return `${rate * 100} %: mean ${(floors.reduce((sum, floor) => sum + floor, 0) / floors.length).toFixed(2)} (${Math.min(...floors)}-${Math.max(...floors)})`;
        })
        .join('; ')}`,
    '',
    renderLatencyTable(rows),
    '',
    'p50 and p95 over the invocations with a batch of the plan (redeliveries of failed records excluded); records/s = records of the plan / wall time of all ' +
      'invocations, redeliveries of failed records included; requests per record from the timed run; WCU and RCU per record by the AWS rule (failed writes ' +
      'included, shown apart), from a run of the same plan with no added latency and the rule check on; "vs PT": ratio to Powertools at the same latency and rate.',
    '',
    '## Critical path and modelled latency',
    '',
    'Per batch, the round trips on its critical path: the longest chain of its DynamoDB requests, each sent on from the response of the one before ' +
      '(the request whose response came last before it was sent, recorded on the consumer\'s client). Beside it, the timing chain: the longest chain of ' +
      'requests each starting at or after the previous one ended, which DynamoDB Local\'s queueing lengthens (the follow-up of a queued request starts after ' +
      'other records\' follow-ups ended). Modelled latency of a batch: the heaviest such chain, each request costing the added latency + ' +
      'its operation\'s service time below; modelled records/s: records of the plan / the modelled latency of all invocations, redeliveries of failed records ' +
      'included. The model leaves out the client\'s CPU time and back-off waits, and takes requests on one chain as AWS serves them: concurrent requests ' +
      'at once (DynamoDB Local and 2 cores serialize them, which is what the wall clock measures).',
    '',
    `- service time per operation (DynamoDB Local, no added latency, the 10th percentile of the requests alone in flight in a calibration pass of ${CALIBRATION_BATCHES} ` +
      `batches and ${CALIBRATION_SINGLE_RECORDS} single records per consumer, ${Math.round(highestRate * 100)} % redeliveries; median and samples in brackets): ` +
      [...serviceTimes.byOperation.entries()].map(([operation, time]) => `${operation} ${time.p10Ms.toFixed(2)} ms (${time.medianMs.toFixed(2)} ms, ${time.samples})`).join(', ') +
      (serviceTimes.fallback.size === 0 ? '' : `; never alone, so the 10th percentile of all its requests: ${[...serviceTimes.fallback.entries()].map(([operation, ms]) => `${operation} ${ms.toFixed(2)} ms`).join(', ')}`),
    ...floorChecks.map((check) => `- ${check}`),
    '',
    renderCriticalPathTable(rows),
    '',
    '## Targets of issue 40, on the critical path: round trips and modelled latency (wall clock beside)',
    '',
    renderModeledTargets(rows),
    '',
    '## Targets of issue 11 (wall clock)',
    '',
    renderTargets(rows),
    '',
    '## Exactly-once checks (every row, timed run and capacity run)',
    '',
    ...args.consumers.map((kind) => `- ${kind.name}: ${checkDescriptions.get(kind.name) ?? ''}`),
  ].join('\n');
  if (violations.length > 0) throw new InvariantViolation(`${out}\n\n## Exactly-once invariant VIOLATED\n\n${violations.map((violation) => `- ${violation}`).join('\n')}`);
  return out;
}

async function main(): Promise<void> {
  const args = parseArguments(process.argv.slice(2));
  await benchMain(async (local, stopWith) => {
    const proxies = new Map<number, FaultProxy>();
    for (const delayMs of new Set([0, ...args.delays])) {
      proxies.set(delayMs, stopWith(await startFaultProxy(local.endpoint, { delayMs, transactionConflicts: args.conflicts === 'aws' })));
    }
    return run(args, local, proxies);
  });
}

void main();
