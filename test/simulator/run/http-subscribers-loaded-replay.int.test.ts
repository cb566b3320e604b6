/**
 * One seed, one run, on a loaded machine, for a multi-stack app whose subscribers call an outside HTTP service (the
 * http-subscribers fixture: a lease subscriber charging with `fetch`, a multi-step subscriber calling the carrier with
 * node:http then `fetch`, an aggregate subscriber; one local stub, in the simulator's process, with Node's default
 * keep-alive timeout). Two runs of one seed at concurrency 4, both beside two busy loops, give the same `--json`
 * (wall-clock time aside). On a loaded machine the real time between two steps of a worker often passes the stub's
 * keep-alive timeout, so the stub closes idle connections while the run goes on: a replay must not depend on when.
 * http-subscribers-replay.int.test.ts compares the runs on a machine as loaded as it happens to be, and the stub's calls.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { synthesize } from '../../../simulator/model/synthesize';
import { loadScenario } from '../../../simulator/run/scenario';
import { runSimulation, type SimulationResult } from '../../../simulator/run/simulation';
import { useStubPort } from '../../support/use-stub-port';
import { currentHttpStub, listeningHttpStub } from '../fixtures/http-subscribers/stub';
import { asJson, busyLoops, differingFields } from './replay-kit';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/http-subscribers';
const START_TIME = Date.UTC(2026, 10, 30);

let directory: string;
let assemblyDirectory: string;

// this file's own stub port (STUB_PORT), set before the synth bakes it into the functions' STUB_URL
useStubPort();

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-http-loaded-'));
  assemblyDirectory = await synthesize({ app: `npx tsx ${FIXTURE}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, 'cdk.out') });
}, 900_000);
afterAll(async () => {
  await currentHttpStub()?.close();
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

/** One run of the seed at concurrency 4, with a new, empty stub (a new scenario module). */
async function run(): Promise<SimulationResult> {
  const scenario = await loadScenario(`${FIXTURE}/scenario.ts`, PROJECT);
  // a stub that cannot listen fails here, naming its port
  await listeningHttpStub();
  return await runSimulation({
    cwd: PROJECT,
    assemblyDirectory,
    scenario,
    dynamoDbEndpoint: inject('dynamoDbEndpoint'),
    seed: 'http-loaded-1',
    startTime: START_TIME,
    count: 6,
    concurrency: 4,
    // IAM evaluation decides nothing the replay is about (it is seeded as the rest), and is the run's largest cost
    iam: false,
  });
}

describe('replaying a seed of an app whose subscribers call HTTP services, on a loaded machine', () => {
  test('two runs of one seed beside two busy loops, at concurrency 4, give the same result', { timeout: 1_800_000 }, async () => {
    const load = busyLoops(1_200);
    try {
      const first = await run();
      const second = await run();
      // the run did what it should, met faults, and called the stub: there is something to replay
      expect(first.violations).toEqual([]);
      expect(first.failurePathsNotMet).toEqual([]);
      expect(first.totalFaults).toBeGreaterThan(0);
      const stub = currentHttpStub();
      expect(stub?.state.charges.length ?? 0).toBeGreaterThanOrEqual(6);
      // the first differing fields name what to look for; the whole text is the assertion
      expect(differingFields(JSON.parse(asJson(first)), JSON.parse(asJson(second))).slice(0, 20)).toEqual([]);
      expect(asJson(second)).toBe(asJson(first));
    } finally {
      load.stop();
    }
  });
});
