/**
 * The simulated operator on the example app: a wrong decision must show as a violation, never pass.
 */
import * as path from 'node:path';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import type { OperatorDecision } from '../../../simulator/run/operator';
import { loadScenario, type SimulationScenario } from '../../../simulator/run/scenario';
import { runSimulation, type SimulationResult } from '../../../simulator/run/simulation';
import { exampleAssembly } from '../../support/example-assembly';

const PROJECT = path.resolve(__dirname, '../../..');
const SEED = 'ci-7';
const RATES = { duplicate: 0, lostResponse: 0.15, throttle: 0, crash: 0.1 };

let assemblyDirectory: string;
let scenario: SimulationScenario;

beforeAll(async () => {
  assemblyDirectory = await exampleAssembly();
  scenario = await loadScenario('example/simulation/scenario.ts', PROJECT);
});

function simulate(operator: Record<string, OperatorDecision>): Promise<SimulationResult> {
  return runSimulation({ cwd: PROJECT, assemblyDirectory, scenario: { ...scenario, operator }, dynamoDbEndpoint: inject('dynamoDbEndpoint'), count: 8, seed: SEED, concurrency: 2, rates: RATES });
}

/** The example's decision for `name`, with its answer turned round. */
function lying(name: string): OperatorDecision {
  const truthful = scenario.operator![name]!;
  return async (blocked) => {
    const truth = await truthful(blocked);
    return truth.status === 'SUCCESS' ? { status: 'TRY_AGAIN', reason: 'lie' } : { status: 'SUCCESS', context: { invoiceId: 'made-up' }, reason: 'lie' };
  };
}

describe('the simulated operator', () => {
  test('the example operator settles every blocked step with no violation', async () => {
    const result = await simulate(scenario.operator!);
    expect(result.violations).toEqual([]);
    expect(result.failurePathsNotMet).toEqual([]);
    expect((result.operator?.resolvedSuccess ?? 0) + (result.operator?.resolvedTryAgain ?? 0)).toBeGreaterThan(0);
  });

  test('an operator answering the opposite of the truth is caught as an effect-count violation', async () => {
    const result = await simulate({ Invoicing: lying('Invoicing'), Notifications: lying('Notifications') });
    expect((result.operator?.resolvedSuccess ?? 0) + (result.operator?.resolvedTryAgain ?? 0)).toBeGreaterThan(0);
    expect(result.violations.filter((violation) => violation.kind === 'effect-count').length).toBeGreaterThan(0);
  });
});
