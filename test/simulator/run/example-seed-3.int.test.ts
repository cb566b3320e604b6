/**
 * A correct app passes at every seed: the example (the demo's scenario) at seed 3, 6 orders, concurrency 1, at the
 * default fault rates. OrderTracking's first event of order-00001 used to lose all 5 of its receives to faults steered
 * to its batch (the window record's write, the event's claim and its aggregate's later events each had a budget of
 * their own), and was dead-lettered: `unapplied-event` and `aggregate-order` for an app that lost nothing
 * (simulator/faults/fault-steering.ts counts each message's steered failed receives now).
 */
import * as path from 'node:path';
import { beforeAll, describe, expect, inject, test } from 'vitest';
import { loadScenario, type SimulationScenario } from '../../../simulator/run/scenario';
import { runSimulation } from '../../../simulator/run/simulation';
import { runVerdict } from '../../../simulator/run/verdict';
import { exampleAssembly } from '../../support/example-assembly';

const PROJECT = path.resolve(__dirname, '../../..');

let assemblyDirectory: string;
let scenario: SimulationScenario;

beforeAll(async () => {
  assemblyDirectory = await exampleAssembly();
  scenario = await loadScenario('example/simulation/scenario.ts', PROJECT);
});

describe('the example at seed 3, 6 orders, concurrency 1', () => {
  test('passes: no valid event is dead-lettered by steered faults alone', async () => {
    const result = await runSimulation({
      cwd: PROJECT,
      assemblyDirectory,
      scenario,
      dynamoDbEndpoint: inject('dynamoDbEndpoint'),
      count: 6,
      seed: '3',
      concurrency: 1,
      startTime: Date.parse('2026-11-29T00:00:00Z'),
    });

    // OrderTracking met crashes (steered to it) and still applied every step it was sent; nothing is violated: 6 orders
    // (3 ordered steps) are too few to meet each of its failure paths, which leaves the run NOT PROVEN, not VIOLATED
    const tracking = result.subscribers.find((subscriber) => subscriber.name === 'OrderTracking');
    expect(tracking?.failurePaths['crash-before-commit']).toBeGreaterThan(0);
    expect(tracking?.failurePaths.redelivery).toBeGreaterThan(0);
    expect(tracking?.deadLettered).toBe(0);
    expect(result.violations).toEqual([]);
    expect(runVerdict(result)).toBe('NOT PROVEN');
    expect(result.failurePathsNotMet.map(({ subscriber }) => subscriber)).toContain('OrderTracking');
  });
});
