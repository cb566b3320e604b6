/**
 * One seed, one run, for an app whose handlers read the clocks and wait on the timers besides `Date` and `setTimeout`
 * (the real-time-sources fixture): the producer's event ids carry `performance.now()`, `performance.timeOrigin`,
 * `process.hrtime`, `process.uptime()`, `Intl.DateTimeFormat#format()` without a date, `Date#toLocaleString()` and
 * `process.pid`; Billing bounds its own pre-read with `AbortSignal.timeout(250)` and a 300 ms socket timeout. Before
 * the worker made them virtual, the ids and what followed from them differed between two runs of one seed, the real
 * 250 ms abort beat every held pre-read (all of Billing's events dead-lettered), and the socket timeout left the run
 * waiting 15 minutes without a verdict.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { synthesize } from '../../../simulator/model/synthesize';
import { loadScenario } from '../../../simulator/run/scenario';
import { runSimulation, type SimulationResult } from '../../../simulator/run/simulation';
import { asJson, differingFields } from './replay-kit';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/real-time-sources';
const START_TIME = Date.UTC(2026, 10, 29);

let directory: string;
let assemblyDirectory: string;

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-real-time-sources-'));
  assemblyDirectory = await synthesize({ app: `npx tsx ${FIXTURE}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, 'cdk.out') });
}, 900_000);
afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

/** One run of the seed, as `--json` writes it less wall-clock time. */
async function run(): Promise<{ result: SimulationResult; json: string }> {
  const scenario = await loadScenario(`${FIXTURE}/scenario.ts`, PROJECT);
  const result = await runSimulation({
    cwd: PROJECT,
    assemblyDirectory,
    scenario,
    dynamoDbEndpoint: inject('dynamoDbEndpoint'),
    seed: 'real-time-sources-1',
    startTime: START_TIME,
    // eight orders: an id from each clock
    count: 8,
    concurrency: 4,
    iam: false,
  });
  return { result, json: asJson(result) };
}

describe('replaying a seed of an app reading every clock and bounding its calls with real-time timers', () => {
  test('two runs of one seed give the same result, and the correct app passes', { timeout: 1_800_000 }, async () => {
    const first = await run();
    const billing = first.result.subscribers.find((subscriber) => subscriber.name === 'Billing');
    expect(billing?.deadLettered).toBe(0);
    expect(first.result.violations.map((violation) => violation.kind)).toEqual([]);
    expect(first.result.totalFaults).toBeGreaterThan(0);
    expect(first.result.realTimeEvents.count).toBe(0);
    const second = await run();
    expect(differingFields(JSON.parse(first.json), JSON.parse(second.json)).slice(0, 20)).toEqual([]);
    expect(second.json).toBe(first.json);
  });
});
