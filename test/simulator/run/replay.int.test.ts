/**
 * One seed, one run, at any concurrency: the example app (its synthesized templates and real bundled functions) run
 * 20 times with one seed at concurrency 4 gives the same result every time, figure for figure. A small scenario (1
 * order, whose events reach the five subscribers; high fault rates so that copies of messages run concurrently; IAM not
 * evaluated) keeps the 20 runs as short as they can be. Most of a run is building the local flow (tables, queues,
 * execution environments): at load average 13-17, 4 to 7 s of a 6 to 9 s run; a second order added about 0.5 s a run.
 */
import * as path from 'node:path';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import { loadScenario, type SimulationScenario } from '../../../simulator/run/scenario';
import { runSimulation, type SimulationResult } from '../../../simulator/run/simulation';
import { exampleAssembly } from '../../support/example-assembly';
import { asJson, busyLoops, differingFields } from './replay-kit';

const PROJECT = path.resolve(__dirname, '../../..');
const RUNS = 20;
/**
 * Every run starts its clock here (2026-11-29T00:00:00Z): a run's times are its start plus what the run moved its
 * clock, and the result names some (a blocked event's dead letter: its lease's expiry, blocked since). Started at the
 * real time, two runs of one seed took the same course but named times that differed by the real time between their
 * starts (CI of stop 47: 33.5 s, one run's length).
 */
const START_TIME = Date.UTC(2026, 10, 29);

let assemblyDirectory: string;
let scenario: SimulationScenario;

beforeAll(async () => {
  assemblyDirectory = await exampleAssembly();
  scenario = await loadScenario('example/simulation/scenario.ts', PROJECT);
});

describe('replaying a seed', () => {
  test(`${RUNS} runs of one seed at concurrency 4 give identical results`, { timeout: 1_800_000 }, async () => {
    const results: string[] = [];
    for (let run = 0; run < RUNS; run += 1) {
      const result = await runSimulation({
        cwd: PROJECT,
        assemblyDirectory,
        scenario,
        dynamoDbEndpoint: inject('dynamoDbEndpoint'),
        seed: 'replay-3',
        startTime: START_TIME,
        count: 1,
        iam: false,
        concurrency: 4,
        rates: { duplicate: 0.4, lostResponse: 0.1, throttle: 0.1, crash: 0.05, relayFailure: 0.1, snsDeliveryFailure: 0.1 },
      });
      results.push(asJson(result));
    }

    // the runs were concurrent (copies of one message in two batches at once) and met faults ...
    const first = JSON.parse(results[0]!) as SimulationResult;
    expect(first.totalFaults).toBeGreaterThan(0);
    expect(first.replayable).toBe(true);
    expect(first.subscribers.some((subscriber) => (subscriber.faultsByKind['concurrent-receive'] ?? 0) > 0)).toBe(true);
    // ... and every run is the first, figure for figure
    const differing = results.map((json, index) => ({ index, json })).filter(({ json }) => json !== results[0]);
    // each differing run with its first differing fields: what to look for when a run does not replay
    expect(differing.map(({ index, json }) => ({ run: index, fields: differingFields(first, JSON.parse(json)).slice(0, 20) }))).toEqual([]);
  });
});

/**
 * Measured with the remaining time made the scheduler's (2026-11-29, shared 2-core machine, load average 25-35): the
 * loaded test passed at both concurrencies in 1118 s (four runs of 3 commands; the busy loops stop themselves after
 * 900 s, so its last minutes ran without them). The busy loops: replay-kit.ts.
 */
describe('replaying a seed on a loaded machine', () => {
  test('two runs of one seed beside two busy loops, at concurrency 4 and 1, give identical results', { timeout: 1_800_000 }, async () => {
    const load = busyLoops(900);
    try {
      for (const concurrency of [4, 1]) {
        const results: string[] = [];
        for (let run = 0; run < 2; run += 1) {
          const result = await runSimulation({
            cwd: PROJECT,
            assemblyDirectory,
            scenario,
            dynamoDbEndpoint: inject('dynamoDbEndpoint'),
            seed: 'loaded-7',
            startTime: START_TIME,
            count: 3,
            concurrency,
            // IAM evaluation is the run's largest cost and decides nothing the replay is about (it is seeded as the rest)
            iam: false,
          });
          results.push(asJson(result));
        }
        const first = JSON.parse(results[0]!) as SimulationResult;
        // the run met faults: there is something to replay
        expect(first.totalFaults).toBeGreaterThan(0);
        // the first differing fields name what to look for; the whole text is the assertion
        expect(differingFields(first, JSON.parse(results[1]!)).slice(0, 20), `concurrency ${concurrency}`).toEqual([]);
        expect(results[1], `concurrency ${concurrency}`).toBe(results[0]);
      }
    } finally {
      load.stop();
    }
  });
});
