/**
 * An HTTP effect made outside the lease or outside a step names its cause (new-user trial NU15-1): the
 * http-outside-lease fixture's `Outside` stack, whose lease subscriber (Receipts) and multi-step subscriber
 * (Settlement) POST for every record before handing the batch to the runtime's consumer, fails each count too high
 * with `effect-outside-lease` / `effect-outside-step`, naming the call, in the text report and in `--json`; its
 * `Correct` stack, which calls only in `handle` and in the steps, ends in OK. The shared DynamoDB Local; the app is
 * synthesized once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import { fixFor, type CauseKind } from '../../../simulator/check/violation-cause';
import { synthesize } from '../../../simulator/model/synthesize';
import { formatSummary } from '../../../simulator/report/summary';
import { resultJson, type ViolationJson } from '../../../simulator/run/result-json';
import { loadScenario } from '../../../simulator/run/scenario';
import { runSimulation, type SimulationResult } from '../../../simulator/run/simulation';
import { useStubPort } from '../../support/use-stub-port';
import { currentProviderStub, listeningProviderStub } from '../fixtures/http-outside-lease/stub';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/http-outside-lease';

let directory: string;
let assembly: string;

// this file's own stub port (STUB_PORT), set before the synth bakes it into the functions' STUB_URL
const stubPort = useStubPort();

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-http-outside-lease-'));
  assembly = await synthesize({ app: `npx tsx ${FIXTURE}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, 'cdk.out') });
}, 900_000);
afterAll(async () => {
  await currentProviderStub()?.close();
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

async function simulate(stack: string): Promise<SimulationResult> {
  // a new scenario module, so a new, empty stub
  const scenario = await loadScenario(`${FIXTURE}/scenario.ts`, PROJECT);
  // a stub that cannot listen fails here, naming its port
  await listeningProviderStub();
  return runSimulation({ cwd: PROJECT, assemblyDirectory: assembly, stacks: [stack], scenario, count: 6, seed: '1', dynamoDbEndpoint: inject('dynamoDbEndpoint'), iam: false });
}

/** The effect-count violations of `subscriber` in `--json`, each with its causes. */
function countsAt(result: SimulationResult, subscriber: string): ViolationJson[] {
  return (resultJson(result).violations as ViolationJson[]).filter((violation) => violation.kind === 'effect-count' && 'subscriber' in violation && violation.subscriber === subscriber);
}

describe('an HTTP effect made outside the lease or a step (seed 1, 6 orders)', () => {
  test('the Outside stack: every count too high at Receipts and Settlement names the call made outside, in text and --json', { timeout: 1_800_000 }, async () => {
    const result = await simulate('Outside');
    const text = formatSummary(result);

    for (const [subscriber, kind, route] of [
      ['Receipts', 'effect-outside-lease', '/receipts'],
      ['Settlement', 'effect-outside-step', '/settle'],
    ] as const satisfies readonly (readonly [string, CauseKind, string])[]) {
      const violations = countsAt(result, subscriber).filter((violation) => violation.detail.includes(`${route} of `));
      expect(violations.length, text).toBeGreaterThan(0);
      for (const violation of violations) {
        const [cause] = violation.causes ?? [];
        expect(cause, JSON.stringify(violation)).toMatchObject({ kind, subscriber, fix: fixFor(kind), requests: [] });
        expect(cause!.calls).toEqual([{ method: 'POST', host: `127.0.0.1:${stubPort()}`, path: route, count: expect.any(Number), when: 'before-claim' }]);
        expect(cause!.invocations.length).toBeGreaterThan(0);
        expect(violation.detail).toMatch(new RegExp(`POST 127\\.0\\.0\\.1:${stubPort()}${route} was called ${kind === 'effect-outside-lease' ? 'outside the lease' : 'outside any step'} by invocation #\\d+ \\(receive \\d+, at \\+\\d+ s\\)`));
      }
      expect(text).toContain(`cause: ${kind} (event(s) `);
      expect(text).toContain(`call(s) POST 127.0.0.1:${stubPort()}${route}); fix: ${fixFor(kind)}`);
    }
  });

  test('the Correct stack, calling only inside the lease and the steps, ends in OK: no call is named', { timeout: 1_800_000 }, async () => {
    const result = await simulate('Correct');

    expect(result.violations).toEqual([]);
    expect(result.failurePathsNotMet).toEqual([]);
    // the stub was called: the calls were heard and placed inside the leases
    expect(currentProviderStub()!.calls.length).toBeGreaterThanOrEqual(18);
  });
});
