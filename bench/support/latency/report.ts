/** The batch-latency bench's rows, their Markdown table (ratios to Powertools in the same run) and the issue's targets. Pure. */
import { fixed } from '../report';

/** One consumer at one added latency and redelivery rate. */
export interface LatencyRow {
  readonly delayMs: number;
  readonly redeliveryRate: number;
  readonly consumer: string;
  /** Records of the plan (first deliveries + planned redeliveries). */
  readonly records: number;
  readonly distinct: number;
  readonly p50Ms: number;
  readonly p95Ms: number;
  readonly recordsPerSecond: number;
  readonly requestsPerRecord: number;
  /** From the capacity run of the same plan (no added latency, rule check on). */
  readonly wcuPerRecord: number;
  readonly failedWcuPerRecord: number;
  readonly rcuPerRecord: number;
  readonly handlerRunsPerRecord: number;
  /** Records reported failed and redelivered by the run. */
  readonly failedRedelivered: number;
  /**
   * Requests of the timed run refused as DynamoDB refuses a request on an item an ongoing transaction holds
   * (`TransactionConflict`), by the proxy's conflict model; undefined when the model was off.
   */
  readonly conflictsRefused?: number;
  /** Exactly-once violations of the timed run and of the capacity run. */
  readonly violations: readonly string[];
  /** The critical path of the row's batches (critical-path.ts); undefined when not recorded. */
  readonly critical?: CriticalPathFigures;
}

/**
 * A row's critical paths: per batch of the plan, the round trips on its critical path (causal: critical-path.ts,
 * `causalPath`) and its modelled latency (the heaviest chain, each request costing the added latency + its operation's service time), and the modelled throughput.
 */
export interface CriticalPathFigures {
  readonly roundTripsP50: number;
  readonly roundTripsP95: number;
  /** The timing chain's length (requests each starting at or after the previous one ended), an upper bound under queueing. */
  readonly timingChainP50: number;
  readonly timingChainP95: number;
  readonly modeledP50Ms: number;
  readonly modeledP95Ms: number;
  /** Records of the plan / the modelled latency of all invocations, redeliveries of failed records included. */
  readonly modeledRecordsPerSecond: number;
  /** The most frequent critical path (operations in order) among the batches, and in how many batches it was. */
  readonly typicalPath: string;
  readonly typicalPathBatches: number;
  readonly batches: number;
}

export const POWERTOOLS_NAME = 'Powertools';

/** The consumer the issue-40 targets judge, and the two it is judged against besides Powertools. */
const TRANSACTIONAL_NAME = 'transactional';
const FLOOR_NAME = 'round-trip floor';
const HAND_WRITTEN_NAME = 'hand-written inbox';

const ms = (value: number): string => value.toFixed(1);
const ratio = (value: number, reference: number): string => (reference === 0 ? (value === 0 ? '1.00×' : '—') : `${(value / reference).toFixed(2)}×`);
const percent = (rate: number): string => `${Math.round(rate * 100)} %`;

/** The Powertools row of the same latency and redelivery rate as `row`. */
export function referenceOf(rows: readonly LatencyRow[], row: LatencyRow): LatencyRow {
  const reference = rows.find((candidate) => candidate.consumer === POWERTOOLS_NAME && candidate.delayMs === row.delayMs && candidate.redeliveryRate === row.redeliveryRate);
  if (reference === undefined) throw new Error(`no Powertools row at ${row.delayMs} ms, ${percent(row.redeliveryRate)}`);
  return reference;
}

/** The results table: one line per row, ratios to the Powertools row of the same latency and redelivery rate. */
export function renderLatencyTable(rows: readonly LatencyRow[]): string {
  const lines = [
    '| added latency | redeliveries | consumer | p50 ms/batch | p95 ms/batch | records/s | requests/record | WCU/record | RCU/record | handler runs/record | ' +
      'p50 vs PT | p95 vs PT | records/s vs PT | requests vs PT | WCU vs PT | failed, redelivered | conflicts refused | exactly-once |',
    '|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  for (const row of rows) {
    const pt = referenceOf(rows, row);
    const failed = row.failedWcuPerRecord > 0 ? ` (failed: ${fixed(row.failedWcuPerRecord)})` : '';
    lines.push(
      `| ${row.delayMs} ms | ${percent(row.redeliveryRate)} | ${row.consumer} | ${ms(row.p50Ms)} | ${ms(row.p95Ms)} | ${Math.round(row.recordsPerSecond)} | ` +
        `${fixed(row.requestsPerRecord)} | ${fixed(row.wcuPerRecord)}${failed} | ${fixed(row.rcuPerRecord)} | ${fixed(row.handlerRunsPerRecord)} | ` +
        `${ratio(row.p50Ms, pt.p50Ms)} | ${ratio(row.p95Ms, pt.p95Ms)} | ${ratio(row.recordsPerSecond, pt.recordsPerSecond)} | ` +
        `${ratio(row.requestsPerRecord, pt.requestsPerRecord)} | ${ratio(row.wcuPerRecord, pt.wcuPerRecord)} | ${row.failedRedelivered} | ${row.conflictsRefused ?? '—'} | ` +
        `${row.violations.length === 0 ? 'ok' : `**VIOLATED** (${row.violations.length})`} |`,
    );
  }
  return lines.join('\n');
}

/**
 * The targets of issue 11, each with the figure of this run: p50 ratios at the highest added latency and the highest
 * redelivery rate, requests per record, and what a redelivery costs the transactional consumer (WCU and handler runs
 * beyond those of its distinct records, from the capacity runs at 0 % and at the highest rate).
 */
export function renderTargets(rows: readonly LatencyRow[]): string {
  const delay = Math.max(...rows.map((row) => row.delayMs));
  const rate = Math.max(...rows.map((row) => row.redeliveryRate));
  const at = (consumer: string, delayMs = delay, redeliveryRate = rate): LatencyRow | undefined => {
    const candidates = rows.filter((row) => row.delayMs === delayMs && row.redeliveryRate === redeliveryRate);
    // 'transactional' is the default consumer, not 'transactional (no read)'; 'multi-step' is 'multi-step (k = 3)'
    return candidates.find((row) => row.consumer === consumer) ?? candidates.find((row) => row.consumer.startsWith(`${consumer} (k`));
  };
  const lines: string[] = [];
  const p50Target = (consumer: string, bound: number): void => {
    const row = at(consumer);
    if (row === undefined) return;
    const value = row.p50Ms / referenceOf(rows, row).p50Ms;
    lines.push(`- ${consumer}, ${delay} ms, ${percent(rate)}: p50 ${value.toFixed(2)}× Powertools (target ≤ ${bound}×): ${value <= bound ? 'met' : 'not met'}`);
  };
  p50Target('transactional', 0.5);
  // issue 31: the batch read decided per batch, on every workload (duplicates rare and common)
  for (const redeliveryRate of [...new Set(rows.map((row) => row.redeliveryRate))].filter((value) => value !== rate)) {
    const row = at('transactional', delay, redeliveryRate);
    if (row === undefined) continue;
    const value = row.p50Ms / referenceOf(rows, row).p50Ms;
    lines.push(`- transactional, ${delay} ms, ${percent(redeliveryRate)}: p50 ${value.toFixed(2)}× Powertools (target ≤ 0.5×): ${value <= 0.5 ? 'met' : 'not met'}`);
  }
  const transactional = at('transactional');
  if (transactional !== undefined) {
    const value = transactional.requestsPerRecord;
    lines.push(`- transactional, ${delay} ms, ${percent(rate)}: requests per record ${fixed(value)} (target ≤ 1.1): ${value <= 1.1 ? 'met' : 'not met'}`);
    const fresh = rows.find((row) => row.consumer === 'transactional' && row.delayMs === delay && row.redeliveryRate === 0);
    const redeliveries = transactional.records - transactional.distinct;
    if (fresh !== undefined && redeliveries > 0) {
      const extraWcu = (transactional.wcuPerRecord * transactional.records - fresh.wcuPerRecord * transactional.distinct) / redeliveries;
      const extraRuns = (transactional.handlerRunsPerRecord * transactional.records - transactional.distinct) / redeliveries;
      lines.push(
        `- transactional, ${percent(rate)}: per redelivery ${fixed(Number(extraWcu.toFixed(3)))} WCU and ${fixed(Number(extraRuns.toFixed(3)))} handler runs ` +
          `(beyond what its distinct records cost at the 0 % rate's WCU per record; target 0 and 0): ${Math.abs(extraWcu) < 0.05 && extraRuns === 0 ? 'met' : 'not met'}`,
      );
    }
  }
  // issue 40: the batch at its round-trip floor, and one worker's throughput beside the hand-written inbox (every rate)
  for (const redeliveryRate of [...new Set(rows.map((row) => row.redeliveryRate))]) {
    const ours = at('transactional', delay, redeliveryRate);
    const floor = at('round-trip floor', delay, redeliveryRate);
    const handWritten = at('hand-written inbox', delay, redeliveryRate);
    if (ours !== undefined && floor !== undefined) {
      const value = ours.p50Ms / floor.p50Ms;
      lines.push(`- transactional, ${delay} ms, ${percent(redeliveryRate)}: p50 ${value.toFixed(2)}× the round-trip floor's (target ≤ 1.1×): ${value <= 1.1 ? 'met' : 'not met'}`);
    }
    if (ours !== undefined && handWritten !== undefined) {
      const value = ours.recordsPerSecond / handWritten.recordsPerSecond;
      lines.push(`- transactional, ${delay} ms, ${percent(redeliveryRate)}: records/s ${value.toFixed(2)}× the hand-written inbox's (target ≥ 0.9×): ${value >= 0.9 ? 'met' : 'not met'}`);
    }
  }
  p50Target('lease', 1);
  p50Target('multi-step', 1);
  p50Target('aggregate', 0.5);
  return lines.join('\n');
}

/** Operation names shortened for the critical-path column. */
const SHORT: Readonly<Record<string, string>> = {
  TransactWriteItems: 'TxWrite',
  TransactGetItems: 'TxGet',
  BatchGetItem: 'BatchGet',
  BatchWriteItem: 'BatchWrite',
  PutItem: 'Put',
  UpdateItem: 'Update',
  DeleteItem: 'Delete',
  GetItem: 'Get',
};

/** A critical path's operations as the report prints them (`BatchGet → TxWrite`). */
export function pathText(operations: readonly string[]): string {
  return operations.length === 0 ? '(no request)' : operations.map((operation) => SHORT[operation] ?? operation).join(' → ');
}

/**
 * The critical-path table: per row, round trips on the critical path p50 and p95, the most frequent path, the
 * modelled latency p50 and p95 and modelled records/s, their ratios to Powertools, and the wall-clock p50 ratio beside.
 */
export function renderCriticalPathTable(rows: readonly LatencyRow[]): string {
  const lines = [
    '| added latency | redeliveries | consumer | round trips p50 | round trips p95 | timing chain p50 / p95 | most frequent critical path (batches) | modelled p50 ms | modelled p95 ms | ' +
      'modelled records/s | modelled p50 vs PT | wall-clock p50 vs PT | modelled records/s vs PT |',
    '|---:|---:|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows) {
    const figures = row.critical;
    if (figures === undefined) continue;
    const pt = referenceOf(rows, row).critical;
    lines.push(
      `| ${row.delayMs} ms | ${percent(row.redeliveryRate)} | ${row.consumer} | ${figures.roundTripsP50} | ${figures.roundTripsP95} | ${figures.timingChainP50} / ${figures.timingChainP95} | ` +
        `${figures.typicalPath} (${figures.typicalPathBatches} of ${figures.batches}) | ${ms(figures.modeledP50Ms)} | ${ms(figures.modeledP95Ms)} | ` +
        `${Math.round(figures.modeledRecordsPerSecond)} | ${pt === undefined ? '—' : ratio(figures.modeledP50Ms, pt.modeledP50Ms)} | ${ratio(row.p50Ms, referenceOf(rows, row).p50Ms)} | ` +
        `${pt === undefined ? '—' : ratio(figures.modeledRecordsPerSecond, pt.modeledRecordsPerSecond)} |`,
    );
  }
  return lines.join('\n');
}

/**
 * The targets of issue 40 at every added latency and redelivery rate, each judged twice: on the round trips on the
 * critical path (p50; the model with one service time for every operation, independent of the machine) and on the
 * modelled latency (p50, this run's service times per operation), with the wall-clock figure beside: the
 * transactional consumer's p50 at most 0.5× Powertools' (the issue's target on records that touch distinct items), at
 * most 1.1× the round-trip floor consumer's (its target on records that share items), and its records/s at least 0.9×
 * the hand-written inbox's (one worker). Rows without critical-path figures are left out.
 */
export function renderModeledTargets(rows: readonly LatencyRow[]): string {
  const lines: string[] = [];
  const find = (consumer: string, delayMs: number, rate: number): LatencyRow | undefined =>
    rows.find((row) => row.consumer === consumer && row.delayMs === delayMs && row.redeliveryRate === rate && row.critical !== undefined);
  const judge = (value: number, bound: number, atMost: boolean): string => ((atMost ? value <= bound : value >= bound) ? 'met' : 'NOT met');
  const p50Line = (row: LatencyRow, reference: LatencyRow, against: string, bound: number, where: string): string => {
    const ours = row.critical as CriticalPathFigures;
    const theirs = reference.critical as CriticalPathFigures;
    const trips = ours.roundTripsP50 / theirs.roundTripsP50;
    const modelled = ours.modeledP50Ms / theirs.modeledP50Ms;
    return (
      `- transactional, ${row.delayMs} ms, ${percent(row.redeliveryRate)}: p50 against ${against} (target ≤ ${bound}×, ${where}): ` +
      `round trips ${ours.roundTripsP50} against ${theirs.roundTripsP50} = ${trips.toFixed(2)}×: ${judge(trips, bound, true)}; ` +
      `modelled ${modelled.toFixed(2)}×: ${judge(modelled, bound, true)}; wall clock ${(row.p50Ms / reference.p50Ms).toFixed(2)}×`
    );
  };
  for (const row of rows) {
    if (row.consumer !== TRANSACTIONAL_NAME || row.critical === undefined) continue;
    const pt = find(POWERTOOLS_NAME, row.delayMs, row.redeliveryRate);
    if (pt !== undefined) lines.push(p50Line(row, pt, "Powertools'", 0.5, 'records on distinct items'));
    const floor = find(FLOOR_NAME, row.delayMs, row.redeliveryRate);
    if (floor !== undefined) lines.push(p50Line(row, floor, "the round-trip floor's", 1.1, 'records sharing items'));
    const handWritten = find(HAND_WRITTEN_NAME, row.delayMs, row.redeliveryRate);
    if (handWritten?.critical !== undefined) {
      const value = row.critical.modeledRecordsPerSecond / handWritten.critical.modeledRecordsPerSecond;
      lines.push(
        `- transactional, ${row.delayMs} ms, ${percent(row.redeliveryRate)}: records/s against the hand-written inbox's (target ≥ 0.9×, one worker): ` +
          `modelled ${value.toFixed(2)}×: ${judge(value, 0.9, false)}; wall clock ${(row.recordsPerSecond / handWritten.recordsPerSecond).toFixed(2)}×`,
      );
    }
  }
  return lines.join('\n');
}
