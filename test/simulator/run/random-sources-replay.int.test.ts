/**
 * One seed, one run, for an app whose producer draws its event ids from node:crypto's and Web Crypto's random sources
 * (the random-sources fixture: randomBytes, its callback form, randomFillSync, randomFill, randomInt, getRandomValues of
 * node:crypto, webcrypto and globalThis.crypto). Before the worker seeded them, two runs of one seed differed in the
 * ids and in what followed from them (faults, conflicts, deliveries: 29 fields of `--json`).
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
const FIXTURE = 'test/simulator/fixtures/random-sources';
const START_TIME = Date.UTC(2026, 10, 30);

let directory: string;
let assemblyDirectory: string;

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-random-sources-'));
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
    seed: 'random-sources-1',
    startTime: START_TIME,
    // eight orders: one id from each source
    count: 8,
    concurrency: 4,
    iam: false,
  });
  return { result, json: asJson(result) };
}

describe('replaying a seed of an app drawing ids from every random source', () => {
  test('two runs of one seed give the same result', { timeout: 1_800_000 }, async () => {
    const first = await run();
    const second = await run();
    // the run met faults (what a different id changed before)
    expect(first.result.totalFaults).toBeGreaterThan(0);
    expect(differingFields(JSON.parse(first.json), JSON.parse(second.json)).slice(0, 20)).toEqual([]);
    expect(second.json).toBe(first.json);
  });
});
