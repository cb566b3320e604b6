/**
 * One seed, one run, for a multi-stack app whose subscribers call outside services over HTTP (issue 39): the
 * http-subscribers fixture (a flow stack; a lease subscriber charging with `fetch`, a multi-step subscriber calling the
 * carrier with node:http and `fetch`, an aggregate subscriber, each in its own stack; one local HTTP stub the scenario
 * starts). One seed run twice at concurrency 1 and twice at 4 gives the same `--json` (wall-clock time aside), and the
 * stub gets the same calls (not yet in the same order: calls made at once reach it in the order their connections
 * deliver them). The machine's load must not matter: the comparison was
 * also run beside two busy loops (see the commit that added this file); the test itself does not depend on load.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { synthesize } from '../../../simulator/model/synthesize';
import { loadScenario } from '../../../simulator/run/scenario';
import { runSimulation, type SimulationResult } from '../../../simulator/run/simulation';
import { useStubPort } from '../../support/use-stub-port';
import { currentHttpStub, listeningHttpStub, type StubState } from '../fixtures/http-subscribers/stub';
import { asJson, differingFields } from './replay-kit';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/http-subscribers';

let directory: string;
let assemblyDirectory: string;

// this file's own stub port (STUB_PORT), set before the synth bakes it into the functions' STUB_URL
useStubPort();

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-http-subscribers-'));
  assemblyDirectory = await synthesize({ app: `npx tsx ${FIXTURE}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, 'cdk.out') });
}, 900_000);
afterAll(async () => {
  await currentHttpStub()?.close();
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

const START_TIME = Date.UTC(2026, 10, 30);

/** One run of the seed; its `--json` less wall-clock time, and what the stub was asked, in order. */
async function run(concurrency: number): Promise<{ result: SimulationResult; json: string; calls: string }> {
  // a new scenario module, so a new, empty stub
  const scenario = await loadScenario(`${FIXTURE}/scenario.ts`, PROJECT);
  // a stub that cannot listen fails here, naming its port
  await listeningHttpStub();
  const result = await runSimulation({
    cwd: PROJECT,
    assemblyDirectory,
    scenario,
    dynamoDbEndpoint: inject('dynamoDbEndpoint'),
    seed: 'http-3',
    // one start for both runs, as a replay gives it (the result names its start since --json carries what replays it)
    startTime: START_TIME,
    count: 4,
    concurrency,
    // IAM evaluation decides nothing the replay is about (it is seeded as the rest), and is the run's largest cost
    iam: false,
  });
  const stub = currentHttpStub();
  if (stub === undefined) throw new Error('the scenario started no stub');
  return { result, json: asJson(result), calls: JSON.stringify(callsOf(stub.state), null, 1) };
}

/**
 * What the stub was asked, per route, in a fixed order, without the ids the stub numbers in the order calls reach it
 * (`CH-<n>`, `LBL-<n>`). The order of two calls made at once (two records of one batch, or workers of one scheduler
 * turn) is the order their connections delivered them: the seed does not fix it yet (see the commit that wrote this).
 */
function callsOf(state: StubState): Record<string, string[]> {
  const sorted = (records: readonly object[]): string[] =>
    records.map((record) => JSON.stringify(Object.fromEntries(Object.entries(record).filter(([field]) => field !== 'chargeId' && field !== 'labelId')))).sort();
  return { charges: sorted(state.charges), labels: sorted(state.labels), pickups: sorted(state.pickups) };
}

describe('replaying a seed of an app whose subscribers call HTTP services', () => {
  test.each([1, 4])('two runs of one seed at concurrency %i give the same result and the same calls', { timeout: 1_800_000 }, async (concurrency) => {
    const first = await run(concurrency);
    const second = await run(concurrency);

    // the run did what it should, met faults, and called the stub: there is something to replay
    expect(first.result.violations).toEqual([]);
    expect(first.result.failurePathsNotMet).toEqual([]);
    // nothing outside the seed acted on a worker between steps: the seed replays the run
    expect(first.result.realTimeEvents).toEqual({ count: 0, first: [] });
    expect(first.result.totalFaults).toBeGreaterThan(0);
    const calls = JSON.parse(first.calls) as Record<string, string[]>;
    expect([calls.charges!.length, calls.labels!.length, calls.pickups!.length].every((count) => count >= 4)).toBe(true);
    // the first differing fields name what to look for; the whole text is the assertion
    expect(differingFields(JSON.parse(first.json), JSON.parse(second.json)).slice(0, 20)).toEqual([]);
    expect(second.json).toBe(first.json);
    expect(differingFields(JSON.parse(first.calls), JSON.parse(second.calls)).slice(0, 20)).toEqual([]);
  });
});
