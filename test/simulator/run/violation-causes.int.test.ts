/**
 * Issue 39 item 3: each planted mistake (test/simulator/fixtures/planted-mistakes) fails with a message naming what the
 * user must change, in the text report (`formatSummary`, what `simulate` prints) and as structured causes in `--json`
 * (`resultJson`, what `simulate --json` writes): the kind, the subscriber, the events, the invocations and the fix.
 * The shared DynamoDB Local; the app is synthesized once. Seeds and counts as planted-mistakes.int.test.ts uses them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, test } from 'vitest';
import type { CauseKind, ViolationCause } from '../../../simulator/check/violation-cause';
import { fixFor } from '../../../simulator/check/violation-cause';
import { synthesize } from '../../../simulator/model/synthesize';
import { formatSummary } from '../../../simulator/report/summary';
import { resultJson, type ViolationJson } from '../../../simulator/run/result-json';
import { loadScenario, type SimulationScenario } from '../../../simulator/run/scenario';
import { runSimulation, type SimulationResult } from '../../../simulator/run/simulation';

const PROJECT = path.resolve(__dirname, '../../..');
const FIXTURE = 'test/simulator/fixtures/planted-mistakes';

let directory: string;
let assembly: string;
let scenario: SimulationScenario;

beforeAll(async () => {
  directory = mkdtempSync(path.join(tmpdir(), 'ief-violation-causes-'));
  assembly = await synthesize({ app: `npx tsx ${FIXTURE}/app.ts`, cwd: PROJECT, outputDirectory: path.join(directory, 'cdk.out') });
  scenario = await loadScenario(`${FIXTURE}/scenario.ts`, PROJECT);
});

afterAll(() => {
  if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
});

function simulate(stack: string, seed: string, count: number, concurrency?: number): Promise<SimulationResult> {
  return runSimulation({
    cwd: PROJECT,
    assemblyDirectory: assembly,
    stacks: [stack],
    scenario,
    count,
    seed,
    dynamoDbEndpoint: inject('dynamoDbEndpoint'),
    ...(concurrency === undefined ? {} : { concurrency }),
  });
}

/** The --json document's violations, as a program reads them from the written file. */
function jsonViolations(result: SimulationResult): ViolationJson[] {
  return (JSON.parse(JSON.stringify(resultJson(result))) as { violations: ViolationJson[] }).violations;
}

/**
 * Asserts the run names `kind` for `subscriber` (undefined: a producer's cause) in both outputs: --json carries it as a
 * structured cause on a violation of `violationKind`, with events and the fix; the text prints `cause: <kind>` and the
 * fix under that violation. Returns the cause.
 */
function expectCause(result: SimulationResult, violationKind: string, kind: CauseKind, subscriber?: string): ViolationCause {
  const violations = jsonViolations(result);
  const carrying = violations.find((violation) => violation.kind === violationKind && violation.subscriber === subscriber && violation.causes?.some((cause) => cause.kind === kind));
  expect(carrying, JSON.stringify(violations, undefined, 1)).toBeDefined();
  const cause = carrying!.causes!.find((candidate) => candidate.kind === kind)!;
  expect(cause.fix).toBe(fixFor(kind));
  expect(cause.eventIds.length).toBeGreaterThan(0);
  if (subscriber !== undefined) expect(cause.subscriber).toBe(subscriber);
  // the text: the violation's line, then its cause line with the fix
  const text = formatSummary(result);
  const line = `[${violationKind}]${subscriber === undefined ? '' : ` ${subscriber}:`} ${carrying!.detail}`;
  expect(text).toContain(line);
  const after = text.slice(text.indexOf(line) + line.length).split('\n').slice(1);
  const causeLines = after.slice(0, after.findIndex((next) => !next.startsWith('      cause: ')));
  expect(causeLines.some((next) => next.startsWith(`      cause: ${kind} (event(s) `) && next.endsWith(`; fix: ${fixFor(kind)}`)), text).toBe(true);
  return cause;
}

describe('each planted mistake names its cause and fix, in text and --json', () => {
  test('Mistaken (seed 1, 12 orders): a random event id per attempt, a lost response retried, a key ignored after a crash', async () => {
    const result = await simulate('Mistaken', '1', 12);

    const twice = expectCause(result, 'dual-write', 'event-id-per-attempt');
    expect(twice.eventIds).toHaveLength(2);
    const retried = expectCause(result, 'effect-count', 'lost-response-retried', 'Notifications');
    expect(retried.invocations.map((invocation) => invocation.role)).toEqual(['applied', 'applied-again']);
    expect(retried.requests.some((request) => request.fault === 'lose-response')).toBe(true);
    const crashed = expectCause(result, 'effect-count', 'redelivery-after-crash', 'Receipts');
    expect(crashed.invocations[1]?.receive).toBeGreaterThan(1);
  });

  test('OwnClient (seed 1, 12 orders): the ledger written with the handler\'s own client', async () => {
    const cause = expectCause(await simulate('OwnClient', '1', 12), 'effect-count', 'write-outside-transaction', 'Billing');
    expect(cause.requests.some((request) => request.operation === 'UpdateItem' && request.tables.some((table) => table.startsWith('OwnClient-Ledger')))).toBe(true);
  });

  test('OutboxWrite (seed 1, 8 orders): a second outbox write instead of tx.emit, named at Billing', async () => {
    const cause = expectCause(await simulate('OutboxWrite', '1', 8), 'effect-count', 'outbox-write-outside-transaction', 'Billing');
    expect(cause.requests.some((request) => request.tables.some((table) => table.startsWith('OutboxWrite-FlowOutboxTable')))).toBe(true);
  });

  test('ShortWindow (seed 1, 8 orders): the overridden deduplication window, its value and the delay it had to cover', async () => {
    const cause = expectCause(await simulate('ShortWindow', '1', 8), 'effect-count', 'deduplication-window-expired', 'Billing');
    expect(cause.setting).toEqual({ name: 'IEF_DEDUPLICATION_WINDOW_SECONDS', value: 60, needed: expect.any(Number) });
    expect(cause.setting!.needed).toBeGreaterThan(60);
  });

  test('ModuleCache (seed 1, 8 orders, concurrency 1): state kept between attempts, the refused attempt and the commit', async () => {
    const cause = expectCause(await simulate('ModuleCache', '1', 8, 1), 'effect-count', 'state-kept-between-attempts', 'Billing');
    expect(cause.invocations.map((invocation) => invocation.role)).toContain('not-applied');
    expect(cause.invocations.at(-1)?.role).toBe('applied');
  });

  test('ProcessingTime (seed 1, 8 orders): the aggregate located by the processing time', async () => {
    expectCause(await simulate('ProcessingTime', '1', 8), 'effect-count', 'aggregate-key-differs', 'Billing');
  });
});
